package results

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Alpha is the FDR level TIME controls by default (docs/decisions.md,
// decision 7); sweep figures draw it as a dotted line on the FDR panels.
const Alpha = 0.1

// SweepMetric is one column of a sweep figure: a power metric (top panel) and
// an FDR metric (bottom panel).
type SweepMetric struct {
	Title      string
	Power, FDR string
}

// TimeSweepMetrics are the columns of the paper's Figure 4 and Figure S1:
// features, timesteps (Average_Window), feature ordering
// (Ordering_All_Important) and window ordering (Window_Ordering_Important).
var TimeSweepMetrics = []SweepMetric{
	{Title: "features", Power: "feature-power", FDR: "feature-fdr"},
	{Title: "timesteps (average window)", Power: "avg-window-power", FDR: "avg-window-fdr"},
	{Title: "feature ordering", Power: "ordering-power", FDR: "ordering-fdr"},
	{Title: "window ordering", Power: "window-ordering-power", FDR: "window-ordering-fdr"},
}

// sweepPoint is one setting of a sweep.
type sweepPoint struct {
	x float64
	g *Group
}

// sweepPoints returns the groups of (suite, method) whose only parameter is
// param, sorted by its numeric value.
func sweepPoints(groups []Group, suite, method, param string) ([]sweepPoint, error) {
	var pts []sweepPoint
	for i := range groups {
		g := &groups[i]
		if g.Suite != suite || g.Method != method {
			continue
		}
		if len(g.Params) != 1 || g.Params[0].Key != param {
			return nil, fmt.Errorf("results: sweep %s over %q: setting %q has other parameters", suite, param, g.Setting())
		}
		x, err := strconv.ParseFloat(g.Params[0].Value, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("results: sweep %s: %s=%q is not a number", suite, param, g.Params[0].Value)
		}
		pts = append(pts, sweepPoint{x: x, g: g})
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("results: sweep %s: no %s records with parameter %q", suite, method, param)
	}
	slices.SortStableFunc(pts, func(a, b sweepPoint) int { return compareFloat(a.x, b.x) })
	return pts, nil
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Colours of sweep figures: one per method, in order (a colour-blind-safe
// qualitative palette); bands are the same colours, translucent.
var (
	lineColors = []color.RGBA{
		{R: 31, G: 89, B: 160, A: 255},  // blue
		{R: 230, G: 120, B: 0, A: 255},  // orange
		{R: 0, G: 140, B: 100, A: 255},  // green
		{R: 200, G: 60, B: 140, A: 255}, // purple
		{R: 120, G: 120, B: 120, A: 255},
		{R: 160, G: 40, B: 30, A: 255},
	}
	meanColor = lineColors[0]
	alphaGray = color.Gray{Y: 90}
)

func lineColor(i int) color.RGBA { return lineColors[i%len(lineColors)] }

func bandColor(i int) color.NRGBA {
	c := lineColor(i)
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: 64}
}

// SweepFigure draws the power (top row) and FDR (bottom row) of each of
// methods, one line per method, for each of metrics (columns) against the
// numeric parameter param of suite: the mean over models with its 95%
// confidence band (mean ± 1.96·SD/√n, clipped to [0, 1]), and a dotted
// line at Alpha on the FDR panels. The x axis is logarithmic when every
// value is positive and the largest is at least eight times the smallest
// (test-set sizes 100…6400); its ticks are the swept values. A method
// without a metric leaves it out of that panel; a panel whose metric no
// method has says "no data". With several methods a legend names them.
//
// SweepFigure returns an error when no method is given, when no group of
// (suite, method) has param for some method, when a group has other
// parameters too, or when a value is not a number.
func SweepFigure(groups []Group, suite string, methods []string, param string, metrics []SweepMetric) (*Figure, error) {
	return sweepFigure(groups, suite, methods, param, metrics, "")
}

// sweepFigure is SweepFigure with a title in place of the default one
// ("" for the default).
func sweepFigure(groups []Group, suite string, methods []string, param string, metrics []SweepMetric, title string) (*Figure, error) {
	if len(methods) == 0 {
		return nil, fmt.Errorf("results: sweep %s: no methods to draw", suite)
	}
	if len(metrics) == 0 {
		return nil, fmt.Errorf("results: sweep %s: no metrics to draw", suite)
	}
	series := make([][]sweepPoint, len(methods))
	var ticks plot.ConstantTicks
	for i, m := range methods {
		pts, err := sweepPoints(groups, suite, m, param)
		if err != nil {
			return nil, err
		}
		series[i] = pts
		for _, p := range pts {
			if !slices.ContainsFunc(ticks, func(t plot.Tick) bool { return t.Value == p.x }) {
				ticks = append(ticks, plot.Tick{Value: p.x, Label: strconv.FormatFloat(p.x, 'g', -1, 64)})
			}
		}
	}
	slices.SortFunc(ticks, func(a, b plot.Tick) int { return compareFloat(a.Value, b.Value) })
	logX := ticks[0].Value > 0 && ticks[len(ticks)-1].Value >= 8*ticks[0].Value
	lowN, highN := math.MaxInt, 0
	plots := make([][]*plot.Plot, 2)
	for row, kind := range []string{"power", "FDR"} {
		for col, m := range metrics {
			name := m.Power
			if row == 1 {
				name = m.FDR
			}
			var lines []sweepLine
			for i, pts := range series {
				ln := sweepLine{method: methods[i], color: i}
				for _, p := range pts {
					s, ok := p.g.Metric(name)
					if !ok || s.N == 0 {
						continue
					}
					l, h := s.CI95()
					if math.IsNaN(l) {
						l, h = s.Mean, s.Mean
					}
					ln.xs = append(ln.xs, p.x)
					ln.mean = append(ln.mean, s.Mean)
					ln.lo = append(ln.lo, math.Max(l, 0))
					ln.hi = append(ln.hi, math.Min(h, 1))
					lowN, highN = min(lowN, s.N), max(highN, s.N)
				}
				lines = append(lines, ln)
			}
			legend := len(methods) > 1 && row == 0 && col == 0
			p, err := sweepPanel(m.Title, param, kind, lines, row == 1, logX, ticks, legend)
			if err != nil {
				return nil, fmt.Errorf("results: sweep %s %s: %w", suite, name, err)
			}
			plots[row] = append(plots[row], p)
		}
	}
	models := "no models"
	switch {
	case highN == 0:
	case lowN == highN:
		models = fmt.Sprintf("n = %d models per point", lowN)
	default:
		models = fmt.Sprintf("n = %d–%d models per point", lowN, highN)
	}
	if title == "" {
		title = fmt.Sprintf("%s: %s power and FDR versus %s", suite, strings.Join(methods, ", "), param)
	}
	sub := fmt.Sprintf("line: mean; band: 95%% CI (mean ± 1.96·SD/√n), %s; dotted: α = %g", models, Alpha)
	cols := len(metrics)
	const capH = 0.55 * vg.Inch
	f := &Figure{Width: vg.Length(cols)*2.8*vg.Inch + 0.2*vg.Inch, Height: 5.2*vg.Inch + capH}
	f.draw = func(c draw.Canvas) {
		caption(c, title, 12, c.Max.Y-0.08*vg.Inch)
		caption(c, sub, 9, c.Max.Y-0.32*vg.Inch)
		body := draw.Crop(c, 0, 0, 0, -capH)
		tiles := draw.Tiles{Rows: 2, Cols: cols, PadX: 0.15 * vg.Inch, PadY: 0.15 * vg.Inch,
			PadLeft: 0.05 * vg.Inch, PadRight: 0.15 * vg.Inch, PadBottom: 0.05 * vg.Inch}
		canvases := plot.Align(plots, tiles, body)
		for r := range plots {
			for i := range plots[r] {
				plots[r][i].Draw(canvases[r][i])
			}
		}
	}
	return f, nil
}

// sweepLine is one method's points in one panel.
type sweepLine struct {
	method           string
	color            int
	xs, mean, lo, hi []float64
}

// sweepPanel draws one panel with a line per method.
func sweepPanel(title, xlabel, ylabel string, lines []sweepLine, fdr, logX bool, ticks plot.ConstantTicks, legend bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 10
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Y.Min, p.Y.Max = -0.02, 1.02
	p.X.Min, p.X.Max = ticks[0].Value, ticks[len(ticks)-1].Value
	if logX {
		p.X.Scale = plot.LogScale{}
	}
	p.X.Tick.Marker = ticks
	p.X.Label.TextStyle.Font.Size = 10
	p.Y.Label.TextStyle.Font.Size = 10
	p.X.Tick.Label.Font.Size = 7
	p.Y.Tick.Label.Font.Size = 8
	p.Add(plotter.NewGrid())
	if fdr {
		l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: Alpha}, {X: p.X.Max, Y: Alpha}})
		if err != nil {
			return nil, err
		}
		l.Color = alphaGray
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(1), vg.Points(2.5)}
		p.Add(l)
	}
	empty := true
	for _, ln := range lines {
		if len(ln.xs) == 0 {
			continue
		}
		empty = false
		col := lineColor(ln.color)
		if len(ln.xs) > 1 {
			band := make(plotter.XYs, 0, 2*len(ln.xs))
			for i := range ln.xs {
				band = append(band, plotter.XY{X: ln.xs[i], Y: ln.hi[i]})
			}
			for i := len(ln.xs) - 1; i >= 0; i-- {
				band = append(band, plotter.XY{X: ln.xs[i], Y: ln.lo[i]})
			}
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			poly.Color = bandColor(ln.color)
			poly.LineStyle.Width = 0
			p.Add(poly)
		} else {
			e := plotter.XYs{{X: ln.xs[0], Y: ln.mean[0]}}
			eb, err := plotter.NewYErrorBars(errPoints{xy: e, lo: []float64{ln.mean[0] - ln.lo[0]}, hi: []float64{ln.hi[0] - ln.mean[0]}})
			if err != nil {
				return nil, err
			}
			eb.Color = col
			p.Add(eb)
		}
		xys := make(plotter.XYs, len(ln.xs))
		for i := range ln.xs {
			xys[i] = plotter.XY{X: ln.xs[i], Y: ln.mean[i]}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color = col
		line.Width = vg.Points(1.5)
		points.Color = col
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(2)
		p.Add(line, points)
		if legend {
			p.Legend.Add(ln.method, line, points)
		}
	}
	if empty {
		p.Title.Text += " (no data)"
	}
	if legend {
		p.Legend.Top = false
		p.Legend.Left = false
		p.Legend.TextStyle.Font.Size = 8
	}
	return p, nil
}

// errPoints adapts points and asymmetric errors to plotter.NewYErrorBars.
type errPoints struct {
	xy     plotter.XYs
	lo, hi []float64
}

func (e errPoints) Len() int                    { return len(e.xy) }
func (e errPoints) XY(i int) (float64, float64) { return e.xy[i].X, e.xy[i].Y }
func (e errPoints) YError(i int) (float64, float64) {
	return e.lo[i], e.hi[i]
}
