package baselines

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/tempora-dev/tempora"
)

// eventMeans returns TimeSHAP's default baseline for x: feature j's mean
// over instances and timesteps, at every timestep.
func eventMeans(x *tempora.Tensor) []float64 {
	b := make([]float64, x.D*x.L)
	for j := range x.D {
		var s float64
		for i := range x.M {
			for _, v := range x.Series(i, j) {
				s += v
			}
		}
		for t := range x.L {
			b[j*x.L+t] = s / float64(x.M*x.L)
		}
	}
	return b
}

// TestTimeSHAPLinear checks TimeSHAP on a linear model f(x) = Σ a_c x_c,
// whose Shapley value for a player G against baseline b is exactly
// Σ_{c∈G} a_c (x_c − b_c). KernelSHAP's regression fits a linear model's
// coalition values without error whatever coalitions it draws (the values
// are additive in the players), so sampled and enumerated runs alike must
// match to rounding, and each cell gets its player's value shared equally.
func TestTimeSHAPLinear(t *testing.T) {
	const d, l, m = 2, 5, 40
	a := []float64{2, -1, 0.5, 0, 1.5, 0.3, 0, -3, 1, 0.25}
	sd := []float64{1, 2, 0.5, 1, 3, 1, 1, 0.25, 2, 1}
	data, f := linearProblem(t, m, d, l, a, nil, sd, 6)
	b := eventMeans(data.X)
	for _, tc := range []struct {
		name string
		cfg  TimeSHAP
		// group returns the player of cell c with k recent timesteps, as
		// a list of cells.
		group func(c, k int) []int
	}{
		{"cell, all recent, enumerated", TimeSHAP{Recent: l, Instances: 10}, cellGroup},
		{"cell, all recent, sampled", TimeSHAP{Recent: l, Samples: 200, Instances: 10}, cellGroup},
		{"cell, 2 recent", TimeSHAP{Recent: 2, Samples: 100, Instances: 10}, cellGroup},
		{"event, 3 recent", TimeSHAP{Level: EventLevel, Recent: 3, Instances: 10}, eventGroup},
		{"feature, 4 recent", TimeSHAP{Level: FeatureLevel, Recent: 4, Instances: 10}, featureGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.cfg.Attribute(context.Background(), f, data)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.cfg.Instances {
				if r.Recent[i] != tc.cfg.Recent {
					t.Errorf("instance %d kept %d recent timesteps, want %d", i, r.Recent[i], tc.cfg.Recent)
				}
				x := data.X.Instance(i)
				for c := range d * l {
					g := tc.group(c, tc.cfg.Recent)
					if c%l < l-tc.cfg.Recent {
						g = pruned(d, l, tc.cfg.Recent)
					}
					var want float64
					for _, u := range g {
						want += a[u] * (x[u] - b[u])
					}
					want /= float64(len(g))
					// Least squares on a few hundred exact rows: 1e-9 is far
					// above rounding and far below any error of the method.
					if got := r.Local.Data[i*d*l+c]; math.Abs(got-want) > 1e-9 {
						t.Errorf("instance %d cell %d: %v, want %v", i, c, got, want)
					}
				}
			}
			for c := range d * l {
				var want float64
				for i := range tc.cfg.Instances {
					want += math.Abs(r.Local.Data[i*d*l+c])
				}
				if got := r.Explanation.Cells[c]; math.Abs(got-want/float64(tc.cfg.Instances)) > 1e-12 {
					t.Errorf("cell %d: global %v, want mean |local| %v", c, got, want/float64(tc.cfg.Instances))
				}
			}
			if acc := r.Explanation.Accounting; acc.ModelCalls != int64(tc.cfg.Instances) {
				t.Errorf("accounting %+v, want one call per instance with Recent set", acc)
			}
		})
	}
}

func cellGroup(c, _ int) []int { return []int{c} }

func eventGroup(c, _ int) []int {
	const d, l = 2, 5
	g := make([]int, d)
	for j := range d {
		g[j] = j*l + c%l
	}
	return g
}

func featureGroup(c, k int) []int {
	const l = 5
	var g []int
	for t := l - k; t < l; t++ {
		g = append(g, c/l*l+t)
	}
	return g
}

func pruned(d, l, k int) []int {
	var g []int
	for j := range d {
		for t := range l - k {
			g = append(g, j*l+t)
		}
	}
	return g
}

