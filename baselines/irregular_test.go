package baselines

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// irregularProblem returns an M × D × L regression problem with missing
// values: instance i is a sequence of length in [lo, hi] (hi < L, so the
// last L − hi timesteps are padding in every instance), aligned at the
// start or the end, with each cell inside its sequence missing with
// probability rate (at random, but never all of an instance). Its values
// are N(1, 1), and its targets are those of the model nanLinear{a, b}.
func irregularProblem(t testing.TB, m, d, l, lo, hi int, rate float64, align tempora.Alignment, a []float64, b float64, seed uint64) (*tempora.Dataset, nanLinear) {
	t.Helper()
	rng := tempora.NewRand(seed, "irregular-test-data")
	x := tempora.NewTensor(m, d, l)
	for i := range m {
		n := lo + rng.IntN(hi-lo+1)
		first := 0
		if align == tempora.AlignEnd {
			first = l - n
		}
		for j := range d {
			for tt := range l {
				v := math.NaN()
				if tt >= first && tt < first+n && (rng.Float64() >= rate || tt == first) {
					v = 1 + rng.NormFloat64()
				}
				x.Set(i, j, tt, v)
			}
		}
	}
	f := nanLinear{a: a, b: b}
	y := make([]float64, m)
	if err := f.Predict(y, x); err != nil {
		t.Fatal(err)
	}
	data := &tempora.Dataset{X: x, Y: y, Task: tempora.Regression, Alignment: align}
	if _, err := data.Observe(1); err != nil {
		t.Fatal(err)
	}
	return data, f
}

// nanLinear is the model Σ a_c·x_c over an instance's observed cells plus
// b per missing (NaN) cell: it takes NaN as it comes, and its output moves
// if an explainer fills a missing cell or padding with a value.
type nanLinear struct {
	a []float64
	b float64
}

func (f nanLinear) Predict(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		var s float64
		for c, v := range x.Instance(i) {
			if tempora.Missing(v) {
				s += f.b
			} else {
				s += f.a[c] * v
			}
		}
		dst[i] = s
	}
	return nil
}

// irregularWeights returns the weights of a model of d = 3 features × l
// timesteps whose feature 0 matters most, feature 1 a little and feature
// 2 not at all.
func irregularWeights(l int) []float64 {
	a := make([]float64, 3*l)
	for tt := range l {
		a[tt] = 2
		a[l+tt] = 0.5
	}
	return a
}

