package results

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tempora-dev/tempora/record"
)

// IrregularSuite is the suite of irregular data (experiments,
// suite_irregular.go), whose settings are missing-rate / length-spread /
// alignment / full-windows / padding.
const IrregularSuite = "irregular"

// IrregularMetrics are the columns of IrregularFigure: features,
// timesteps, windows (the average window) and the feature's ordering.
var IrregularMetrics = []SweepMetric{
	{Title: "features", Power: "feature-power", FDR: "feature-fdr"},
	{Title: "timesteps", Power: "timestep-power", FDR: "timestep-fdr"},
	{Title: "windows (average window)", Power: "avg-window-power", FDR: "avg-window-fdr"},
	{Title: "feature ordering", Power: "ordering-power", FDR: "ordering-fdr"},
}

// params returns a group's parameters as a map (lookup only).
func params(g *Group) map[string]string {
	p := map[string]string{}
	for _, q := range g.Params {
		p[q.Key] = q.Value
	}
	return p
}

// IrregularFigure draws method's power and FDR against the missing rate in
// the irregular suite's sweep (padding=nan, full-windows=false), one line
// per length spread and alignment ("spread 2, end"). It returns an error
// when the groups hold no such settings.
func IrregularFigure(groups []Group, method string) (*Figure, error) {
	var derived []Group
	var lines []string
	for _, g := range groups {
		p := params(&g)
		if g.Suite != IrregularSuite || g.Method != method || p["padding"] != "nan" || p["full-windows"] != "false" {
			continue
		}
		name := "spread " + p["length-spread"] + ", " + p["alignment"]
		if !slices.Contains(lines, name) {
			lines = append(lines, name)
		}
		d := g
		d.Suite, d.Method, d.Params = IrregularSuite+" ("+method+")", name, []record.Param{{Key: "missing-rate", Value: p["missing-rate"]}}
		derived = append(derived, d)
	}
	if len(derived) == 0 {
		return nil, fmt.Errorf("results: no %s settings with padding=nan for %s", IrregularSuite, method)
	}
	title := fmt.Sprintf("%s: %s's power and FDR versus the missing rate (MCAR), by length spread and alignment", IrregularSuite, method)
	return sweepFigure(derived, derived[0].Suite, lines, "missing-rate", IrregularMetrics, title)
}

// PaddingMetrics are the bars of PaddingFigure: the FDRs that padding with
// zeros inflates, then the powers.
var PaddingMetrics = []struct{ Name, Label string }{
	{"feature-fdr", "feature FDR"},
	{"timestep-fdr", "timestep FDR"},
	{"ordering-fdr", "ordering FDR"},
	{"window-ordering-fdr", "window-ordering FDR"},
	{"feature-power", "feature power"},
	{"timestep-power", "timestep power"},
}

