package results

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// AreaMetrics are the threshold-free metrics AreaFigure draws, one panel
// each, in order: the global truth's cell and feature areas, then the
// per-instance ones (docs/records.md).
var AreaMetrics = []string{
	"timestep-auprc", "timestep-auroc", "feature-auprc", "feature-auroc",
	"instance-timestep-auprc", "instance-timestep-auroc", "instance-feature-auprc", "instance-feature-auroc",
}

// hasInstanceMetrics reports whether some group has a per-instance metric,
// the condition for a report's area figure.
func hasInstanceMetrics(groups []Group) bool {
	for i := range groups {
		if s, ok := groups[i].Metric("instance-timestep-auprc"); ok && s.N > 0 {
			return true
		}
	}
	return false
}

// AreaFigure draws, for the groups of one setting, one panel per metric of
// AreaMetrics that some group has: each method's mean over models as a
// point with its 95% confidence interval (mean ± 1.96·SD/√n, clipped to
// [0, 1]), methods along the x axis in the order of groups. A method
// without the metric has no point in that panel. It returns an error if
// groups is empty, mixes settings, or has none of the metrics.
func AreaFigure(groups []Group) (*Figure, error) {
	if err := checkOneSetting(groups); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range AreaMetrics {
		for i := range groups {
			if s, ok := groups[i].Metric(n); ok && s.N > 0 {
				names = append(names, n)
				break
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("results: %s: no threshold-free metrics to draw", settingTitle(&groups[0]))
	}
	ticks := make(plot.ConstantTicks, len(groups))
	for i := range groups {
		ticks[i] = plot.Tick{Value: float64(i), Label: groups[i].Method}
	}
	cols := min(4, len(names))
	rows := (len(names) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for k, n := range names {
		p := plot.New()
		p.Title.Text = n
		p.Title.TextStyle.Font.Size = 10
		p.Y.Min, p.Y.Max = -0.02, 1.02
		p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
		p.X.Tick.Marker = ticks
		p.X.Tick.Label.Font.Size = 7
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign = draw.XRight
		p.Y.Tick.Label.Font.Size = 8
		p.Add(plotter.NewGrid())
		for i := range groups {
			s, ok := groups[i].Metric(n)
			if !ok || s.N == 0 {
				continue
			}
			lo, hi := s.CI95()
			if math.IsNaN(lo) {
				lo, hi = s.Mean, s.Mean
			}
			xy := plotter.XYs{{X: float64(i), Y: s.Mean}}
			eb, err := plotter.NewYErrorBars(errPoints{xy: xy, lo: []float64{s.Mean - math.Max(lo, 0)}, hi: []float64{math.Min(hi, 1) - s.Mean}})
			if err != nil {
				return nil, err
			}
			eb.Color = lineColor(i)
			pts, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			pts.Color = lineColor(i)
			pts.Shape = draw.CircleGlyph{}
			pts.Radius = vg.Points(2.5)
			p.Add(eb, pts)
		}
		plots[k/cols] = append(plots[k/cols], p)
	}
	for r := range plots { // plot.Align wants full rows
		for len(plots[r]) < cols {
			plots[r] = append(plots[r], nil)
		}
	}
	n := 0
	for i := range groups {
		n = max(n, len(groups[i].Models))
	}
	title := fmt.Sprintf("%s: threshold-free metrics by method", settingTitle(&groups[0]))
	sub := fmt.Sprintf("point: mean over models (at most %d); bar: 95%% CI (mean ± 1.96·SD/√n); instance-…: per-instance attributions against per-instance truth", n)
	const capH = 0.55 * vg.Inch
	f := &Figure{Width: vg.Length(cols)*2.6*vg.Inch + 0.2*vg.Inch, Height: vg.Length(rows)*2.8*vg.Inch + capH}
	f.draw = func(c draw.Canvas) {
		caption(c, title, 12, c.Max.Y-0.08*vg.Inch)
		caption(c, sub, 8, c.Max.Y-0.32*vg.Inch)
		body := draw.Crop(c, 0, 0, 0, -capH)
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 0.15 * vg.Inch, PadY: 0.15 * vg.Inch,
			PadLeft: 0.05 * vg.Inch, PadRight: 0.15 * vg.Inch, PadBottom: 0.05 * vg.Inch}
		canvases := plot.Align(plots, tiles, body)
		for r := range plots {
			for i := range plots[r] {
				if plots[r][i] != nil {
					plots[r][i].Draw(canvases[r][i])
				}
			}
		}
	}
	return f, nil
}