// TestOcclusionIrregular checks OCC on data with missing values against
// the exact occlusion of the observed cells: a window replaces only the
// observed cells of its instances (missing cells and padding stay NaN, so
// the model's count of missing cells never moves), its score is the mean
// |Δ_i| over the instances in which it occluded something, cells that no
// instance observes score 0, and an instance's unobserved cell has no
// attribution. The important feature ranks first.
func TestOcclusionIrregular(t *testing.T) {
	const m, d, l = 40, 3, 10
	a := irregularWeights(l)
	for _, align := range []tempora.Alignment{tempora.AlignStart, tempora.AlignEnd} {
		data, f := irregularProblem(t, m, d, l, 4, 8, 0.3, align, a, 0.75, 11)
		x := data.X
		for _, cfg := range []Occlusion{{Workers: 2}, {Width: 3, Stride: 2, Baseline: MeanBaseline, Workers: 3}, {Width: 2, Baseline: EventBaseline}} {
			r, err := cfg.Attribute(context.Background(), f, data)
			if err != nil {
				t.Fatal(err)
			}
			u, err := cfg.resolve(data)
			if err != nil {
				t.Fatal(err)
			}
			fill, _ := u.b.values(x)
			cells := make([]float64, d*l)
			local := make([]float64, m*d*l)
			cover := make([]float64, l)
			for _, win := range u.wins {
				for tt := win[0]; tt < win[1]; tt++ {
					cover[tt]++
				}
			}
			for j := range d {
				for _, win := range u.wins {
					var sum, n float64
					deltas := make([]float64, m)
					for i := range m {
						hit := false
						for tt := win[0]; tt < win[1]; tt++ {
							if v := x.At(i, j, tt); !tempora.Missing(v) {
								deltas[i] += a[j*l+tt] * (v - fill[j*l+tt])
								hit = true
							}
						}
						if hit {
							sum += math.Abs(deltas[i])
							n++
						}
					}
					for tt := win[0]; tt < win[1]; tt++ {
						seen := false
						for i := range m {
							if !tempora.Missing(x.At(i, j, tt)) {
								seen = true
								local[x.Index(i, j, tt)] += deltas[i] / cover[tt]
							}
						}
						if seen && n > 0 {
							cells[j*l+tt] += sum / n / cover[tt]
						}
					}
				}
			}
			// Sums of at most a few hundred terms of order 10: 1e-9 is far
			// above rounding.
			for k, want := range cells {
				if got := r.Explanation.Cells[k]; math.Abs(got-want) > 1e-9 {
					t.Errorf("%v %+v: cell (%d, %d) = %v, want %v", align, cfg, k/l, k%l, got, want)
				}
			}
			for k, want := range local {
				if got := r.Local.Data[k]; math.Abs(got-want) > 1e-9 {
					t.Fatalf("%v %+v: local value %d = %v, want %v", align, cfg, k, got, want)
				}
			}
			// Timesteps 8 and 9 (start-aligned) or 0 and 1 (end-aligned)
			// are padding in every instance.
			pad := []int{8, 9}
			if align == tempora.AlignEnd {
				pad = []int{0, 1}
			}
			for j := range d {
				for _, tt := range pad {
					if v := r.Explanation.Cell(j, tt); v != 0 {
						t.Errorf("%v %+v: padding cell (%d, %d) scores %v", align, cfg, j, tt, v)
					}
				}
			}
			fs := r.Explanation.Features
			if !(fs[0].Score > fs[1].Score && fs[1].Score > fs[2].Score && fs[2].Score == 0) {
				t.Errorf("%v %+v: feature scores %v, %v, %v, want decreasing with the last 0", align, cfg, fs[0].Score, fs[1].Score, fs[2].Score)
			}
		}
	}
}

// TestOcclusionCallPlans checks that how OCC packs its units into model
// calls (several copies of small data per call, one copy per call, or
// chunks of instances under a tight memory budget) changes the calls but
// not one bit of the result, on complete and irregular data, for any
// number of workers.
func TestOcclusionCallPlans(t *testing.T) {
	complete, f := linearProblem(t, 30, 3, 6, slices.Repeat([]float64{1, -2, 0.5}, 6), nil, slices.Repeat([]float64{1}, 18), 5)
	orig, origPack := occChunkValues, occPackValues
	defer func() { occChunkValues, occPackValues = orig, origPack }()
	irregular, g := irregularProblem(t, 30, 3, 6, 2, 5, 0.2, tempora.AlignStart, irregularWeights(6), 0.3, 6)
	for _, p := range []struct {
		name  string
		data  *tempora.Dataset
		model tempora.Model
	}{{"complete", complete, f}, {"irregular", irregular, g}} {
		var want *OcclusionResult
		for _, plan := range []struct {
			chunk  int
			budget int64
			calls  int64
		}{
			{orig, 0, 2},                       // every unit in one call
			{3 * 30 * 18, 0, 1 + 5},            // 3 of the 15 units per call
			{30 * 18, 0, 1 + 15},               // one unit per call
			{7 * 18, 3 * 8 * 7 * 18, 1 + 15*5}, // chunks of 7 instances: 5 per unit (the budget holds one per worker)
		} {
			for _, workers := range []int{1, 3} {
				occChunkValues, occPackValues = plan.chunk, plan.chunk
				r, err := Occlusion{Width: 2, Baseline: MeanBaseline, Workers: workers, MemoryBudget: plan.budget}.Attribute(context.Background(), p.model, p.data)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.Explanation.Accounting.ModelCalls; got != plan.calls {
					t.Errorf("%s, chunk %d, budget %d: %d model calls, want %d", p.name, plan.chunk, plan.budget, got, plan.calls)
				}
				if want == nil {
					want = r
					continue
				}
				if !sameFloats(r.Explanation.Cells, want.Explanation.Cells) || !sameFloats(r.Local.Data, want.Local.Data) {
					t.Errorf("%s, chunk %d, budget %d, %d workers: the result differs from the first plan's", p.name, plan.chunk, plan.budget, workers)
				}
			}
		}
	}
}

