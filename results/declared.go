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
	"github.com/tempora-dev/tempora/record/report"
)

// The figures a suite declares (report.Suite): lines against a swept
// parameter (DeclaredSweep) and groups of bars (DeclaredBars), drawn from
// the groups the declaration selects by method and parameters.

// matches reports whether g has every parameter of where.
func matches(g *Group, where []record.Param) bool {
	for _, p := range where {
		if v, ok := g.Param(p.Key); !ok || v != p.Value {
			return false
		}
	}
	return true
}

// lineLabel returns label with every "{key}" replaced by g's value of
// parameter key, and false when g lacks one of them.
func lineLabel(label string, g *Group) (string, bool) {
	var b strings.Builder
	for {
		i := strings.IndexByte(label, '{')
		j := strings.IndexByte(label[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.WriteString(label)
			return b.String(), true
		}
		v, ok := g.Param(label[i+1 : i+j])
		if !ok {
			return "", false
		}
		b.WriteString(label[:i])
		b.WriteString(v)
		label = label[i+j+1:]
	}
}

// DeclaredSweep draws the sweep figure f of suite (report.Sweep) with
// SweepFigure: one line per line of f (a line whose label has
// placeholders, one per value found, in the order of groups), one point
// per value of f.X, one column per column of f. It returns an error when
// no group of the suite matches a line, or when two groups give the same
// line the same metric at one value.
func DeclaredSweep(groups []Group, suite string, f report.Sweep) (*Figure, error) {
	type point struct{ line, x string }
	var derived []Group
	var labels []string
	index := map[point]int{} // lookup only; never iterated
	for _, l := range f.Lines {
		for i := range groups {
			g := &groups[i]
			if g.Suite != suite || g.Method != l.Method || !matches(g, f.Where) || !matches(g, l.Where) {
				continue
			}
			x, ok := g.Param(f.X)
			if !ok {
				continue
			}
			label, ok := lineLabel(l.Label, g)
			if !ok {
				continue
			}
			if !slices.Contains(labels, label) {
				labels = append(labels, label)
			}
			k, ok := index[point{label, x}]
			if !ok {
				k = len(derived)
				index[point{label, x}] = k
				derived = append(derived, Group{Suite: suite, Params: []record.Param{{Key: f.X, Value: x}}, Method: label})
			}
			for c, col := range f.Columns {
				if !matches(g, col.Where) {
					continue
				}
				for _, m := range [][2]string{{col.Power, columnMetric(c, col.Power)}, {col.FDR, columnMetric(c, col.FDR)}} {
					s, ok := g.Metric(m[0])
					if !ok {
						continue
					}
					if _, dup := derived[k].Metric(m[1]); dup {
						return nil, fmt.Errorf("results: figure %s: two settings give %s its %s at %s=%s (%s among them)", f.Name, label, m[0], f.X, x, g.Setting())
					}
					derived[k].Metrics = append(derived[k].Metrics, MetricSummary{Name: m[1], Summary: s})
				}
			}
		}
	}
	if len(derived) == 0 {
		return nil, fmt.Errorf("results: figure %s: no settings of %s to draw", f.Name, suite)
	}
	metrics := make([]SweepMetric, len(f.Columns))
	for c, col := range f.Columns {
		metrics[c] = SweepMetric{Title: col.Title, Power: columnMetric(c, col.Power), FDR: columnMetric(c, col.FDR)}
	}
	return sweepFigure(derived, suite, labels, f.X, metrics, f.Title)
}

// columnMetric names metric in column c of a declared sweep's groups.
func columnMetric(c int, metric string) string { return fmt.Sprintf("%d/%s", c, metric) }

// DeclaredBars draws the bar figure f of suite (report.Bars): one panel
// per panel of f that has a group for each of its bars, in it a group of
// bars per metric (mean over models, with the upper 95% confidence bound
// of the mean as a whisker) and α dotted. It returns an error when no
// panel can be drawn, or when two groups fit one bar.
func DeclaredBars(groups []Group, suite string, f report.Bars) (*Figure, error) {
	var panels []report.Panel
	var bars [][]*Group
	for _, pn := range f.Panels {
		gs := make([]*Group, len(f.Bars))
		complete := true
		for b, bar := range f.Bars {
			for i := range groups {
				g := &groups[i]
				if g.Suite != suite || g.Method != bar.Method || !matches(g, f.Where) || !matches(g, pn.Where) || !matches(g, bar.Where) {
					continue
				}
				if gs[b] != nil {
					return nil, fmt.Errorf("results: figure %s: settings %s and %s both fit bar %q of panel %q", f.Name, gs[b].Setting(), g.Setting(), bar.Label, pn.Title)
				}
				gs[b] = g
			}
			complete = complete && gs[b] != nil
		}
		if complete {
			panels = append(panels, pn)
			bars = append(bars, gs)
		}
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("results: figure %s: no settings of %s to draw", f.Name, suite)
	}
	var plots [][]*plot.Plot
	models := 0
	for k, pn := range panels {
		p, n, err := barPanel(pn.Title, bars[k], f, len(plots) == 0)
		if err != nil {
			return nil, err
		}
		models = max(models, n)
		plots = append(plots, []*plot.Plot{p})
	}
	sub := fmt.Sprintf("bars: mean over %d models; whiskers: upper 95%% CI of the mean; dotted: α = %g", models, Alpha)
	const capH = 0.55 * vg.Inch
	fig := &Figure{Width: 7.5 * vg.Inch, Height: vg.Length(len(plots))*2.8*vg.Inch + capH}
	fig.draw = func(c draw.Canvas) {
		caption(c, f.Title, 12, c.Max.Y-0.08*vg.Inch)
		caption(c, sub, 9, c.Max.Y-0.32*vg.Inch)
		body := draw.Crop(c, 0, 0, 0, -capH)
		tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: 0.15 * vg.Inch, PadLeft: 0.05 * vg.Inch,
			PadRight: 0.15 * vg.Inch, PadBottom: 0.05 * vg.Inch}
		canvases := plot.Align(plots, tiles, body)
		for r := range plots {
			plots[r][0].Draw(canvases[r][0])
		}
	}
	return fig, nil
}

