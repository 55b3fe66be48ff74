package results

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Alpha is the FDR level TIME controls by default (decision 7); sweep
// figures draw it as a dotted line on the FDR panels.
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

// Colours of sweep figures.
var (
	meanColor = color.RGBA{R: 31, G: 89, B: 160, A: 255}
	bandColor = color.NRGBA{R: 31, G: 89, B: 160, A: 64}
	alphaGray = color.Gray{Y: 90}
)

// SweepFigure draws method's power (top row) and FDR (bottom row) for each
// of metrics (columns) against the numeric parameter param of suite: the mean
// over models with its 95% confidence band (mean ± 1.96·SD/√n, clipped to
// [0, 1]), and a dotted line at Alpha on the FDR panels. The x axis is
// logarithmic when every value is positive and the largest is at least
// eight times the smallest (test-set sizes 100…6400); its ticks are the
// swept values. A panel whose metric no record carries says "no data".
//
// SweepFigure returns an error when no group of (suite, method) has param,
// when a group has other parameters too, or when a value is not a number.
func SweepFigure(groups []Group, suite, method, param string, metrics []SweepMetric) (*Figure, error) {
	pts, err := sweepPoints(groups, suite, method, param)
	if err != nil {
		return nil, err
	}
	if len(metrics) == 0 {
		return nil, fmt.Errorf("results: sweep %s: no metrics to draw", suite)
	}
	logX := pts[0].x > 0 && pts[len(pts)-1].x >= 8*pts[0].x
	var ticks plot.ConstantTicks
	for _, p := range pts {
		ticks = append(ticks, plot.Tick{Value: p.x, Label: strconv.FormatFloat(p.x, 'g', -1, 64)})
	}
	lowN, highN := math.MaxInt, 0
	plots := make([][]*plot.Plot, 2)
	for row, kind := range []string{"power", "FDR"} {
		for _, m := range metrics {
			name := m.Power
			if row == 1 {
				name = m.FDR
			}
			var xs, mean, lo, hi []float64
			for _, p := range pts {
				s, ok := p.g.Metric(name)
				if !ok || s.N == 0 {
					continue
				}
				l, h := s.CI95()
				if math.IsNaN(l) {
					l, h = s.Mean, s.Mean
				}
				xs = append(xs, p.x)
				mean = append(mean, s.Mean)
				lo = append(lo, math.Max(l, 0))
				hi = append(hi, math.Min(h, 1))
				lowN, highN = min(lowN, s.N), max(highN, s.N)
			}
			p, err := sweepPanel(m.Title, param, kind, xs, mean, lo, hi, row == 1, logX, ticks)
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
	title := fmt.Sprintf("%s: %s power and FDR versus %s", suite, method, param)
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

// sweepPanel draws one panel; xs is empty when no record has the metric.
func sweepPanel(title, xlabel, ylabel string, xs, mean, lo, hi []float64, fdr, logX bool, ticks plot.ConstantTicks) (*plot.Plot, error) {
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
	if len(xs) == 0 {
		p.Title.Text += " (no data)"
		return p, nil
	}
	if len(xs) > 1 {
		band := make(plotter.XYs, 0, 2*len(xs))
		for i := range xs {
			band = append(band, plotter.XY{X: xs[i], Y: hi[i]})
		}
		for i := len(xs) - 1; i >= 0; i-- {
			band = append(band, plotter.XY{X: xs[i], Y: lo[i]})
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, err
		}
		poly.Color = bandColor
		poly.LineStyle.Width = 0
		p.Add(poly)
	} else {
		e := plotter.XYs{{X: xs[0], Y: mean[0]}}
		eb, err := plotter.NewYErrorBars(errPoints{xy: e, lo: []float64{mean[0] - lo[0]}, hi: []float64{hi[0] - mean[0]}})
		if err != nil {
			return nil, err
		}
		eb.Color = meanColor
		p.Add(eb)
	}
	xys := make(plotter.XYs, len(xs))
	for i := range xs {
		xys[i] = plotter.XY{X: xs[i], Y: mean[i]}
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, err
	}
	line.Color = meanColor
	line.Width = vg.Points(1.5)
	points.Color = meanColor
	points.Shape = draw.CircleGlyph{}
	points.Radius = vg.Points(2)
	p.Add(line, points)
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