// shapley returns the exact Shapley values of the players (lists of cells)
// for instance x against baseline b, by the subset formula.
func shapley(f tempora.Model, x, b []float64, d, l int, players [][]int) []float64 {
	n := len(players)
	row := func(set int) []float64 {
		r := slices.Clone(b)
		for q, g := range players {
			if set&(1<<q) != 0 {
				for _, c := range g {
					r[c] = x[c]
				}
			}
		}
		return r
	}
	v := make([]float64, 1<<n)
	for set := range v {
		in, _ := tempora.TensorFrom(1, d, l, row(set))
		f.Predict(v[set:set+1], in)
	}
	fact := func(k int) float64 {
		r := 1.0
		for i := 2; i <= k; i++ {
			r *= float64(i)
		}
		return r
	}
	phi := make([]float64, n)
	for q := range n {
		for set := range v {
			if set&(1<<q) != 0 {
				continue
			}
			s := 0
			for u := set; u != 0; u &= u - 1 {
				s++
			}
			phi[q] += fact(s) * fact(n-s-1) / fact(n) * (v[set|1<<q] - v[set])
		}
	}
	return phi
}

// interacting is a nonlinear model with interactions between cells and
// timesteps: x₀,₁·x₁,₂ + sin(x₀,₂) + max(x₁,₀, x₁,₁)² + x₀,₀·x₁,₁·x₀,₂. The
// three-way term makes TestTimeSHAPExactShapley sensitive to the kernel
// weights: without it, corrupting the relative weights of the subset sizes
// went undetected.
func interacting(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		dst[i] = x.At(i, 0, 1)*x.At(i, 1, 2) + math.Sin(x.At(i, 0, 2)) + math.Pow(math.Max(x.At(i, 1, 0), x.At(i, 1, 1)), 2) +
			x.At(i, 0, 0)*x.At(i, 1, 1)*x.At(i, 0, 2)
	}
	return nil
}

