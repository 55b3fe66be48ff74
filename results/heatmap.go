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

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

// Colours of heat maps: a sequential light-to-dark red ramp for scores (so
// that darker means more important, as in the paper's Figure 3), a uniform
// colour for the ground truth, white for zero.
var (
	scoreRamp  = []color.Color{color.RGBA{254, 224, 210, 255}, color.RGBA{251, 106, 74, 255}, color.RGBA{103, 0, 13, 255}}
	truthColor = color.RGBA{239, 101, 72, 255}
)

// ramp is a palette.Palette interpolating linearly between colour stops.
type ramp struct {
	stops []color.Color
	n     int
}

// Colors returns the n colours of the ramp.
func (r ramp) Colors() []color.Color {
	if len(r.stops) == 1 || r.n == 1 {
		return []color.Color{r.stops[0]}
	}
	out := make([]color.Color, r.n)
	for i := range out {
		pos := float64(i) / float64(r.n-1) * float64(len(r.stops)-1)
		k := min(int(pos), len(r.stops)-2)
		f := pos - float64(k)
		a := color.RGBAModel.Convert(r.stops[k]).(color.RGBA)
		b := color.RGBAModel.Convert(r.stops[k+1]).(color.RGBA)
		mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*(1-f) + float64(y)*f)) }
		out[i] = color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
	}
	return out
}

// cellGrid is a D × L matrix of cell values as a plotter.GridXYZ: column c
// is timestep c (drawn at x = c, so labels are 0-based like the timesteps
// of the CLI, the JSON and the Python package) and row r is feature D−1−r
// (drawn at y = r), so that feature 0 is the top row. Zero cells are NaN,
// which the heat map paints white.
type cellGrid struct {
	d, l  int
	cells []float64
}

func (g cellGrid) Dims() (c, r int) { return g.l, g.d }
func (g cellGrid) X(c int) float64  { return float64(c) }
func (g cellGrid) Y(r int) float64  { return float64(r) }
func (g cellGrid) Z(c, r int) float64 {
	v := g.cells[(g.d-1-r)*g.l+c]
	if v == 0 {
		return math.NaN()
	}
	return v
}

// hatch is a plot.Plotter that strokes 45° lines across cells of a heat
// map, the way the paper marks ordering. The lines are computed in canvas
// coordinates with a common phase, so they continue across adjacent cells,
// and each segment is clipped to its cell analytically (gonum/plot has no
// hatching and no clipping).
type hatch struct {
	cells   []hatchCell
	spacing vg.Length
	width   vg.Length
}

// hatchCell is a unit cell centred at (x, y) in data coordinates, hatched
// in colour c.
type hatchCell struct {
	x, y float64
	c    color.Color
}

// Plot implements plot.Plotter.
func (h *hatch) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, cell := range h.cells {
		x0, x1 := trX(cell.x-0.5), trX(cell.x+0.5)
		y0, y1 := trY(cell.y-0.5), trY(cell.y+0.5)
		if x0 > x1 {
			x0, x1 = x1, x0
		}
		if y0 > y1 {
			y0, y1 = y1, y0
		}
		c.StrokeLines(draw.LineStyle{Color: cell.c, Width: h.width}, appendHatch(nil, x0, x1, y0, y1, h.spacing)...)
	}
}

// appendHatch appends to lines the 45° segments y = x − k, for k a
// multiple of spacing, that cross the rectangle [x0, x1] × [y0, y1], each
// clipped to the rectangle: x ∈ [max(x0, y0+k), min(x1, y1+k)]. Because k
// is on a global grid, the hatching of adjacent rectangles lines up.
func appendHatch(lines [][]vg.Point, x0, x1, y0, y1, spacing vg.Length) [][]vg.Point {
	first := vg.Length(math.Ceil(float64((x0-y1)/spacing))) * spacing
	for i := 0; ; i++ {
		k := first + vg.Length(i)*spacing
		if k > x1-y0 {
			break
		}
		a, b := max(x0, y0+k), min(x1, y1+k)
		if b-a < 1e-6 {
			continue
		}
		lines = append(lines, []vg.Point{{X: a, Y: a - k}, {X: b, Y: b - k}})
	}
	return lines
}

// heatPanel describes one heat map: title, D × L values (zero is blank),
// the colours, and the cells to hatch.
type heatPanel struct {
	title   string
	cells   []float64
	uniform bool // one colour for every non-zero cell (ground truth)
	hatched []bool
	max     float64
}