// PaddingFigure draws, for each alignment of the irregular suite's padding
// comparison (full-windows=true), method's metrics on the same problems
// with NaN padding (the data as it is) and padded with zeros for a model
// that masks all-zero timesteps: one panel per alignment, a pair of bars
// per metric (mean over models, with the 95% confidence interval of the
// mean), and α dotted. It returns an error when the groups hold no such
// pair of settings.
func PaddingFigure(groups []Group, method string) (*Figure, error) {
	type pair struct {
		align    string
		nan, zer *Group
	}
	var pairs []pair
	for i := range groups {
		g := &groups[i]
		p := params(g)
		if g.Suite != IrregularSuite || g.Method != method || p["full-windows"] != "true" {
			continue
		}
		k := slices.IndexFunc(pairs, func(q pair) bool { return q.align == p["alignment"] })
		if k < 0 {
			pairs = append(pairs, pair{align: p["alignment"]})
			k = len(pairs) - 1
		}
		switch p["padding"] {
		case "nan":
			pairs[k].nan = g
		case "zeros":
			pairs[k].zer = g
		}
	}
	pairs = slices.DeleteFunc(pairs, func(q pair) bool { return q.nan == nil || q.zer == nil })
	// start before end, as the suite lists them.
	slices.SortStableFunc(pairs, func(a, b pair) int { return strings.Compare(b.align, a.align) })
	if len(pairs) == 0 {
		return nil, fmt.Errorf("results: no %s padding comparison for %s", IrregularSuite, method)
	}
	var plots [][]*plot.Plot
	models := 0
	for _, q := range pairs {
		p := plot.New()
		p.Title.Text = "alignment " + q.align
		p.Title.TextStyle.Font.Size = 10
		// Room above 1 for the legend.
		p.Y.Min, p.Y.Max = 0, 1.3
		p.Y.Label.Text = "mean over models"
		p.Y.Label.TextStyle.Font.Size = 9
		p.Y.Tick.Label.Font.Size = 8
		p.X.Tick.Label.Font.Size = 7
		p.Add(plotter.NewGrid())
		w := vg.Points(11)
		for b, g := range []*Group{q.nan, q.zer} {
			vals := make(plotter.Values, len(PaddingMetrics))
			var errs []float64
			for k, m := range PaddingMetrics {
				s, ok := g.Metric(m.Name)
				if ok && s.N > 0 {
					vals[k] = s.Mean
					_, hi := s.CI95()
					if math.IsNaN(hi) {
						hi = s.Mean
					}
					hi = min(hi, 1)
					errs = append(errs, hi-s.Mean)
					models = max(models, s.N)
				} else {
					errs = append(errs, 0)
				}
			}
			bars, err := plotter.NewBarChart(vals, w)
			if err != nil {
				return nil, err
			}
			bars.Color = lineColor(b)
			bars.LineStyle.Width = 0
			bars.Offset = vg.Length(2*b-1) * w / 2
			p.Add(bars)
			eb, err := plotter.NewYErrorBars(barErrors{vals: vals, errs: errs})
			if err != nil {
				return nil, err
			}
			eb.Color = alphaGray
			p.Add(offsetErrorBars{eb, bars.Offset})
			if len(plots) == 0 {
				p.Legend.Add([]string{"NaN padding (the data as it is)", "zero padding, all-zero timesteps masked"}[b], bars)
			}
		}
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: Alpha}, {X: float64(len(PaddingMetrics)) - 0.5, Y: Alpha}})
		if err != nil {
			return nil, err
		}
		l.Color = alphaGray
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(2.5)}
		p.Add(l)
		var labels []string
		for _, m := range PaddingMetrics {
			labels = append(labels, m.Label)
		}
		p.NominalX(labels...)
		p.Legend.Top, p.Legend.Left = true, true
		p.Legend.TextStyle.Font.Size = 8
		plots = append(plots, []*plot.Plot{p})
	}
	title := fmt.Sprintf("%s: %s on the same problems, padded with NaN and with zeros", IrregularSuite, method)
	sub := fmt.Sprintf("bars: mean over %d models; whiskers: upper 95%% CI of the mean; dotted: α = %g", models, Alpha)
	const capH = 0.55 * vg.Inch
	f := &Figure{Width: 7.5 * vg.Inch, Height: vg.Length(len(plots))*2.8*vg.Inch + capH}
	f.draw = func(c draw.Canvas) {
		caption(c, title, 12, c.Max.Y-0.08*vg.Inch)
		caption(c, sub, 9, c.Max.Y-0.32*vg.Inch)
		body := draw.Crop(c, 0, 0, 0, -capH)
		tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: 0.15 * vg.Inch, PadLeft: 0.05 * vg.Inch,
			PadRight: 0.15 * vg.Inch, PadBottom: 0.05 * vg.Inch}
		canvases := plot.Align(plots, tiles, body)
		for r := range plots {
			plots[r][0].Draw(canvases[r][0])
		}
	}
	return f, nil
}

// barErrors adapts bar heights and upper errors to plotter.NewYErrorBars,
// at x = 0, 1, … as the bar chart places them.
type barErrors struct {
	vals plotter.Values
	errs []float64
}

func (b barErrors) Len() int                        { return len(b.vals) }
func (b barErrors) XY(i int) (float64, float64)     { return float64(i), b.vals[i] }
func (b barErrors) YError(i int) (float64, float64) { return 0, b.errs[i] }

// offsetErrorBars draws error bars shifted by the bar chart's offset.
type offsetErrorBars struct {
	*plotter.YErrorBars
	offset vg.Length
}

func (o offsetErrorBars) Plot(c draw.Canvas, p *plot.Plot) {
	c.Rectangle.Min.X += o.offset
	c.Rectangle.Max.X += o.offset
	o.YErrorBars.Plot(c, p)
}