// TestTimeSHAPExactShapley checks that, when its budget covers every
// coalition, TimeSHAP returns the exact Shapley values of a nonlinear
// model with interactions (KernelSHAP with all 2^P − 2 coalitions and the
// Shapley kernel is exact), at the cell level (6 players) and the event
// level with a pruned coalition (2 recent events + 1 pruned).
func TestTimeSHAPExactShapley(t *testing.T) {
	const d, l, m = 2, 3, 8
	x := gaussian(m, d, l, nil, slices.Repeat([]float64{1}, d*l), 2)
	data := &tempora.Dataset{X: x, Y: make([]float64, m)}
	f := tempora.ModelFunc(interacting)
	b := eventMeans(x)
	for _, tc := range []struct {
		cfg     TimeSHAP
		players [][]int
	}{
		{TimeSHAP{Recent: 3}, [][]int{{0}, {1}, {2}, {3}, {4}, {5}}},
		{TimeSHAP{Level: EventLevel, Recent: 2}, [][]int{{1, 4}, {2, 5}, {0, 3}}},
		{TimeSHAP{Level: FeatureLevel, Recent: 2}, [][]int{{1, 2}, {4, 5}, {0, 3}}},
	} {
		r, err := tc.cfg.Attribute(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		for i := range m {
			phi := shapley(f, x.Instance(i), b, d, l, tc.players)
			for q, g := range tc.players {
				for _, c := range g {
					want := phi[q] / float64(len(g))
					if got := r.Local.Data[i*d*l+c]; math.Abs(got-want) > 1e-9 {
						t.Errorf("%v instance %d cell %d: %v, want the exact Shapley share %v", tc.cfg.Level, i, c, got, want)
					}
				}
			}
		}
	}
}

// TestTimeSHAPPruning checks the temporal coalition pruning on a linear
// model of the last two timesteps of feature 0, f = x₀,L−2 + x₀,L−1. With
// k = 1 recent timestep the older block holds x₀,L−2, whose exact Shapley
// value is x₀,L−2 − b₀; with k = 2 it holds nothing the model reads (value
// 0). So an instance keeps 2 timesteps when |x₀,L−2 − b₀| exceeds the
// tolerance and 1 otherwise.
func TestTimeSHAPPruning(t *testing.T) {
	const d, l, m = 2, 6, 60
	a := make([]float64, d*l)
	a[l-2], a[l-1] = 1, 1
	// A small SD so that some instances fall within the tolerance.
	data, f := linearProblem(t, m, d, l, a, nil, slices.Repeat([]float64{0.05}, d*l), 8)
	b := eventMeans(data.X)
	const tol = 0.03
	r, err := TimeSHAP{Tolerance: tol, Instances: m}.Attribute(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	var ones, twos int
	for i := range m {
		want := 1
		if math.Abs(data.X.At(i, 0, l-2)-b[l-2]) > tol {
			want = 2
		}
		if r.Recent[i] != want {
			t.Errorf("instance %d kept %d recent timesteps, want %d", i, r.Recent[i], want)
		}
		if want == 1 {
			ones++
		} else {
			twos++
		}
	}
	if ones == 0 || twos == 0 {
		t.Fatalf("the test data should exercise both outcomes (%d ones, %d twos)", ones, twos)
	}
	if acc := r.Explanation.Accounting; acc.ModelCalls != 2*m {
		t.Errorf("accounting %+v, want a pruning call and a KernelSHAP call per instance", acc)
	}
}

// TestTimeSHAPRanksWindow checks that TimeSHAP ranks the cells of the
// window model's window (feature 1, timesteps 3–6) above every other cell.
// Cells outside the window are null players: their exact Shapley values
// are 0, and the pruned cells (before timestep 3, once pruning has kept
// the window) share a pruned value of exactly 0. Their KernelSHAP
// estimates carry only the regression's sampling error, which the ranking
// must clear.
func TestTimeSHAPRanksWindow(t *testing.T) {
	x := gaussian(200, 3, 10, nil, slices.Repeat([]float64{1}, 30), 9)
	data := &tempora.Dataset{X: x, Y: make([]float64, 200)}
	for _, cfg := range []TimeSHAP{{Instances: 30, Seed: 1}, {Level: EventLevel, Instances: 30, Seed: 1}} {
		e, err := cfg.Explain(context.Background(), tempora.ModelFunc(windowModel), data)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Level == EventLevel {
			// An event's value is shared by all its features, so only
			// the timesteps can be ranked: compare feature 1's row.
			e.Cells = append(slices.Repeat([]float64{0}, e.L), append(e.Cells[e.L:2*e.L:2*e.L], slices.Repeat([]float64{0}, e.L)...)...)
		}
		rankCheck(t, "TimeSHAP "+cfg.Level.String(), e)
	}
}

func TestTimeSHAPBadInput(t *testing.T) {
	checkBadConfigs(t, []badConfig[TimeSHAP]{
		{TimeSHAP{Recent: 5}, "Recent is 5, want 1 to the 4 timesteps"},
		{TimeSHAP{Recent: -1}, "Recent is -1"},
		{TimeSHAP{Tolerance: -0.1}, "Tolerance is -0.1"},
		{TimeSHAP{Tolerance: math.NaN()}, "Tolerance is NaN"},
		{TimeSHAP{Samples: -3}, "Samples is -3"},
		{TimeSHAP{Instances: 21}, "Instances is 21 but the data has only 20"},
		{TimeSHAP{Instances: -1}, "Instances is -1"},
		{TimeSHAP{Level: 7}, "unknown TimeSHAP level 7"},
		{TimeSHAP{Baseline: 8}, "unknown baseline 8"},
		{TimeSHAP{Workers: -1}, "Workers is -1"},
		{TimeSHAP{Samples: 1 << 30, Recent: 4, MaxMemory: 1 << 20}, "TimeSHAP with 254 coalitions"},
	})
	for _, v := range []TimeSHAPLevel{CellLevel, EventLevel, FeatureLevel} {
		if got, err := ParseTimeSHAPLevel(v.String()); err != nil || got != v {
			t.Errorf("ParseTimeSHAPLevel(%q) = %v, %v", v.String(), got, err)
		}
	}
	if _, err := ParseTimeSHAPLevel("cells"); err == nil {
		t.Error("ParseTimeSHAPLevel(cells) gave no error")
	}
}

// TestPeersLocalDeterminism checks that the per-instance attributions and
// pruning outcomes of both temporal peers are bitwise identical for 1 and
// 3 workers (the explanations are checked by the contract tests).
func TestPeersLocalDeterminism(t *testing.T) {
	x := gaussian(60, 3, 8, nil, slices.Repeat([]float64{1}, 24), 5)
	data := &tempora.Dataset{X: x, Y: make([]float64, 60)}
	f := tempora.ModelFunc(windowModel)
	var occ, ts []*tempora.Tensor
	var rec [][]int
	for _, w := range []int{1, 3} {
		o, err := Occlusion{Width: 3, Stride: 2, Workers: w}.Attribute(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		r, err := TimeSHAP{Instances: 25, Samples: 300, Seed: 4, Workers: w}.Attribute(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		occ, ts, rec = append(occ, o.Local), append(ts, r.Local), append(rec, r.Recent)
	}
	if !sameFloats(occ[0].Data, occ[1].Data) {
		t.Error("OCC attributions differ between 1 and 3 workers")
	}
	if !sameFloats(ts[0].Data, ts[1].Data) || !slices.Equal(rec[0], rec[1]) {
		t.Error("TimeSHAP attributions or pruning differ between 1 and 3 workers")
	}
	// The sampled coalitions must matter: another seed changes them.
	r, err := TimeSHAP{Instances: 25, Samples: 300, Seed: 5}.Attribute(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	if sameFloats(r.Local.Data, ts[0].Data) {
		t.Error("TimeSHAP attributions do not depend on the seed")
	}
}

// TestTimeSHAPSampledConverges checks the sampled KernelSHAP path against
// exact Shapley values: 12 cell players (4094 coalitions in all) of a
// model with two- and three-way interactions, 20 instances, with budgets
// of 300 and 3000 coalitions. KernelSHAP is a consistent estimator whose
// Monte Carlo error falls at least as 1/√n in the number of sampled
// coalitions (faster once more subset sizes are enumerated), so ten times
// the budget must cut the mean absolute error by √10 ≈ 3.2; the test asks
// for half that factor, slack for the variability of an error averaged
// over 240 attributions. Wrong kernel weights give an error that stops
// falling (corrupting the sampled weights' normalisation makes it grow),
// which fails the ratio.
func TestTimeSHAPSampledConverges(t *testing.T) {
	const d, l, m = 3, 4, 20
	x := gaussian(m, d, l, nil, slices.Repeat([]float64{1}, d*l), 2)
	data := &tempora.Dataset{X: x, Y: make([]float64, m)}
	f := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			dst[i] = x.At(i, 0, 1)*x.At(i, 1, 2)*x.At(i, 2, 3) + math.Sin(x.At(i, 0, 2)+x.At(i, 2, 0)) +
				math.Pow(math.Max(x.At(i, 1, 0), math.Max(x.At(i, 1, 1), x.At(i, 2, 2))), 2)
		}
		return nil
	})
	b := eventMeans(x)
	players := make([][]int, d*l)
	for c := range players {
		players[c] = []int{c}
	}
	exact := make([][]float64, m)
	var mag float64
	for i := range m {
		exact[i] = shapley(f, x.Instance(i), b, d, l, players)
		for _, v := range exact[i] {
			mag += math.Abs(v)
		}
	}
	relErr := func(samples int) float64 {
		r, err := TimeSHAP{Recent: l, Samples: samples, Instances: m, Seed: 3}.Attribute(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		var e float64
		for i := range m {
			for c, v := range exact[i] {
				e += math.Abs(r.Local.Data[i*d*l+c] - v)
			}
		}
		return e / mag
	}
	lo, hi := relErr(300), relErr(3000)
	if want := math.Sqrt(10) / 2; !(lo/hi >= want) {
		t.Errorf("relative error %.4f with 300 coalitions and %.4f with 3000: fell by %.2f, want at least %.2f", lo, hi, lo/hi, want)
	}
}

// TestTimeSHAPMemoryEstimate checks TimeSHAPMemory against the bytes a run
// allocates when TimeSHAP's buffers dominate (200 cells, all recent, so
// 200 players and 2448 or 5000 coalitions of 200 cells:
// model inputs of 4–8 MB per worker). Each worker explains one instance,
// so that the allocations are those of one set of buffers; later
// instances reuse them apart from small per-instance workspaces (the
// players, the solver's factor, the dedup keys), which the estimate
// covers but does not multiply. As for LIME, the estimate must be within
// 5% below and 25% above the allocation.
func TestTimeSHAPMemoryEstimate(t *testing.T) {
	const d, l = 10, 20
	sd := make([]float64, d*l)
	a := make([]float64, d*l)
	for c := range sd {
		sd[c], a[c] = 1, float64(c%5)-2
	}
	for _, workers := range []int{1, 2} {
		data, f := linearProblem(t, workers, d, l, a, nil, sd, 2)
		for _, samples := range []int{0, 5000} {
			cfg := TimeSHAP{Recent: l, Samples: samples, Workers: workers}
			var err error
			got := allocatedBy(func() {
				_, err = cfg.Explain(context.Background(), f, data)
			})
			if err != nil {
				t.Fatal(err)
			}
			est := TimeSHAPMemory(workers, d, l, samples, workers)
			t.Logf("%d workers, %d coalitions: estimate %.0f bytes, allocated %.0f (ratio %.3f)", workers, samples, est, got, est/got)
			if est < 0.95*got || est > 1.25*got {
				t.Errorf("%d workers, %d coalitions: estimate %.0f bytes, allocated %.0f", workers, samples, est, got)
			}
		}
	}
}
