// Command plot draws the figures of the learned-model example
// (examples/pytorch/learned.py) from the CSV files it writes:
//
//   - selection.png and .svg: holdout AUROC of the retrained network per
//     feature set, one point per problem (light lines join a problem's
//     points), with the mean and its 95% confidence interval;
//   - detection.png and .svg: feature and timestep power and FDR of each
//     explanation method against the generator's truth, one point per
//     problem, with the mean and its 95% confidence interval.
//
// Usage:
//
//	go run ./examples/pytorch/plot -in out/learned-quick
//
// The intervals are mean ± 1.96·SD/√n over problems, as in the benchmark's
// figures (docs/decisions.md, decision 14). Points are spread sideways by a
// fixed offset per problem, so the same CSV gives the same figure.
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

func main() {
	in := flag.String("in", "", "output directory of learned.py (reads its per-problem CSVs, writes the figures there)")
	flag.Parse()
	if *in == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: plot -in DIR")
		os.Exit(2)
	}
	if err := run(*in); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	sel, err := readCSV(filepath.Join(dir, "selection-per-problem.csv"))
	if err != nil {
		return err
	}
	det, err := readCSV(filepath.Join(dir, "detection-per-problem.csv"))
	if err != nil {
		return err
	}
	sets := []category{
		{"all", "(a) all"}, {"time", "(b) TIME"}, {"perm", "(c) PERM"}, {"random", "(d) random"}, {"truth", "(e) truth"},
	}
	var selPanels []panel
	for _, net := range distinct(sel, "network") {
		p, err := stripPanel(sel, net, "set", sets, "auroc", "holdout AUROC")
		if err != nil {
			return err
		}
		selPanels = append(selPanels, p)
	}
	if err := save(filepath.Join(dir, "selection"), "Retrained on each feature set: holdout AUROC (one point per problem)",
		[][]panel{selPanels}, 4.6*vg.Inch, false); err != nil {
		return err
	}

	metrics := []struct{ col, label string }{
		{"feature_power", "feature power"}, {"feature_fdr", "feature FDR"},
		{"timestep_power", "timestep power"}, {"timestep_fdr", "timestep FDR"},
	}
	methods := []category{{"time", "TIME"}, {"perm", "PERM"}, {"sage-m", "SAGE-m"}, {"sage", "SAGE"}, {"lime", "LIME"}}
	var rows [][]panel
	for _, net := range distinct(det, "network") {
		var row []panel
		for _, m := range metrics {
			p, err := stripPanel(det, net, "method", methods, m.col, m.label)
			if err != nil {
				return err
			}
			row = append(row, p)
		}
		rows = append(rows, row)
	}
	return save(filepath.Join(dir, "detection"), "Explanations of the networks against the generator's truth (one point per problem)",
		rows, 3.2*vg.Inch, true)
}

// table is a CSV file: its header and rows.
type table struct {
	header []string
	rows   [][]string
}

func readCSV(path string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(all) < 2 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return &table{header: all[0], rows: all[1:]}, nil
}

func (t *table) col(name string) (int, error) {
	i := slices.Index(t.header, name)
	if i < 0 {
		return 0, fmt.Errorf("no column %q", name)
	}
	return i, nil
}

// distinct returns the values of a column in order of first appearance.
func distinct(t *table, name string) []string {
	i, err := t.col(name)
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range t.rows {
		if !slices.Contains(out, r[i]) {
			out = append(out, r[i])
		}
	}
	return out
}

type category struct{ key, label string }

// panel is one plot of a figure.
type panel struct{ p *plot.Plot }

var (
	pointColor = color.NRGBA{R: 31, G: 89, B: 160, A: 170}
	lineColor  = color.NRGBA{R: 120, G: 120, B: 120, A: 70}
	meanColor  = color.NRGBA{R: 200, G: 40, B: 30, A: 255}
)