// TestRefusedIrregular checks that the methods that need complete data
// refuse data with missing values with the uniform message, naming the
// method, the first missing value and why.
func TestRefusedIrregular(t *testing.T) {
	data, f := irregularProblem(t, 20, 3, 6, 3, 5, 0.2, tempora.AlignStart, irregularWeights(6), 0, 2)
	for _, tc := range []struct {
		ex   tempora.Explainer
		name string
	}{
		{LIME{}, "LIME"},
	} {
		_, err := tc.ex.Explain(context.Background(), f, data)
		want := "baselines: " + tc.name + " needs complete data, and in this data "
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "the first at instance ") ||
			!strings.Contains(err.Error(), "sequences are shorter than the data's 6 timesteps") || !strings.Contains(err.Error(), "tempora does not impute") {
			t.Errorf("%s: %v, want an error starting %q", tc.name, err, want)
		}
	}
}

// oneCell is a model of the single cell (feature 0, timestep 1): x² when
// it is observed, 3 when it is missing (NaN). Every other cell is ignored,
// but it refuses a row whose last timestep, padding in every instance of
// TestSAGEIrregular's data, holds a value.
func oneCell(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		for j := range x.D {
			if v := x.At(i, j, x.L-1); !tempora.Missing(v) {
				return fmt.Errorf("padding cell (%d, %d) of row %d holds %v", j, x.L-1, i, v)
			}
		}
		v := x.At(i, 0, 1)
		dst[i] = v * v
		if tempora.Missing(v) {
			dst[i] = 3
		}
	}
	return nil
}

