package results

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
)

// checkFigure encodes f as PNG and SVG and checks that both decode: the PNG
// with image/png at the expected pixel size, the SVG as well-formed XML
// whose root is <svg>.
func checkFigure(t *testing.T, f *Figure) image.Image {
	t.Helper()
	var pb, sb bytes.Buffer
	if err := f.Encode(&pb, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&pb)
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	wantW := int(math.Ceil(f.Width.Points() / 72 * DPI))
	if b := img.Bounds(); math.Abs(float64(b.Dx()-wantW)) > 1 {
		t.Errorf("PNG is %d pixels wide, want %d", b.Dx(), wantW)
	}
	if err := f.Encode(&sb, "svg"); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, sb.Bytes())
	return img
}

func checkSVG(t *testing.T, b []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("SVG root element %q", root)
	}
}

func TestSweepFigure(t *testing.T) {
	groups := testGroups(t)
	f, err := SweepFigure(groups, "testsize-regression", []string{"TIME"}, "instances", TimeSweepMetrics)
	if err != nil {
		t.Fatal(err)
	}
	img := checkFigure(t, f)
	// The mean line's colour appears in the image.
	if !hasColor(img, meanColor, 5) {
		t.Error("no mean line drawn")
	}
	if hasColor(img, lineColor(1), 5) {
		t.Error("a second method's colour in a one-method figure")
	}
	// Two methods: a line each.
	f, err = SweepFigure(groups, "testsize-regression", []string{"TIME", newMethod}, "instances", TimeSweepMetrics)
	if err != nil {
		t.Fatal(err)
	}
	img = checkFigure(t, f)
	if !hasColor(img, meanColor, 5) || !hasColor(img, lineColor(1), 5) {
		t.Error("two-method sweep does not draw both lines")
	}
}

// hasColor reports whether some pixel is within tol of c in every channel.
func hasColor(img image.Image, c color.Color, tol int) bool {
	r0, g0, b0, _ := c.RGBA()
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			if absDiff(r, r0) <= tol && absDiff(g, g0) <= tol && absDiff(bb, b0) <= tol {
				return true
			}
		}
	}
	return false
}

func absDiff(a, b uint32) int { return int(math.Abs(float64(a>>8) - float64(b>>8))) }

func TestSweepFigureSinglePointAndMissingMetric(t *testing.T) {
	recs := []*record.Record{
		testRecord("testsize-classification", []record.Param{{Key: "instances", Value: "400"}}, 0, "TIME"),
		testRecord("testsize-classification", []record.Param{{Key: "instances", Value: "400"}}, 1, "TIME"),
	}
	groups, err := Aggregate(recs)
	if err != nil {
		t.Fatal(err)
	}
	metrics := append(TimeSweepMetrics[:1:1], SweepMetric{Title: "absent", Power: "no-such-power", FDR: "no-such-fdr"})
	f, err := SweepFigure(groups, "testsize-classification", []string{"TIME"}, "instances", metrics)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, f)
}

func TestSweepFigureErrors(t *testing.T) {
	groups := testGroups(t)
	bad := []*record.Record{testRecord("s", []record.Param{{Key: "instances", Value: "many"}}, 0, "TIME")}
	badGroups, err := Aggregate(bad)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		groups []Group
		suite  string
		param  string
		want   string
	}{
		{"two params", groups, "grid", "noise", `setting "noise=0.5,permutations=10" has other parameters`},
		{"no records", groups, "table9", "instances", "no TIME records"},
		{"not a number", badGroups, "s", "instances", `instances="many" is not a number`},
	} {
		_, err := SweepFigure(tc.groups, tc.suite, []string{"TIME"}, tc.param, TimeSweepMetrics)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := SweepFigure(groups, "testsize-regression", []string{"TIME"}, "instances", nil); err == nil {
		t.Error("no metrics: no error")
	}
	if _, err := SweepFigure(groups, "testsize-regression", nil, "instances", TimeSweepMetrics); err == nil {
		t.Error("no methods: no error")
	}
}