// stripPanel plots column value of the rows of network net, one x position
// per category of column catCol (categories absent from the data are
// skipped), one point per problem.
func stripPanel(t *table, net, catCol string, cats []category, value, ylabel string) (panel, error) {
	ni, err := t.col("network")
	if err != nil {
		return panel{}, err
	}
	ci, err := t.col(catCol)
	if err != nil {
		return panel{}, err
	}
	vi, err := t.col(value)
	if err != nil {
		return panel{}, err
	}
	pi, err := t.col("problem")
	if err != nil {
		return panel{}, err
	}
	byCat := map[string]map[int]float64{}
	for _, r := range t.rows {
		if r[ni] != net {
			continue
		}
		v, err := strconv.ParseFloat(r[vi], 64)
		if err != nil {
			return panel{}, fmt.Errorf("%s %q: %w", value, r[vi], err)
		}
		prob, err := strconv.Atoi(r[pi])
		if err != nil {
			return panel{}, fmt.Errorf("problem %q: %w", r[pi], err)
		}
		if byCat[r[ci]] == nil {
			byCat[r[ci]] = map[int]float64{}
		}
		byCat[r[ci]][prob] = v
	}
	var present []category
	for _, c := range cats {
		if byCat[c.key] != nil {
			present = append(present, c)
		}
	}
	if len(present) == 0 {
		return panel{}, errors.New("no data for network " + net)
	}

	p := plot.New()
	p.Title.Text = strings.ToUpper(net)
	p.Y.Label.Text = ylabel
	var labels []string
	for _, c := range present {
		labels = append(labels, c.label)
	}
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.6, float64(len(present))-0.4
	p.Add(plotter.NewGrid())

	// Lines joining each problem's points, then the points.
	var probs []int
	for _, c := range present {
		for prob := range byCat[c.key] {
			if !slices.Contains(probs, prob) {
				probs = append(probs, prob)
			}
		}
	}
	slices.Sort(probs)
	jitter := func(prob int) float64 { return 0.05 * float64(prob%7-3) }
	for _, prob := range probs {
		var xy plotter.XYs
		for x, c := range present {
			if v, ok := byCat[c.key][prob]; ok {
				xy = append(xy, plotter.XY{X: float64(x) + jitter(prob), Y: v})
			}
		}
		if len(xy) > 1 {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return panel{}, err
			}
			l.Color = lineColor
			l.Width = vg.Points(0.5)
			p.Add(l)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for x, c := range present {
		var xy plotter.XYs
		var vals []float64
		for _, prob := range probs {
			if v, ok := byCat[c.key][prob]; ok {
				xy = append(xy, plotter.XY{X: float64(x) + jitter(prob), Y: v})
				vals = append(vals, v)
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return panel{}, err
		}
		s.GlyphStyle.Color = pointColor
		s.GlyphStyle.Radius = vg.Points(2)
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(s)

		m, half := meanCI(vals)
		bar := &meanBar{x: float64(x), mean: m, half: half}
		p.Add(bar)
	}
	pad := 0.05 * math.Max(hi-lo, 0.02)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	return panel{p: p}, nil
}

// meanCI returns the mean and the half-width 1.96·SD/√n of the values (0
// for fewer than two).
func meanCI(v []float64) (mean, half float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(v)-1))
	return mean, 1.96 * sd / math.Sqrt(float64(len(v)))
}

// meanBar draws a mean as a short horizontal bar with a vertical interval.
type meanBar struct{ x, mean, half float64 }

func (b *meanBar) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: meanColor, Width: vg.Points(1.5)}
	x := trX(b.x)
	w := vg.Points(9)
	c.StrokeLine2(sty, x-w, trY(b.mean), x+w, trY(b.mean))
	if b.half > 0 {
		c.StrokeLine2(sty, x, trY(b.mean-b.half), x, trY(b.mean+b.half))
	}
}

func (b *meanBar) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.x, b.x, b.mean - b.half, b.mean + b.half
}

// save draws the panels (rows × columns, each panelW wide) under a caption
// into path.png and path.svg. With unitY every panel's y axis spans [0, 1]
// (power and FDR).
func save(path, title string, rows [][]panel, panelW vg.Length, unitY bool) error {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	plots := make([][]*plot.Plot, len(rows))
	for i, r := range rows {
		plots[i] = make([]*plot.Plot, cols)
		for j, p := range r {
			if unitY {
				p.p.Y.Min, p.p.Y.Max = -0.03, 1.03
			}
			plots[i][j] = p.p
		}
	}
	w := max(vg.Length(cols)*panelW, 7*vg.Inch) // wide enough for the caption
	h := vg.Length(len(rows))*2.6*vg.Inch + 0.4*vg.Inch
	drawAll := func(dc draw.Canvas) {
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 12), XAlign: draw.XCenter,
			YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
		dc.FillText(sty, vg.Point{X: w / 2, Y: h - 0.08*vg.Inch}, title)
		body := draw.Crop(dc, 0, 0, 0, -0.4*vg.Inch)
		tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: 0.2 * vg.Inch, PadY: 0.2 * vg.Inch,
			PadLeft: 0.1 * vg.Inch, PadRight: 0.1 * vg.Inch, PadBottom: 0.1 * vg.Inch}
		cv := plot.Align(plots, tiles, body)
		for i := range plots {
			for j, p := range plots[i] {
				if p != nil {
					p.Draw(cv[i][j])
				}
			}
		}
	}
	png := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150), vgimg.UseBackgroundColor(color.White))
	drawAll(draw.New(png))
	if err := writeFile(path+".png", func(f io.Writer) error { _, err := vgimg.PngCanvas{Canvas: png}.WriteTo(f); return err }); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	drawAll(draw.New(svg))
	return writeFile(path+".svg", func(f io.Writer) error { _, err := svg.WriteTo(f); return err })
}

// writeFile writes through a temporary file renamed into place, so a
// failed run never leaves a half-written figure.
func writeFile(path string, write func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