// HeatmapFigure draws, for one model of one setting, heat maps of the ground
// truth and of the cell scores of each of methods side by side (like the
// paper's Figure 3, which draws TIME and SAGE: HeatmapMethods): rows are
// features (names from the first explanation drawn, first feature on top),
// columns are timesteps numbered from 0. The truth colours the window of
// every relevant feature; explanations colour non-zero |score| cells,
// darker for larger scores, with a colour bar. Hatching marks the windows
// of features whose window ordering matters (truth) or was found important
// (an explanation with test outcomes, such as TIME's).
//
// The truth comes from the first record of the model (in the order of
// methods, then any other) that carries one. A method without a record
// with an explanation is left out; HeatmapFigure returns an error when no
// method can be drawn, when no record has the truth, or when the records
// are inconsistent (shapes, windows out of range).
func HeatmapFigure(recs []*record.Record, suite string, params []record.Param, model int, methods []string) (*Figure, error) {
	where := fmt.Sprintf("%s model %d", settingTitle(&Group{Suite: suite, Params: params}), model)
	of := func(method string) *record.Record {
		for _, r := range recs {
			if r != nil && r.Suite == suite && slices.Equal(r.Params, params) && r.Model == model && r.Method == method {
				return r
			}
		}
		return nil
	}
	var truth *record.Truth
	var drawn []*record.Record
	for _, m := range methods {
		r := of(m)
		if r == nil || r.Explanation == nil {
			continue
		}
		drawn = append(drawn, r)
		if truth == nil {
			truth = r.Truth
		}
	}
	for _, r := range recs {
		if truth == nil && r != nil && r.Suite == suite && slices.Equal(r.Params, params) && r.Model == model {
			truth = r.Truth
		}
	}
	if len(drawn) == 0 {
		return nil, fmt.Errorf("results: heat map of %s: no record of %s with an explanation", where, strings.Join(methods, ", "))
	}
	if truth == nil {
		return nil, fmt.Errorf("results: heat map of %s: no record with the ground truth", where)
	}
	e0 := drawn[0].Explanation
	d, l := e0.D, e0.L
	if err := checkExplanation(e0); err != nil {
		return nil, fmt.Errorf("results: heat map of %s: %s: %w", where, drawn[0].Method, err)
	}
	truthC, truthHatch, err := truthCells(truth, d, l)
	if err != nil {
		return nil, fmt.Errorf("results: heat map of %s: %w", where, err)
	}
	panels := []heatPanel{{title: "ground truth", cells: truthC, uniform: true, hatched: truthHatch, max: 1}}
	for _, r := range drawn {
		e := r.Explanation
		if err := checkExplanation(e); err != nil {
			return nil, fmt.Errorf("results: heat map of %s: %s: %w", where, r.Method, err)
		}
		if e.D != d || e.L != l {
			return nil, fmt.Errorf("results: heat map of %s: %s explains %d×%d cells, %s %d×%d", where, r.Method, e.D, e.L, drawn[0].Method, d, l)
		}
		var hatched []bool
		for j, f := range e.Features {
			// The windows whose ordering is important: each of a list of
			// windows, or the single window of an explanation without one.
			var ws []tempora.Window
			for _, w := range f.Windows {
				if w.OrderingImportant {
					ws = append(ws, w.Window)
				}
			}
			if len(f.Windows) == 0 && f.WindowOrderingImportant && f.Window != nil {
				ws = append(ws, *f.Window)
			}
			for _, w := range ws {
				if hatched == nil {
					hatched = make([]bool, d*l)
				}
				for t := max(w.Start, 0); t <= w.End && t < l; t++ {
					hatched[j*l+t] = true
				}
			}
		}
		panels = append(panels, scorePanel(r.Method, e, hatched))
	}
	names := make([]string, d)
	for j := range names {
		names[j] = strconv.Itoa(j)
		if j < len(e0.Features) && e0.Features[j].Name != "" {
			names[j] = e0.Features[j].Name
		}
	}
	return heatmapFigure(where, panels, d, l, names)
}

// checkExplanation checks the shape and values of an explanation's cells
// and the windows of its features.
func checkExplanation(e *tempora.Explanation) error {
	if e.D <= 0 || e.L <= 0 || len(e.Cells) != e.D*e.L {
		return fmt.Errorf("%d cells for %d features × %d timesteps", len(e.Cells), e.D, e.L)
	}
	for i, v := range e.Cells {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("cell %d is %v", i, v)
		}
	}
	for j, f := range e.Features {
		if w := f.Window; w != nil && (w.Start < 0 || w.End < w.Start || w.End >= e.L) {
			return fmt.Errorf("feature %d window %v outside [0, %d]", j, *w, e.L-1)
		}
	}
	return nil
}