// TestSAGEIrregular checks the three SAGE imputers on data with missing
// values against their exact values, on the model oneCell with targets
// y = f(x) and quadratic loss, as TestSAGEImputers does on complete data.
//
// Where the expectation comes from: a coalition containing the cell
// predicts y exactly (loss 0); one without it predicts a constant k, so
// every row's sample for the cell is (y_i − k)² and every other column's,
// padding included, is exactly 0. k is the background mean of f for
// marginal imputation, where a background row's missing cell comes with
// its missingness (f = 3), f at the mean of the observed values for
// SAGE-m, and f(0) = 0 for SAGE-z. The SAGE value is the data mean of
// (y_i − k)², estimated from N rows sampled with replacement with
// SE = SD_data((y − k)²)/√N.
func TestSAGEIrregular(t *testing.T) {
	const (
		m, d, l = 400, 2, 6
		perms   = 2000
		bg      = 100
		z       = 4.0 // tolerance in standard errors
	)
	data, _ := irregularProblem(t, m, d, l, 4, 5, 0.3, tempora.AlignStart, make([]float64, d*l), 0, 8)
	f := tempora.ModelFunc(oneCell)
	if err := f.Predict(data.Y, data.X); err != nil {
		t.Fatal(err)
	}
	var obsMean, nObs, bgMean float64
	for i := range m {
		if v := data.X.At(i, 0, 1); !tempora.Missing(v) {
			obsMean += v
			nObs++
		}
		if i < bg {
			bgMean += data.Y[i] / bg
		}
	}
	if nObs == m || nObs < m/2 {
		t.Fatalf("the cell is observed in %v of %d instances; the test needs some missing", nObs, m)
	}
	for _, tc := range []struct {
		imp Imputer
		k   float64
	}{
		{Marginal, bgMean},
		{Mean, (obsMean / nObs) * (obsMean / nObs)},
		{Zero, 0},
	} {
		var mean, sq float64
		for _, y := range data.Y {
			s := (y - tc.k) * (y - tc.k)
			mean += s / m
			sq += s * s / m
		}
		se := math.Sqrt((sq - mean*mean) / perms)
		r, err := SAGE{Imputer: tc.imp, Background: bg, MaxPermutations: perms, Seed: 4, Workers: 2}.Estimate(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Values[1]; math.Abs(got-mean) > z*se {
			t.Errorf("%v: the cell's value %.4f, want %.4f ± %.4f", tc.imp, got, mean, z*se)
		}
		for c, v := range r.Values {
			if c != 1 && v != 0 {
				t.Errorf("%v: column (%d, %d) has value %v, want exactly 0", tc.imp, c/l, c%l, v)
			}
		}
	}
}

// TestPERMIrregular checks PERM on data with missing values, which it
// takes exactly when and as TIME's across-instance tests do (its cell
// tests are theirs, under TIME's length rule): the padding cells, which no
// permutation moves under any rule that keeps a receiver's padding, score
// 0 (up to the rounding of a mean of equal losses) and are never
// significant, the unused feature scores 0, and the important feature's
// observed cells are found. It is skipped while explain's engine refuses
// missing values.
func TestPERMIrregular(t *testing.T) {
	const m, d, l = 60, 3, 10
	data, f := irregularProblem(t, m, d, l, 5, 8, 0.2, tempora.AlignStart, irregularWeights(l), 0, 12)
	r, err := PERM{Seed: 5, Workers: 2}.Analyze(context.Background(), f, data)
	if err != nil && strings.Contains(err.Error(), "needs complete data") && strings.Contains(err.Error(), "explain: ") {
		t.Skipf("explain's engine does not take missing values yet: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for j := range d {
		for tt := range l {
			k := j*l + tt
			switch {
			case tt >= 8 || j == 2:
				// Padding everywhere, or a feature the model ignores: every
				// draw's loss is the baseline's. 1e-12 covers the rounding
				// of a mean of equal losses of order 1.
				if math.Abs(r.Scores[k]) > 1e-12 || r.Significant[k] {
					t.Errorf("cell (%d, %d): score %v, significant %v; want 0 and not", j, tt, r.Scores[k], r.Significant[k])
				}
			case j == 0 && tt < 5:
				// Observed in 80% of the 60 instances, weight 2 on N(1, 1)
				// values: a loss increase of about 2·4·0.8·Var = 6.4,
				// against a null spread of well under 1.
				if !r.Significant[k] {
					t.Errorf("cell (%d, %d): score %v, p %v, not significant", j, tt, r.Scores[k], r.PValues[k])
				}
			}
		}
	}
}

// TestTimeSHAPIrregular checks TimeSHAP on data with missing values
// against the exact Shapley values of an additive model, nanLinear, whose
// players' values are Σ a_c·(x_c − b_c) over their observed cells (an
// absent player replaces only its observed cells by the baseline b; its
// missing cells stay NaN, so the model's count of them never moves). A
// player's value is shared among its observed cells; missing cells and
// padding get 0. The recent timesteps are each instance's own last ones,
// and KernelSHAP recovers an additive model exactly from any coalitions.
// The model refuses a row whose padding (timesteps 8 and 9 of every
// instance) holds a value.
func TestTimeSHAPIrregular(t *testing.T) {
	for _, align := range []tempora.Alignment{tempora.AlignStart, tempora.AlignEnd} {
		timeSHAPIrregular(t, align)
	}
}

func timeSHAPIrregular(t *testing.T, align tempora.Alignment) {
	const m, d, l = 12, 3, 10
	data, f := irregularProblem(t, m, d, l, 4, 8, 0.25, align, irregularWeights(l), 0.5, 13)
	pad := []int{8, 9}
	if align == tempora.AlignEnd {
		pad = []int{0, 1}
	}
	guard := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			for j := range d {
				for _, tt := range pad {
					if v := x.At(i, j, tt); !tempora.Missing(v) {
						return fmt.Errorf("padding cell (%d, %d) of row %d holds %v", j, tt, i, v)
					}
				}
			}
		}
		return f.Predict(dst, x)
	})
	obs, err := data.Observe(1)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := EventBaseline.values(data.X)
	for _, tc := range []struct {
		cfg TimeSHAP
		// players returns the players' cells of an instance spanning sup
		// with k recent timesteps, before dropping unobserved cells.
		players func(sup tempora.Window, k int) [][]int
	}{
		{TimeSHAP{Recent: l, Instances: m, Samples: 300}, func(sup tempora.Window, k int) [][]int {
			var g [][]int
			for j := range d {
				for tt := sup.Start; tt <= sup.End; tt++ {
					g = append(g, []int{j*l + tt})
				}
			}
			return g
		}},
		{TimeSHAP{Level: EventLevel, Recent: 2, Instances: m}, func(sup tempora.Window, k int) [][]int {
			var g [][]int
			for tt := sup.End - k + 1; tt <= sup.End; tt++ {
				var e []int
				for j := range d {
					e = append(e, j*l+tt)
				}
				g = append(g, e)
			}
			var old []int
			for j := range d {
				for tt := sup.Start; tt <= sup.End-k; tt++ {
					old = append(old, j*l+tt)
				}
			}
			return append(g, old)
		}},
	} {
		r, err := tc.cfg.Attribute(context.Background(), guard, data)
		if err != nil {
			t.Fatal(err)
		}
		for i := range m {
			sup := obs.Support[i]
			k := min(tc.cfg.Recent, sup.Len())
			if r.Recent[i] != k {
				t.Errorf("%v %+v: instance %d kept %d recent timesteps, want %d", align, tc.cfg, i, r.Recent[i], k)
			}
			x := data.X.Instance(i)
			want := make([]float64, d*l)
			for _, g := range tc.players(sup, k) {
				var phi, n float64
				for _, c := range g {
					if !tempora.Missing(x[c]) {
						phi += f.a[c] * (x[c] - base[c])
						n++
					}
				}
				for _, c := range g {
					if !tempora.Missing(x[c]) {
						want[c] = phi / n
					}
				}
			}
			// A regression on a few hundred coalitions of values of order
			// 10: 1e-9 is far above rounding.
			for c, w := range want {
				if got := r.Local.At(i, c/l, c%l); math.Abs(got-w) > 1e-9 {
					t.Errorf("%v %+v: instance %d cell (%d, %d) = %v, want %v", align, tc.cfg, i, c/l, c%l, got, w)
				}
			}
		}
		for j := range d {
			for _, tt := range pad {
				if v := r.Explanation.Cell(j, tt); v != 0 {
					t.Errorf("%v %+v: padding cell (%d, %d) scores %v", align, tc.cfg, j, tt, v)
				}
			}
		}
	}
	// Pruning on irregular data keeps between 1 and the sequence's length.
	r, err := TimeSHAP{Instances: m}.Attribute(context.Background(), guard, data)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range r.Recent {
		if k < 1 || k > obs.Support[i].Len() {
			t.Errorf("pruning kept %d recent timesteps of instance %d's %d", k, i, obs.Support[i].Len())
		}
	}
}

// TestModelErrorsIrregular checks that a model that cannot take NaN fails
// on irregular data with an error that names the data instance the bad
// row was made from and says that tempora never imputes.
func TestModelErrorsIrregular(t *testing.T) {
	data, _ := irregularProblem(t, 20, 3, 6, 3, 5, 0.2, tempora.AlignStart, irregularWeights(6), 0, 3)
	f := linear{irregularWeights(6)} // NaN in, NaN out
	for _, tc := range []struct {
		ex   tempora.Explainer
		want string
	}{
		// OCC's first call predicts the data's instances themselves.
		{Occlusion{}, "predicted NaN for instance "},
		{SAGE{Imputer: Mean, MaxPermutations: 8}, "of the call is instance "},
		{TimeSHAP{Instances: 3}, "of the call is instance "},
	} {
		_, err := tc.ex.Explain(context.Background(), f, data)
		if err == nil || !strings.HasPrefix(err.Error(), "baselines: model: tempora: predicted NaN") ||
			!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "tempora never imputes") {
			t.Errorf("%T: %v", tc.ex, err)
		}
	}
}