// barPanel draws one panel of a bar figure: for each metric of f a group
// of bars, one per group of gs (f's bars, in order), with the legend when
// legend is set. It returns the panel and the largest number of models of
// a bar.
func barPanel(title string, gs []*Group, f report.Bars, legend bool) (*plot.Plot, int, error) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 10
	// Room above 1 for the legend.
	p.Y.Min, p.Y.Max = 0, 1.3
	p.Y.Label.Text = "mean over models"
	p.Y.Label.TextStyle.Font.Size = 9
	p.Y.Tick.Label.Font.Size = 8
	p.X.Tick.Label.Font.Size = 7
	p.Add(plotter.NewGrid())
	w := vg.Points(11)
	models := 0
	for b, g := range gs {
		vals := make(plotter.Values, len(f.Metrics))
		var errs []float64
		for k, m := range f.Metrics {
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
			return nil, 0, err
		}
		bars.Color = lineColor(b)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(2*b-(len(gs)-1)) * w / 2
		p.Add(bars)
		eb, err := plotter.NewYErrorBars(barErrors{vals: vals, errs: errs})
		if err != nil {
			return nil, 0, err
		}
		eb.Color = alphaGray
		p.Add(offsetErrorBars{eb, bars.Offset})
		if legend {
			p.Legend.Add(f.Bars[b].Label, bars)
		}
	}
	l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: Alpha}, {X: float64(len(f.Metrics)) - 0.5, Y: Alpha}})
	if err != nil {
		return nil, 0, err
	}
	l.Color = alphaGray
	l.Dashes = []vg.Length{vg.Points(1), vg.Points(2.5)}
	p.Add(l)
	var labels []string
	for _, m := range f.Metrics {
		labels = append(labels, m.Label)
	}
	p.NominalX(labels...)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = 8
	return p, models, nil
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