// truthCells returns the D × L truth matrix (1 in the window of every
// relevant feature) and the cells to hatch (the windows of features whose
// window ordering matters).
func truthCells(tr *record.Truth, d, l int) (cells []float64, hatched []bool, err error) {
	if len(tr.Relevant) != d || len(tr.Windows) != d {
		return nil, nil, fmt.Errorf("truth has %d relevance flags and %d windows for %d features", len(tr.Relevant), len(tr.Windows), d)
	}
	if n := len(tr.WindowOrderingImportant); n != 0 && n != d {
		return nil, nil, fmt.Errorf("truth has %d window-ordering flags for %d features", n, d)
	}
	if tr.WindowLists != nil && len(tr.WindowLists) != d {
		return nil, nil, fmt.Errorf("truth has %d window lists for %d features", len(tr.WindowLists), d)
	}
	cells = make([]float64, d*l)
	hatched = make([]bool, d*l)
	for j, rel := range tr.Relevant {
		if !rel {
			continue
		}
		w := tr.Windows[j]
		if w.Start < 0 || w.End < w.Start || w.End >= l {
			return nil, nil, fmt.Errorf("truth window %v of feature %d outside [0, %d]", w, j, l-1)
		}
		ord := len(tr.WindowOrderingImportant) > 0 && tr.WindowOrderingImportant[j]
		for t := w.Start; t <= w.End; t++ {
			if !tr.InWindow(j, t) {
				continue
			}
			cells[j*l+t] = 1
			hatched[j*l+t] = ord
		}
	}
	return cells, hatched, nil
}

// scorePanel returns the panel of an explanation's |scores|, with scores
// below method.NearZero blank.
func scorePanel(title string, e *tempora.Explanation, hatched []bool) heatPanel {
	p := heatPanel{title: title, cells: make([]float64, len(e.Cells)), hatched: hatched}
	for i, v := range e.Cells {
		if a := math.Abs(v); a >= method.NearZero {
			p.cells[i] = a
			p.max = max(p.max, a)
		}
	}
	return p
}

// heatmapFigure lays out the panels side by side, each above its colour bar.
func heatmapFigure(where string, panels []heatPanel, d, l int, names []string) (*Figure, error) {
	xticks := timestepTicks(l)
	yticks := make(plot.ConstantTicks, d)
	for j := range d {
		yticks[j] = plot.Tick{Value: float64(d - 1 - j), Label: names[j]}
	}
	top := make([][]*plot.Plot, 1)
	bottom := make([][]*plot.Plot, 1)
	for i, hp := range panels {
		p := plot.New()
		p.Title.Text = hp.title
		p.X.Label.Text = "timestep"
		if i == 0 {
			p.Y.Label.Text = "feature"
		}
		p.X.Tick.Marker = xticks
		p.Y.Tick.Marker = yticks
		p.X.Tick.Label.Font.Size = 7
		p.Y.Tick.Label.Font.Size = 7
		p.X.Padding, p.Y.Padding = 0, 0
		hm := plotter.NewHeatMap(cellGrid{d: d, l: l, cells: hp.cells}, scorePalette(hp.uniform))
		hm.NaN = color.White
		hm.Min, hm.Max = 0, hp.max
		if hp.max == 0 {
			hm.Max = 1 // every cell is blank (NaN); any range will do
		}
		p.Add(hm, cellBorders(d, l))
		if cells := hatchedCells(hp, hm, d, l); len(cells) > 0 {
			p.Add(&hatch{cells: cells, spacing: vg.Points(4), width: vg.Points(0.7)})
		}
		top[0] = append(top[0], p)
		if hp.uniform {
			bottom[0] = append(bottom[0], nil)
			continue
		}
		bottom[0] = append(bottom[0], colorBar(hp.max))
	}
	const (
		capH = 0.55 * vg.Inch
		barH = 0.75 * vg.Inch
	)
	heatH := max(2.6*vg.Inch, vg.Length(d)*0.16*vg.Inch)
	panelW := max(3.3*vg.Inch, vg.Length(l)*0.1*vg.Inch)
	f := &Figure{Width: vg.Length(len(panels)) * panelW, Height: capH + heatH + barH}
	sub := "coloured: relevant window (truth) or non-zero |score|, darker is larger; hatched: window ordering matters (truth) or was found important"
	f.draw = func(c draw.Canvas) {
		caption(c, "Heat maps: "+where, 12, c.Max.Y-0.08*vg.Inch)
		caption(c, sub, 8, c.Max.Y-0.32*vg.Inch)
		tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: 0.25 * vg.Inch, PadLeft: 0.05 * vg.Inch,
			PadRight: 0.1 * vg.Inch, PadBottom: 0.05 * vg.Inch}
		heat := draw.Crop(c, 0, 0, barH, -capH)
		for i, cv := range plot.Align(top, tiles, heat)[0] {
			top[0][i].Draw(cv)
		}
		bars := draw.Crop(c, 0, 0, 0, -(capH + heatH))
		bars.Max.Y = bars.Min.Y + barH
		for i, cv := range plot.Align(bottom, tiles, bars)[0] {
			if bottom[0][i] != nil {
				bottom[0][i].Draw(draw.Crop(cv, 0.4*vg.Inch, -0.1*vg.Inch, 0, 0))
			}
		}
	}
	return f, nil
}