func TestHeatmapFigure(t *testing.T) {
	recs := testRecords()
	f, err := HeatmapFigure(recs, "table1", nil, 0, HeatmapMethods)
	if err != nil {
		t.Fatal(err)
	}
	img := checkFigure(t, f)
	if !hasColor(img, truthColor, 2) {
		t.Error("no ground-truth cells drawn")
	}
	// Without SAGE the figure has two panels, so it is narrower; a method
	// the paper never ran adds a panel.
	g, err := HeatmapFigure(recs, "table1", nil, 0, []string{"TIME"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Width >= f.Width {
		t.Errorf("two-panel figure width %v, three-panel %v", g.Width, f.Width)
	}
	checkFigure(t, g)
	h, err := HeatmapFigure(recs, "table1", nil, 0, []string{"TIME", "SAGE", newMethod})
	if err != nil {
		t.Fatal(err)
	}
	if h.Width <= f.Width {
		t.Errorf("four-panel figure width %v, three-panel %v", h.Width, f.Width)
	}
	// The truth may come from any record; the panels from the methods given.
	if _, err := HeatmapFigure(recs, "table1", nil, 0, []string{newMethod}); err != nil {
		t.Errorf("heat map of %s alone: %v", newMethod, err)
	}
}

func TestHeatmapFigureErrors(t *testing.T) {
	edit := func(f func(timeRec, sageRec *record.Record)) []*record.Record {
		tr := testRecord("table1", nil, 0, "TIME")
		tr.Truth, tr.Explanation = testTruth(), testExplanation("TIME", 0)
		sr := testRecord("table1", nil, 0, "SAGE")
		sr.Explanation = testExplanation("SAGE", 0)
		f(tr, sr)
		return []*record.Record{tr, sr}
	}
	for _, tc := range []struct {
		name string
		recs []*record.Record
		want string
	}{
		{"no truth", edit(func(tr, _ *record.Record) { tr.Truth = nil }), "no record with the ground truth"},
		{"no explanation", edit(func(tr, sr *record.Record) { tr.Explanation, sr.Explanation = nil, nil }), "no record of TIME, SAGE with an explanation"},
		{"truth shape", edit(func(tr, _ *record.Record) { tr.Truth.Relevant = tr.Truth.Relevant[:2] }), "2 relevance flags and 4 windows for 4 features"},
		{"truth window", edit(func(tr, _ *record.Record) { tr.Truth.Windows[0] = tempora.Window{Start: 2, End: 6} }), "truth window [2, 6] of feature 0 outside [0, 5]"},
		{"ordering flags", edit(func(tr, _ *record.Record) { tr.Truth.WindowOrderingImportant = []bool{true} }), "1 window-ordering flags for 4 features"},
		{"cells", edit(func(tr, _ *record.Record) { tr.Explanation.Cells = tr.Explanation.Cells[:5] }), "TIME: 5 cells for 4 features × 6 timesteps"},
		{"TIME window", edit(func(tr, _ *record.Record) { tr.Explanation.Features[1].Window = &tempora.Window{Start: 0, End: 9} }), "feature 1 window [0, 9] outside [0, 5]"},
		{"SAGE NaN", edit(func(_, sr *record.Record) { sr.Explanation.Cells[3] = math.NaN() }), "SAGE: cell 3 is NaN"},
		{"SAGE shape", edit(func(_, sr *record.Record) {
			sr.Explanation.D, sr.Explanation.L = 6, 4
		}), "SAGE explains 6×4 cells, TIME 4×6"},
		{"SAGE alone, truth shape", edit(func(tr, sr *record.Record) { tr.Explanation, sr.Explanation.D, sr.Explanation.L = nil, 6, 4 }), "truth has 4 relevance flags"},
	} {
		_, err := HeatmapFigure(tc.recs, "table1", nil, 0, HeatmapMethods)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "results: heat map of table1 model 0: ") {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestAppendHatch checks the hatching geometry: every segment has slope 1,
// lies in its rectangle and ends on the rectangle's border, consecutive lines
// are spacing apart along x, and two adjacent rectangles share their lines.
func TestAppendHatch(t *testing.T) {
	const eps = 1e-9 // geometric tolerance in points (rounding only)
	const s = 4
	for _, r := range [][4]vg.Length{{10, 30, 5, 25}, {30, 50, 5, 25}, {0.3, 7.9, 100, 101}, {0, 100, 0, 3}} {
		x0, x1, y0, y1 := r[0], r[1], r[2], r[3]
		lines := appendHatch(nil, x0, x1, y0, y1, s)
		// Lines y = x − k with k a multiple of s cross the rectangle for
		// k in (x0−y1, x1−y0): about (width + height)/s of them.
		if want := float64((x1 - x0 + y1 - y0) / s); math.Abs(float64(len(lines))-want) > 1 {
			t.Errorf("%v: %d lines, want about %.1f", r, len(lines), want)
		}
		onBorder := func(p vg.Point) bool {
			return math.Abs(float64(p.X-x0)) < eps || math.Abs(float64(p.X-x1)) < eps ||
				math.Abs(float64(p.Y-y0)) < eps || math.Abs(float64(p.Y-y1)) < eps
		}
		var prevK vg.Length
		for i, l := range lines {
			a, b := l[0], l[1]
			if math.Abs(float64((b.Y-a.Y)-(b.X-a.X))) > eps || b.X <= a.X {
				t.Fatalf("%v: segment %v is not at 45°", r, l)
			}
			for _, p := range l {
				if p.X < x0-eps || p.X > x1+eps || p.Y < y0-eps || p.Y > y1+eps || !onBorder(p) {
					t.Fatalf("%v: point %v not on the rectangle's border", r, p)
				}
			}
			k := a.X - a.Y
			if rem := math.Remainder(float64(k), s); math.Abs(rem) > eps {
				t.Errorf("%v: line offset %v is not a multiple of %d", r, k, s)
			}
			if i > 0 && math.Abs(float64(k-prevK-s)) > eps {
				t.Errorf("%v: lines %v apart, want %d", r, k-prevK, s)
			}
			prevK = k
		}
	}
	// Adjacent cells: a line leaving the left cell through its right edge
	// enters the right cell at the same point.
	left := appendHatch(nil, 10, 30, 5, 25, s)
	right := appendHatch(nil, 30, 50, 5, 25, s)
	exits := map[vg.Point]bool{}
	for _, l := range left {
		if math.Abs(float64(l[1].X-30)) < eps {
			exits[l[1]] = true
		}
	}
	matched := 0
	for _, l := range right {
		if exits[l[0]] {
			matched++
		}
	}
	if matched == 0 || matched != len(exits) {
		t.Errorf("%d of %d lines continue into the adjacent cell", matched, len(exits))
	}
}

// hatchPlot returns a plot of [0, 4]² with no axes and one hatched unit
// cell centred at (2, 2), black.
func hatchPlot() *plot.Plot {
	p := plot.New()
	p.HideAxes()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 4, 0, 4
	p.X.Padding, p.Y.Padding = 0, 0
	p.Add(&hatch{cells: []hatchCell{{x: 2, y: 2, c: color.Black}}, spacing: vg.Points(4), width: vg.Points(1)})
	return p
}

// TestHatchClipped renders the hatch plotter and checks that it marks the
// cell and nothing outside it.
func TestHatchClipped(t *testing.T) {
	const size = 200 // points; at 72 dpi, pixels
	c := vgimg.NewWith(vgimg.UseWH(size, size), vgimg.UseDPI(72), vgimg.UseBackgroundColor(color.White))
	hatchPlot().Draw(draw.New(c))
	img := c.Image()
	// The cell spans [75, 125] in both directions (1.5..2.5 of 0..4).
	// Allow 2 pixels for anti-aliasing at its border.
	const lo, hi, aa = 75, 125, 2
	var ink float64 // summed darkness in the cell, 0 (white) to 1 per pixel
	outside := 0
	for y := range size {
		for x := range size {
			r, _, _, _ := img.At(x, y).RGBA()
			dark := 1 - float64(r>>8)/255
			if x >= lo-aa && x < hi+aa && y >= lo-aa && y < hi+aa {
				ink += dark
			} else if dark > 0.02 {
				outside++
			}
		}
	}
	// Lines 1 pt wide, 4 pt apart along x, so 4/√2 pt apart across: they
	// cover 1/(4/√2) ≈ 0.354 of the cell. Anti-aliasing preserves area up
	// to overlaps at line ends; ±0.07 allows for those.
	if cover := ink / (50 * 50); math.Abs(cover-math.Sqrt2/4) > 0.07 || outside != 0 {
		t.Errorf("hatching covers %.3f of the cell (want %.3f) and %d pixels outside it", cover, math.Sqrt2/4, outside)
	}
}

// TestHatchGoldenSVG pins the SVG the hatch plotter writes.
func TestHatchGoldenSVG(t *testing.T) {
	c := vgsvg.New(vg.Points(40), vg.Points(40))
	hatchPlot().Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, b.Bytes())
	golden(t, "hatch.svg", b.Bytes())
}

func TestFigureSave(t *testing.T) {
	f, err := SweepFigure(testGroups(t), "testsize-regression", []string{"TIME"}, "instances", TimeSweepMetrics)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"a.png", "b.SVG"} {
		if err := f.Save(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", name, err)
		}
	}
	if err := f.Save(filepath.Join(dir, "c.pdf")); err == nil || !strings.Contains(err.Error(), `unknown figure format "pdf"`) {
		t.Errorf("pdf: error %v", err)
	}
	if err := f.Encode(io.Discard, "gif"); err == nil {
		t.Error("gif: no error")
	}
}

// TestHeatmapTimestepsZeroBased checks that the heat maps number timesteps
// from 0, as the CLI, the JSON windows and the Python package do: the
// column of timestep t is drawn at x = t, labelled t, and hatched at x = t.
func TestHeatmapTimestepsZeroBased(t *testing.T) {
	for _, tc := range []struct {
		l      int
		labels []string // the labelled ticks, in order
	}{
		{1, []string{"0"}},
		{4, []string{"0", "1", "2", "3"}},
		{12, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}},
		{50, []string{"0", "5", "10", "15", "20", "25", "30", "35", "40", "45"}},
	} {
		ticks := timestepTicks(tc.l)
		g := cellGrid{d: 1, l: tc.l, cells: make([]float64, tc.l)}
		var labels []string
		for c, tk := range ticks {
			if tk.Value != g.X(c) {
				t.Errorf("l=%d: tick %d at %v, column drawn at %v", tc.l, c, tk.Value, g.X(c))
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
				if tk.Label != strconv.Itoa(c) {
					t.Errorf("l=%d: timestep %d labelled %q", tc.l, c, tk.Label)
				}
			}
		}
		if !slices.Equal(labels, tc.labels) {
			t.Errorf("l=%d: labels %v, want %v", tc.l, labels, tc.labels)
		}
		hp := heatPanel{cells: make([]float64, tc.l), hatched: make([]bool, tc.l)}
		hp.hatched[tc.l-1] = true
		hm := plotter.NewHeatMap(g, scorePalette(false))
		if cells := hatchedCells(hp, hm, 1, tc.l); len(cells) != 1 || cells[0].x != g.X(tc.l-1) {
			t.Errorf("l=%d: hatched cells %+v, want one at x = %v", tc.l, cells, g.X(tc.l-1))
		}
	}
}
