package baselines

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

func TestOcclusionWindows(t *testing.T) {
	for _, tc := range []struct {
		l, w, s int
		want    [][2]int
	}{
		{5, 1, 1, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}},
		{5, 2, 2, [][2]int{{0, 2}, {2, 4}, {4, 5}}}, // the last cut off, as captum's
		{5, 3, 1, [][2]int{{0, 3}, {1, 4}, {2, 5}}},
		{5, 5, 3, [][2]int{{0, 5}}},
		{6, 3, 3, [][2]int{{0, 3}, {3, 6}}},
		{7, 3, 2, [][2]int{{0, 3}, {2, 5}, {4, 7}}},
	} {
		got := occlusionWindows(tc.l, tc.w, tc.s)
		if !slices.Equal(got, tc.want) {
			t.Errorf("l=%d w=%d s=%d: windows %v, want %v", tc.l, tc.w, tc.s, got, tc.want)
		}
	}
}

// TestOcclusionLinear checks Occlusion exactly on a linear model
// f(x) = Σ a_c x_c, where occluding the window W of feature j with
// baseline b changes the output by Δ_i = Σ_{t∈W} a_jt (x_ijt − b_jt): the
// per-instance attribution of a cell averages that over its windows, and
// its global score averages mean_i |Δ_i|.
func TestOcclusionLinear(t *testing.T) {
	const d, l, m = 2, 5, 30
	a := []float64{2, -1, 0.5, 0, 1.5, 0, 0, -3, 1, 0.25}
	sd := []float64{1, 2, 0.5, 1, 3, 1, 1, 0.25, 2, 1}
	mu := []float64{1, 0, -1, 0, 2, 0, 3, 0, 0, 1}
	data, f := linearProblem(t, m, d, l, a, mu, sd, 4)
	for _, tc := range []struct {
		cfg  Occlusion
		fill func(c int) float64
	}{
		{Occlusion{}, func(int) float64 { return 0 }},
		{Occlusion{Width: 2, Stride: 2, Baseline: MeanBaseline}, func(c int) float64 { mean, _ := columnMoments(data.X, c, m); return mean }},
		{Occlusion{Width: 3, Baseline: EventBaseline}, func(c int) float64 {
			j := c / l
			var s float64
			for t := range l {
				mean, _ := columnMoments(data.X, j*l+t, m)
				s += mean
			}
			return s / l
		}},
	} {
		w, s := max(tc.cfg.Width, 1), max(tc.cfg.Stride, 1)
		r, err := tc.cfg.Attribute(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		wins := occlusionWindows(l, w, s)
		for j := range d {
			for tt := range l {
				var cells, n float64
				local := make([]float64, m)
				for _, win := range wins {
					if tt < win[0] || tt >= win[1] {
						continue
					}
					n++
					var mean float64
					for i := range m {
						var delta float64
						for u := win[0]; u < win[1]; u++ {
							c := j*l + u
							delta += a[c] * (data.X.At(i, j, u) - tc.fill(c))
						}
						local[i] += delta
						mean += math.Abs(delta) / m
					}
					cells += mean
				}
				// Sums of a few dozen terms of order 10: 1e-9 is far
				// above rounding.
				if got, want := r.Explanation.Cell(j, tt), cells/n; math.Abs(got-want) > 1e-9 {
					t.Errorf("%+v: cell (%d, %d) = %v, want %v", tc.cfg, j, tt, got, want)
				}
				for i := range m {
					if got, want := r.Local.At(i, j, tt), local[i]/n; math.Abs(got-want) > 1e-9 {
						t.Fatalf("%+v: instance %d cell (%d, %d) = %v, want %v", tc.cfg, i, j, tt, got, want)
					}
				}
			}
		}
		// The data is small, so every unit (feature, window) is packed into
		// one call with the others: the unoccluded call and one more.
		units := int64(d * len(wins))
		if acc := r.Explanation.Accounting; acc.ModelCalls != 2 || acc.InstanceEvals != (1+units)*m {
			t.Errorf("%+v: accounting %+v, want 2 calls and %d instance evaluations", tc.cfg, acc, (1+units)*m)
		}
		if r.Explanation.Method != "OCC" {
			t.Errorf("method %q", r.Explanation.Method)
		}
	}
}

// windowModel is a nonlinear model of feature 1's window [3, 6] only: the
// square of the window's maximum. Every other cell is irrelevant.
func windowModel(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		v := math.Inf(-1)
		for _, u := range x.Window(i, 1, 3, 6) {
			v = math.Max(v, u)
		}
		dst[i] = v * v
	}
	return nil
}

// rankCheck reports the relevant cells (feature 1, timesteps 3–6) whose
// score is not above every other cell's.
func rankCheck(t *testing.T, name string, e *tempora.Explanation) {
	t.Helper()
	lowest, highest := math.Inf(1), math.Inf(-1)
	for j := range e.D {
		for tt := range e.L {
			v := math.Abs(e.Cell(j, tt))
			if j == 1 && tt >= 3 && tt <= 6 {
				lowest = math.Min(lowest, v)
			} else {
				highest = math.Max(highest, v)
			}
		}
	}
	if !(lowest > highest) {
		t.Errorf("%s: the lowest relevant cell scores %v, an irrelevant one %v; cells %v", name, lowest, highest, e.Cells)
	}
}

// TestOcclusionRanksWindow checks that Occlusion ranks the cells of the
// model's window above the rest. The model reads nothing outside the
// window, so occluding a window of irrelevant cells changes nothing and
// scores exactly 0, while every relevant cell moves the maximum of some
// instances.
func TestOcclusionRanksWindow(t *testing.T) {
	x := gaussian(200, 3, 10, nil, slices.Repeat([]float64{1}, 30), 9)
	data := &tempora.Dataset{X: x, Y: make([]float64, 200)}
	for _, cfg := range []Occlusion{{}, {Baseline: MeanBaseline}} {
		e, err := cfg.Explain(context.Background(), tempora.ModelFunc(windowModel), data)
		if err != nil {
			t.Fatal(err)
		}
		rankCheck(t, "OCC "+cfg.Baseline.String(), e)
	}
}

func TestOcclusionBadInput(t *testing.T) {
	checkBadConfigs(t, []badConfig[Occlusion]{
		{Occlusion{Width: 5}, "Width is 5, want 1 to the 4 timesteps"},
		{Occlusion{Width: -1}, "Width is -1"},
		{Occlusion{Stride: -2}, "Stride is -2"},
		{Occlusion{Width: 2, Stride: 3}, "Stride is 3, want 1 to the width 2"},
		{Occlusion{Baseline: 9}, "unknown baseline 9"},
		{Occlusion{Workers: -1}, "Workers is -1"},
	})
	if _, err := ParseBaseline("median"); err == nil || !strings.Contains(err.Error(), `"median"`) {
		t.Errorf("ParseBaseline(median): %v", err)
	}
	for _, b := range []Baseline{DefaultBaseline, ZeroBaseline, MeanBaseline, EventBaseline} {
		if got, err := ParseBaseline(b.String()); err != nil || got != b {
			t.Errorf("ParseBaseline(%q) = %v, %v", b.String(), got, err)
		}
	}
}