// scorePalette returns the heat maps' palette: the red ramp, or one colour
// for the ground truth.
func scorePalette(uniform bool) ramp {
	if uniform {
		return ramp{stops: []color.Color{truthColor}, n: 1}
	}
	return ramp{stops: scoreRamp, n: 256}
}

// timestepTicks labels timesteps 0…l−1: every one up to 20 timesteps,
// otherwise every fifth from 0 (the rest are unlabelled minor ticks).
func timestepTicks(l int) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, l)
	for t := range l {
		ticks[t] = plot.Tick{Value: float64(t)}
		if l <= 20 || t%5 == 0 {
			ticks[t].Label = strconv.Itoa(t)
		}
	}
	return ticks
}

// hatchedCells returns the hatched cells of a panel in grid coordinates,
// black on light cells and white on dark ones.
func hatchedCells(hp heatPanel, hm *plotter.HeatMap, d, l int) []hatchCell {
	pal := hm.Palette.Colors()
	var out []hatchCell
	for i, ok := range hp.hatched {
		if !ok {
			continue
		}
		j, t := i/l, i%l
		var bg color.Color = color.White
		if v := hp.cells[i]; v != 0 && hm.Max > hm.Min {
			bg = pal[int((v-hm.Min)/(hm.Max-hm.Min)*float64(len(pal)-1)+0.5)]
		} else if v != 0 {
			bg = pal[0]
		}
		out = append(out, hatchCell{x: float64(t), y: float64(d - 1 - j), c: contrast(bg)})
	}
	return out
}

// contrast returns black for light colours and white for dark ones, by
// relative luminance (ITU-R BT.709 weights on the 8-bit channels).
func contrast(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	if 0.2126*float64(r>>8)+0.7152*float64(g>>8)+0.0722*float64(b>>8) < 100 {
		return color.White
	}
	return color.Black
}

// borders is a plot.Plotter drawing thin grey lines between the rows and
// columns of a heat map, so blank cells stay legible.
type borders struct{ d, l int }

func cellBorders(d, l int) borders { return borders{d: d, l: l} }

// Plot implements plot.Plotter.
func (b borders) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	sty := draw.LineStyle{Color: color.Gray{Y: 225}, Width: vg.Points(0.3)}
	var lines [][]vg.Point
	for t := 0; t <= b.l; t++ {
		x := trX(float64(t) - 0.5)
		lines = append(lines, []vg.Point{{X: x, Y: trY(-0.5)}, {X: x, Y: trY(float64(b.d) - 0.5)}})
	}
	for r := 0; r <= b.d; r++ {
		y := trY(float64(r) - 0.5)
		lines = append(lines, []vg.Point{{X: trX(-0.5), Y: y}, {X: trX(float64(b.l) - 0.5), Y: y}})
	}
	c.StrokeLines(sty, lines...)
}

// colorBar returns a horizontal colour bar for scores in [0, max]: a one-row
// heat map of the ramp with the score on the x axis.
func colorBar(hi float64) *plot.Plot {
	p := plot.New()
	p.X.Label.Text = "|score|"
	p.X.Label.TextStyle.Font.Size = 8
	p.X.Tick.Label.Font.Size = 7
	p.HideY()
	p.X.Padding, p.Y.Padding = 0, 0
	if hi == 0 {
		p.X.Label.Text = "|score| (all zero)"
		hi = 1
	}
	const n = 128
	cells := make([]float64, n)
	for i := range cells {
		// Bin centres of [0, hi]; bin 0 sits above 0 so it is not blank.
		cells[i] = (float64(i) + 0.5) / n * hi
	}
	hm := plotter.NewHeatMap(barGrid{cells: cells, hi: hi}, scorePalette(false))
	hm.Min, hm.Max = 0, hi
	hm.Rasterized = true // no anti-aliasing seams between the bins
	p.Add(hm)
	return p
}

// barGrid is the one-row grid of a colour bar over [0, hi].
type barGrid struct {
	cells []float64
	hi    float64
}

func (g barGrid) Dims() (c, r int)   { return len(g.cells), 1 }
func (g barGrid) X(c int) float64    { return g.cells[c] }
func (g barGrid) Y(int) float64      { return 0 }
func (g barGrid) Z(c, _ int) float64 { return g.cells[c] }
