package explain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// Designed models: the model reads known cells, the data are i.i.d.
// Gaussian (M = 500, D = 5, L = 15). Each model runs in both modes: the
// default sequential tests and the paper's fixed P = 50. The signals are
// strong enough that every overall, window and ordering decision below has
// a wide margin (the window boundaries' single-timestep scores exceed the
// search threshold θ·I by a factor 3.6 or more, except in the "edge" model,
// where the boundary's share of the importance, 0.75%, lies midway between
// θ = 0.5% and 2θ; the sequential window-ordering test of the weighted
// sums, 9 draws at most, fails only if a draw is the identity ordering,
// probability 1 − (119/120)⁹ ≈ 7% for the 5-timestep windows, so two
// seeds are checked), so these checks do not depend on the seed.
func TestTIMEDesignedModels(t *testing.T) {
	const m, d, l = 500, 5, 15
	x := gaussianData(m, d, l, 1)
	ramp := make([]float64, l) // 1, 1.07, …, 1.93: the whole sequence matters
	flat := make([]float64, l) // the mean: order-blind over the whole sequence
	for k := range ramp {
		ramp[k] = 1 + float64(k)/l
		flat[k] = 1
	}
	weights := []float64{1, 2, 3, 4, 5}
	// edge: the weight ε of timestep 4 gives it the share
	// ε²/(55 + ε²) = 0.0075 of the importance.
	eps := math.Sqrt(0.0075 * 55 / (1 - 0.0075))
	edge := append([]float64{eps}, weights...)
	for _, tc := range []struct {
		name           string
		model          tempora.ModelFunc
		task           tempora.Task
		feature        int
		window         tempora.Window
		ordering       bool // the whole sequence's ordering matters
		windowOrdering bool // the window's ordering matters
	}{
		{"weighted sum", weightedWindow(2, 5, weights), tempora.Regression, 2, tempora.Window{Start: 5, End: 9}, true, true},
		{"max", maxWindow(2, 5, 9), tempora.Regression, 2, tempora.Window{Start: 5, End: 9}, true, false},
		{"whole sequence", weightedWindow(1, 0, ramp), tempora.Regression, 1, tempora.Window{Start: 0, End: l - 1}, true, true},
		{"whole-sequence mean", weightedWindow(1, 0, flat), tempora.Regression, 1, tempora.Window{Start: 0, End: l - 1}, false, false},
		{"edge", weightedWindow(3, 4, edge), tempora.Regression, 3, tempora.Window{Start: 4, End: 9}, true, true},
		{"classification weighted sum", sigmoid(weightedWindow(2, 5, weights), 0.5), tempora.Classification, 2, tempora.Window{Start: 5, End: 9}, true, true},
		{"classification max", sigmoid(maxWindow(3, 0, 4), 3), tempora.Classification, 3, tempora.Window{Start: 0, End: 4}, true, false},
	} {
		for _, mode := range []struct {
			name string
			cfg  explain.TIME
		}{{"sequential", explain.TIME{Seed: 7}}, {"sequential seed 8", explain.TIME{Seed: 8}}, {"fixed", explain.TIME{Seed: 7, Tests: explain.FixedTests}}} {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				var data *tempora.Dataset
				if tc.task == tempora.Regression {
					data = regressionData(t, x, tc.model, 0.1, 2)
				} else {
					data = classificationData(t, x, tc.model, 2)
				}
				ex, err := mode.cfg.Explain(context.Background(), tc.model, data)
				if err != nil {
					t.Fatal(err)
				}
				checkInvariants(t, ex, explain.DefaultAlpha)
				for j, f := range ex.Features {
					if !f.Tested {
						t.Errorf("feature %d not tested", j)
					}
					if j != tc.feature {
						// The model never reads feature j: every draw leaves the
						// loss unchanged.
						if f.Important || f.PValue != 1 || f.Score != 0 {
							t.Errorf("feature %d: important %v, p %v, score %v; want false, 1, 0", j, f.Important, f.PValue, f.Score)
						}
						continue
					}
					if !f.Important || f.Score <= 0 {
						t.Fatalf("feature %d: important %v, score %v; want important", j, f.Important, f.Score)
					}
					if f.Window == nil || *f.Window != tc.window {
						t.Errorf("feature %d: window %v, want %v", j, f.Window, tc.window)
					}
					if !f.WindowSignificant {
						t.Errorf("feature %d: window not significant (p %v)", j, f.WindowPAdjusted)
					}
					if f.WindowOrderingImportant != tc.windowOrdering {
						t.Errorf("feature %d: window ordering important = %v (p %v), want %v", j, f.WindowOrderingImportant, f.WindowOrderingPValue, tc.windowOrdering)
					}
					if !tc.windowOrdering && f.WindowOrderingPValue != 1 {
						// Reordering the window cannot change the model's output.
						t.Errorf("feature %d: order-blind window has ordering p %v, want 1", j, f.WindowOrderingPValue)
					}
					// Permuting the whole sequence moves values in and out of
					// any window shorter than L, so it matters for every
					// model but the order-blind whole-sequence mean.
					if f.OrderingImportant != tc.ordering {
						t.Errorf("feature %d: whole-sequence ordering important = %v (p %v), want %v", j, f.OrderingImportant, f.OrderingPAdjusted, tc.ordering)
					}
					if !tc.ordering && f.OrderingPValue != 1 {
						t.Errorf("feature %d: order-blind sequence has ordering p %v, want 1", j, f.OrderingPValue)
					}
				}
				acc := ex.Accounting
				if acc.InstanceEvals != acc.ModelCalls*m || acc.WindowProbes == 0 || acc.Runtime <= 0 {
					t.Errorf("accounting %+v", acc)
				}
				checkDraws(t, acc, (mode.cfg.Tests == explain.FixedTests))
				if mode.cfg.Tests == explain.FixedTests {
					// One baseline call, P draws per overall test, per probe,
					// and per ordering and window test (L = 15 and the windows
					// of 5 timesteps or more are too long to enumerate).
					if want := 1 + 50*(int64(d)+acc.WindowProbes+3); acc.ModelCalls != want {
						t.Errorf("%d model calls, want %d", acc.ModelCalls, want)
					}
				}
			})
		}
	}
}

// checkInvariants checks the decisions of a flat-hierarchy explanation
// against their definition (docs/decisions.md, decision 7): BH at alpha
// over the features, computed here from the raw p-values; for each
// important feature a window and BH at alpha over the pair {whole-sequence
// ordering, window}; a window-ordering p-value exactly when the window is
// significant, important exactly when p ≤ alpha; nothing of the kind for
// an unimportant feature; and the cells.
func checkInvariants(t *testing.T, ex *tempora.Explanation, alpha float64) {
	t.Helper()
	p := make([]float64, len(ex.Features))
	for j, f := range ex.Features {
		p[j] = f.PValue
	}
	rej, adj := bhRef(p, alpha)
	for j, f := range ex.Features {
		if f.Important != rej[j] || math.Abs(f.PAdjusted-adj[j]) > 1e-12 {
			t.Errorf("feature %d: important %v, adjusted %v; BH over the features gives %v, %v", j, f.Important, f.PAdjusted, rej[j], adj[j])
		}
		if !f.Important {
			if f.Window != nil || !math.IsNaN(f.OrderingPValue) || !math.IsNaN(f.WindowPValue) || !math.IsNaN(f.WindowOrderingPValue) || f.OrderingImportant || f.WindowSignificant || f.WindowOrderingImportant {
				t.Errorf("feature %d is not important but has stage-two results %+v", j, f)
			}
			for s := range ex.L {
				if c := ex.Cell(j, s); c != 0 {
					t.Errorf("cell (%d, %d) = %v, want 0", j, s, c)
				}
			}
			continue
		}
		if f.Window == nil {
			t.Errorf("important feature %d has no window", j)
			continue
		}
		checkWindows(t, ex, j, alpha)
	}
}

// checkWindows checks the windows of important feature j: disjoint, in
// time order, each with its end ranges around its ends; BH over the family
// {whole-sequence ordering, windows…}; BH over the window orderings of the
// significant windows (p ≤ α for one); the single-window fields repeat the
// window with the smallest adjusted p-value; the cells are each
// significant window's score over it, and 0 (window rule verified) or the
// overall score (paper) everywhere when no window is significant.
func checkWindows(t *testing.T, ex *tempora.Explanation, j int, alpha float64) {
	t.Helper()
	f := ex.Features[j]
	if len(f.Windows) == 0 {
		t.Errorf("feature %d: no windows", j)
		return
	}
	p := []float64{f.OrderingPValue}
	lead, any := 0, false
	for k, w := range f.Windows {
		if k > 0 && w.Window.Start <= f.Windows[k-1].Window.End+1 {
			t.Errorf("feature %d: windows %v and %v overlap or touch", j, f.Windows[k-1].Window, w.Window)
		}
		if !w.StartRange.Contains(w.Window.Start) || !w.EndRange.Contains(w.Window.End) {
			t.Errorf("feature %d: window %v outside its ranges %v, %v", j, w.Window, w.StartRange, w.EndRange)
		}
		p = append(p, w.PValue)
		if w.PAdjusted < f.Windows[lead].PAdjusted {
			lead = k
		}
		any = any || w.Significant
	}
	rej, adj := bhRef(p, alpha)
	if f.OrderingImportant != rej[0] || math.Abs(f.OrderingPAdjusted-adj[0]) > 1e-12 {
		t.Errorf("feature %d: ordering %v (adjusted %v); BH over %v gives %v, %v", j, f.OrderingImportant, f.OrderingPAdjusted, p, rej[0], adj[0])
	}
	var op []float64
	for k, w := range f.Windows {
		if w.Significant != rej[k+1] || math.Abs(w.PAdjusted-adj[k+1]) > 1e-12 {
			t.Errorf("feature %d window %v: significant %v (adjusted %v); BH over %v gives %v, %v", j, w.Window, w.Significant, w.PAdjusted, p, rej[k+1], adj[k+1])
		}
		if math.IsNaN(w.OrderingPValue) == w.Significant {
			t.Errorf("feature %d window %v: significant %v but ordering p-value %v", j, w.Window, w.Significant, w.OrderingPValue)
		}
		if w.Significant {
			op = append(op, w.OrderingPValue)
		} else if w.OrderingImportant {
			t.Errorf("feature %d window %v: ordering important without a significant window", j, w.Window)
		}
	}
	orej, oadj := bhRef(op, alpha)
	k := 0
	for _, w := range f.Windows {
		if !w.Significant {
			continue
		}
		if w.OrderingImportant != orej[k] || math.Abs(w.OrderingPAdjusted-oadj[k]) > 1e-12 {
			t.Errorf("feature %d window %v: ordering %v (adjusted %v); BH over %v gives %v, %v", j, w.Window, w.OrderingImportant, w.OrderingPAdjusted, op, orej[k], oadj[k])
		}
		k++
	}
	if len(op) == 1 && orej[0] != (op[0] <= alpha) {
		t.Errorf("feature %d: a lone window ordering with p %v decided %v at alpha %v", j, op[0], orej[0], alpha)
	}
	l := f.Windows[lead]
	if *f.Window != l.Window || f.WindowSignificant != l.Significant || f.WindowScore != l.Score || f.WindowPValue != l.PValue ||
		f.WindowPAdjusted != l.PAdjusted {
		t.Errorf("feature %d: single-window fields %+v do not repeat the lead window %+v", j, f, l)
	}
	// The window-ordering fields summarise every window's test.
	minP, claim := math.NaN(), false
	for _, w := range f.Windows {
		if !math.IsNaN(w.OrderingPValue) && (math.IsNaN(minP) || w.OrderingPValue < minP) {
			minP = w.OrderingPValue
		}
		claim = claim || w.OrderingImportant
	}
	if !sameFloat(f.WindowOrderingPValue, minP) || f.WindowOrderingImportant != claim {
		t.Errorf("feature %d: window ordering %v (p %v), its windows' %v (smallest p %v)", j, f.WindowOrderingImportant, f.WindowOrderingPValue, claim, minP)
	}
	fill := 0.0
	if !any && ex.Cell(j, 0) != 0 {
		fill = f.Score
	}
	for s := range ex.L {
		want := fill
		for _, w := range f.Windows {
			if w.Significant && w.Window.Contains(s) {
				want = w.Score
			}
		}
		if c := ex.Cell(j, s); c != want {
			t.Errorf("cell (%d, %d) = %v, want %v", j, s, c, want)
		}
	}
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// bhRef is the Benjamini–Hochberg procedure written out from its
// definition, independently of package fdr: reject the k smallest p-values,
// k the largest rank with p_(k) ≤ kα/m; adjusted q_(i) = min_{r ≥ i}
// min(1, m·p_(r)/r).
func bhRef(p []float64, alpha float64) ([]bool, []float64) {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	k := 0
	for r := 1; r <= m; r++ {
		if p[idx[r-1]] <= float64(r)*alpha/float64(m) {
			k = r
		}
	}
	rej := make([]bool, m)
	adj := make([]float64, m)
	q := 1.0
	for r := m; r >= 1; r-- {
		i := idx[r-1]
		q = min(q, float64(m)*p[i]/float64(r))
		adj[i] = q
		rej[i] = r <= k
	}
	return rej, adj
}

// checkDraws checks the breakdown of the draws: the five kinds of test in
// order, draws within their caps (equal to them in fixed mode), the model
// calls equal to one baseline call plus every draw, and the probes counted
// as window-search tests.
func checkDraws(t *testing.T, acc tempora.Accounting, fixed bool) {
	t.Helper()
	names := []string{"overall", "window search", "ordering", "window", "window ordering"}
	if len(acc.Draws) != len(names) {
		t.Fatalf("draw counts %+v, want %d kinds", acc.Draws, len(names))
	}
	for k, c := range acc.Draws {
		if c.Test != names[k] {
			t.Errorf("draw count %d is %q, want %q", k, c.Test, names[k])
		}
		if c.Draws > c.MaxDraws || c.Draws < 0 || (c.Tests > 0) != (c.MaxDraws > 0) {
			t.Errorf("draw count %+v", c)
		}
		if fixed && c.Draws != c.MaxDraws {
			t.Errorf("fixed mode: %q made %d of %d draws", c.Test, c.Draws, c.MaxDraws)
		}
	}
	if tot := acc.TotalDraws(); acc.ModelCalls != 1+tot.Draws {
		t.Errorf("%d model calls, want 1 + %d draws", acc.ModelCalls, tot.Draws)
	}
	if acc.Draws[1].Tests != acc.WindowProbes {
		t.Errorf("%d window-search tests, %d probes", acc.Draws[1].Tests, acc.WindowProbes)
	}
}

// TestTIMECalibration checks the tests under the null: the targets are
// independent of the data while the model is a fixed function of it. Then
// the baseline is exchangeable with the permuted copies, so each feature's
// p-value is uniform on its atoms (k/(P+1) for a fixed test, the
// Besag–Clifford atoms for a sequential one: P(p ≤ a) = a at each atom a),
// and with BH at α the probability of any discovery (the FDR when every
// hypothesis is null) is at most α; with independent continuous p-values it
// is exactly α. The family stopping default (anytime-valid p-values, whose
// law is super-uniform rather than uniform: a one-sided check), the
// Besag–Clifford tests (cap MinPermutations(3, 0.1) = 29, h = 3) and the
// fixed P = 50 are checked on 3000 trials per task, so
// the discovery rate has SE √(0.1·0.9/3000) = 0.0055 and the bound α + 3 SE
// is 0.116.
//
// Every explanation's decisions are checked against their definition
// (checkInvariants), which on these trials exercises the stage-two
// families of the falsely flagged features. The post-selection rates, how
// often a falsely flagged feature's window test and whole-sequence ordering
// test are significant, are logged.
func TestTIMECalibration(t *testing.T) {
	const (
		trials = 3000
		m      = 40
		d      = 3
		l      = 4
		alpha  = 0.1
	)
	for _, task := range []tempora.Task{tempora.Regression, tempora.Classification} {
		for _, mode := range []string{"family", "sequential", "fixed"} {
			tests := map[string]explain.Tests{"family": explain.AnytimeTests, "sequential": explain.BesagCliffordTests, "fixed": explain.FixedTests}[mode]
			t.Run(task.String()+"/"+mode, func(t *testing.T) {
				weights := gaussianData(1, d, l, 99).Data
				linear := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
					for i := range dst {
						var v float64
						for k, w := range weights {
							v += w * x.Data[i*d*l+k]
						}
						dst[i] = v
					}
					return nil
				})
				model := linear
				if task == tempora.Classification {
					model = sigmoid(linear, 0.5)
				}
				discoveries, flagged, windows, orderings := 0, 0, 0, 0
				var draws int64
				pvals := make([][]float64, d)
				for trial := range trials {
					seed := uint64(1000 + trial)
					x := gaussianData(m, d, l, seed)
					y := make([]float64, m)
					rng := tempora.NewRand(seed, "null targets")
					for i := range y {
						if task == tempora.Classification {
							y[i] = float64(rng.IntN(2))
						} else {
							y[i] = rng.NormFloat64()
						}
					}
					ex, err := explain.TIME{Seed: seed, Tests: tests, Alpha: alpha, Workers: 1}.
						Explain(context.Background(), model, &tempora.Dataset{X: x, Y: y, Task: task})
					if err != nil {
						t.Fatal(err)
					}
					checkInvariants(t, ex, alpha)
					any := false
					for j, f := range ex.Features {
						pvals[j] = append(pvals[j], f.PValue)
						any = any || f.Important
						if f.Important {
							flagged++
							if f.WindowSignificant {
								windows++
							}
							if f.OrderingImportant {
								orderings++
							}
						}
					}
					if any {
						discoveries++
					}
					draws += ex.Accounting.Draws[0].Draws
				}
				se := math.Sqrt(alpha * (1 - alpha) / trials)
				rate := float64(discoveries) / trials
				t.Logf("discovery rate %.4f (bound %.4f); %.1f overall draws per trial", rate, alpha+3*se, float64(draws)/trials)
				t.Logf("post-selection: of %d falsely flagged features, %d (%.2f) have a significant window and %d (%.2f) an important whole-sequence ordering",
					flagged, windows, float64(windows)/float64(max(flagged, 1)), orderings, float64(orderings)/float64(max(flagged, 1)))
				if rate > alpha+3*se {
					t.Errorf("%d of %d null trials made a discovery: rate %.4f > α + 3 SE = %.4f", discoveries, trials, rate, alpha+3*se)
				}
				crit := ksCritical(trials, 0.001/d)
				if mode == "family" {
					// Anytime-valid p-values are super-uniform, not
					// uniform: the one-sided distance max_u F̂(u) − u,
					// over the observed values u, must stay below the
					// critical value.
					for j, ps := range pvals {
						sort.Float64s(ps)
						excess := 0.0
						for i, u := range ps {
							if i+1 < len(ps) && ps[i+1] == u {
								continue
							}
							excess = max(excess, float64(i+1)/float64(len(ps))-u)
						}
						t.Logf("feature %d: P(p ≤ u) − u at most %.4f (critical %.4f)", j, excess, crit)
						if excess > crit {
							t.Errorf("feature %d: P(p ≤ u) exceeds u by %.4f > %.4f", j, excess, crit)
						}
					}
					return
				}
				// The atoms of the p-value's law.
				var atoms []float64
				if tests == explain.FixedTests {
					for k := 1; k <= explain.DefaultPermutations+1; k++ {
						atoms = append(atoms, float64(k)/(explain.DefaultPermutations+1))
					}
				} else {
					p := explain.MinPermutations(d, alpha)
					atoms = bcAtoms(explain.SequentialStop(alpha, p).Hits, p)
				}
				// Kolmogorov–Smirnov distance to the uniform law at the atoms,
				// at level 0.001/d (Bonferroni over the d features).
				for j, ps := range pvals {
					sort.Float64s(ps)
					dist := ksAtoms(ps, atoms)
					t.Logf("feature %d: KS distance %.4f (critical %.4f)", j, dist, crit)
					if dist > crit {
						t.Errorf("feature %d: KS distance %.4f to the uniform law at the atoms > %.4f", j, dist, crit)
					}
				}
			})
		}
	}
}

// TestTIMEDeterministic checks that the explanation's JSON is identical for
// 1 and 4 workers (apart from the measured runtime) and for repeated runs.
func TestTIMEDeterministic(t *testing.T) {
	x := gaussianData(300, 6, 12, 4)
	f := sigmoid(func(dst []float64, x *tempora.Tensor) error {
		w := weightedWindow(1, 3, []float64{1, -2, 1.5})
		if err := w(dst, x); err != nil {
			return err
		}
		tmp := make([]float64, len(dst))
		maxWindow(4, 6, 11)(tmp, x)
		for i := range dst {
			dst[i] += 2*tmp[i] + 0.05*x.At(i, 0, 0)
		}
		return nil
	}, 1)
	data := classificationData(t, x, f, 4)
	encode := func(workers int) []byte {
		t.Helper()
		ex, err := explain.TIME{Seed: 11, Workers: workers}.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		ex.Accounting.Runtime = 0
		b, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one, four, again := encode(1), encode(4), encode(4)
	if !bytes.Equal(one, four) {
		t.Errorf("1 and 4 workers differ:\n%s\n%s", one, four)
	}
	if !bytes.Equal(four, again) {
		t.Errorf("repeated runs differ")
	}
	if !bytes.Contains(one, []byte(`"important":true`)) {
		t.Errorf("nothing important in %s", one)
	}
}

// TestTIMEHierarchy checks group testing: a group whose joint permutation
// matters is rejected and its members are tested; the members of a group
// that is not rejected are never tested; groups are listed in pre-order and
// important groups get a window.
func TestTIMEHierarchy(t *testing.T) {
	const m, d, l = 400, 6, 10
	x := gaussianData(m, d, l, 8)
	f := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			var v float64
			for s := 2; s <= 7; s++ {
				v += x.At(i, 0, s) + 0.5*x.At(i, 1, s)
			}
			dst[i] = v
		}
		return nil
	})
	data := regressionData(t, x, f, 0.5, 8)
	data.FeatureNames = []string{"hr", "bp", "temp", "spo2", "rr", "gcs"}
	h, err := explain.ParseHierarchy(strings.NewReader(`[
		{"name": "vitals", "features": ["hr", 1]},
		{"name": "other", "features": ["temp", "3"], "children": [{"name": "neuro", "features": ["rr", "gcs"]}]}
	]`), data.FeatureNames)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := explain.TIME{Seed: 3, Hierarchy: h}.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Groups) != 3 {
		t.Fatalf("%d groups, want 3", len(ex.Groups))
	}
	for k, want := range []struct {
		name      string
		members   []int
		important bool
		tested    bool
	}{
		{"vitals", []int{0, 1}, true, true},
		{"other", []int{2, 3, 4, 5}, false, true},
		{"neuro", []int{4, 5}, false, false},
	} {
		g := ex.Groups[k]
		if g.Name != want.name || g.Index != -1 || !equalInts(g.Members, want.members) || g.Important != want.important || g.Tested != want.tested {
			t.Errorf("group %d: %s %v index %d important %v tested %v; want %+v", k, g.Name, g.Members, g.Index, g.Important, g.Tested, want)
		}
	}
	if v := ex.Groups[0]; v.Window == nil || *v.Window != (tempora.Window{Start: 2, End: 7}) || !v.WindowSignificant {
		t.Errorf("group vitals: window %v significant %v, want [2, 7] significant", v.Window, v.WindowSignificant)
	}
	if p := ex.Groups[1].PValue; p != 1 {
		t.Errorf("group other: p = %v, want 1 (the model never reads it)", p)
	}
	for j, f := range ex.Features {
		wantTested := j <= 1 // only the rejected group's members
		if f.Tested != wantTested || f.Important != wantTested {
			t.Errorf("feature %d: tested %v important %v, want %v %v", j, f.Tested, f.Important, wantTested, wantTested)
		}
		if !wantTested && !math.IsNaN(f.PValue) {
			t.Errorf("untested feature %d has p-value %v", j, f.PValue)
		}
	}
	if w := ex.Features[1].Window; w == nil || *w != (tempora.Window{Start: 2, End: 7}) {
		t.Errorf("feature 1 window %v, want [2, 7]", w)
	}

	// A single root object is itself tested, as a family of one, and
	// features outside the hierarchy are reported.
	h, err = explain.ParseHierarchy(strings.NewReader(`{"name": "all", "children": [{"name": "a", "features": [0]}, {"name": "b", "features": [2, 3]}]}`), data.FeatureNames)
	if err != nil {
		t.Fatal(err)
	}
	ex, err = explain.TIME{Seed: 3, Hierarchy: h}.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	if g := ex.Groups; len(g) != 3 || !g[0].Important || !g[1].Important || g[2].Important || !g[2].Tested {
		t.Errorf("groups %+v: want all and a important, b tested and not important", g)
	}
	if !ex.Features[0].Important || ex.Features[2].Tested || ex.Features[1].Tested {
		t.Errorf("features 0, 1, 2: %+v %+v %+v", ex.Features[0], ex.Features[1], ex.Features[2])
	}
	if len(ex.Warnings) != 1 || !strings.Contains(ex.Warnings[0], "[1 4 5]") {
		t.Errorf("warnings %q, want one naming features 1, 4, 5", ex.Warnings)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTIMEBadInput(t *testing.T) {
	const m, d, l = 20, 3, 4
	good := func() *tempora.Dataset {
		x := gaussianData(m, d, l, 1)
		y := make([]float64, m)
		for i := range y {
			y[i] = float64(i % 2)
		}
		return &tempora.Dataset{X: x, Y: y, Task: tempora.Classification}
	}
	half := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			dst[i] = 0.5
		}
		return nil
	})
	// perturbedNaN predicts NaN as soon as instance 0's first cell differs
	// from the original data, i.e. only on a perturbed copy.
	orig := good().X.At(0, 0, 0)
	perturbedNaN := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			dst[i] = 0.5
		}
		if x.At(0, 0, 0) != orig {
			dst[3] = math.NaN()
		}
		return nil
	})
	for _, tc := range []struct {
		name   string
		cfg    explain.TIME
		model  tempora.Model
		modify func(*tempora.Dataset) *tempora.Dataset
		want   string
		absent string // a text the message must not contain
	}{
		{name: "nil model", want: "nil model"},
		{name: "nil data", model: half, modify: func(*tempora.Dataset) *tempora.Dataset { return nil }, want: "nil dataset"},
		{name: "target count", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset { ds.Y = ds.Y[:m-1]; return ds }, want: "19 targets for 20 instances"},
		{name: "shape", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset { ds.X.L = 5; return ds }, want: "needs 300"},
		// A NaN is a missing value (missing_test.go); an infinity, an
		// instance or a feature with nothing observed are errors.
		{name: "Inf data", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset { ds.X.Set(2, 1, 3, math.Inf(-1)); return ds }, want: "instance 2, feature 1, timestep 3 is -Inf"},
		{name: "empty instance", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset {
			for k := range ds.X.Data[2*d*l : 3*d*l] {
				ds.X.Data[2*d*l+k] = math.NaN()
			}
			return ds
		}, want: "instance 2 has no observed value"},
		{name: "conditional with missing values", cfg: explain.TIME{Conditional: true}, model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset { ds.X.Set(2, 1, 3, math.NaN()); return ds }, want: "conditional tests need complete data"},
		{name: "Inf target", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset {
			ds.Task = tempora.Regression
			ds.Y[4] = math.Inf(1)
			return ds
		}, want: "target of instance 4 is +Inf"},
		{name: "non-binary label", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset { ds.Y[5] = 2; return ds }, want: "instance 5 is 2, want 0 or 1"},
		{name: "one instance", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset {
			ds.X = ds.X.Rows(0, 1)
			ds.Y = ds.Y[:1]
			return ds
		}, want: "1 instances, need at least 2"},
		{name: "alpha negative", cfg: explain.TIME{Alpha: -0.1}, model: half, want: "alpha -0.1 outside (0, 1)"},
		{name: "alpha one", cfg: explain.TIME{Alpha: 1}, model: half, want: "alpha 1 outside (0, 1)"},
		{name: "alpha NaN", cfg: explain.TIME{Alpha: math.NaN()}, model: half, want: "alpha NaN"},
		{name: "gamma above one", cfg: explain.TIME{Gamma: 1.5}, model: half, want: "gamma 1.5 outside (0, 1)"},
		{name: "gamma negative", cfg: explain.TIME{Gamma: -0.5}, model: half, want: "gamma -0.5 outside (0, 1)"},
		{name: "permutations negative", cfg: explain.TIME{Permutations: -1}, model: half, want: "permutations -1"},
		{name: "workers negative", cfg: explain.TIME{Workers: -2}, model: half, want: "workers -2"},
		{name: "hierarchy unknown feature", cfg: explain.TIME{Hierarchy: &explain.Hierarchy{Groups: []*explain.Group{{Name: "g", Features: []int{0, 7}}}}}, model: half, want: `group "g" lists feature 7, data has 3 features`},
		{name: "hierarchy feature twice", cfg: explain.TIME{Hierarchy: &explain.Hierarchy{Groups: []*explain.Group{{Name: "g", Features: []int{0}}, {Name: "h", Features: []int{1, 0}}}}}, model: half, want: `feature 0 in both group "g" and group "h"`},
		{name: "hierarchy empty group", cfg: explain.TIME{Hierarchy: &explain.Hierarchy{Groups: []*explain.Group{{Name: "g"}}}}, model: half, want: `group "g" is empty`},
		{name: "model error", model: tempora.ModelFunc(func([]float64, *tempora.Tensor) error { return errStub }), want: "model: stub failure"},
		{name: "model NaN", model: tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error { dst[0] = math.NaN(); return nil }), want: "predicted NaN for instance 0"},
		{name: "model NaN when perturbed", model: perturbedNaN, want: "predicted NaN for instance 3"},
		// An infinite prediction is not a missing one: no hint about NaN
		// (issue 12, defect 10).
		{name: "model +Inf", model: tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			for i := range dst {
				dst[i] = math.Inf(1)
			}
			return nil
		}), want: "predicted +Inf for instance 0", absent: "NaN"},
		{name: "model short output", model: tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			for i := range dst[:len(dst)-1] {
				dst[i] = 0.5
			}
			return nil
		}), want: "predicted NaN for instance 19 (a NaN may mean the prediction was not written)"},
		{name: "probability above one", model: tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			for i := range dst {
				dst[i] = 1.5
			}
			return nil
		}), want: "predicted 1.5 for instance 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := good()
			if tc.modify != nil {
				data = tc.modify(data)
			}
			ex, err := tc.cfg.Explain(context.Background(), tc.model, data)
			if err == nil || !strings.HasPrefix(err.Error(), "explain: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one starting %q and containing %q", err, "explain: ", tc.want)
			}
			if tc.absent != "" && err != nil && strings.Contains(err.Error(), tc.absent) {
				t.Errorf("error %v contains %q", err, tc.absent)
			}
			if ex != nil {
				t.Errorf("explanation returned with an error")
			}
		})
	}
}

type stubError struct{}

func (stubError) Error() string { return "stub failure" }

var errStub = stubError{}

// TestTIMEWarnings checks the warnings: a zero baseline loss, every
// family whose permutation cap keeps its smallest p-value above α/m, and a
// significant window too short for its ordering to be significant.
func TestTIMEWarnings(t *testing.T) {
	x := gaussianData(50, 2, 6, 3)
	f := weightedWindow(0, 2, []float64{1, 2})
	y := make([]float64, x.M)
	f(y, x)
	data := &tempora.Dataset{X: x, Y: y}
	for _, cfg := range []explain.TIME{{Permutations: 5, Tests: explain.BesagCliffordTests}, {Permutations: 5, Tests: explain.FixedTests}} {
		ex, err := cfg.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"baseline loss is zero",
			"the family of 2 features: with 5 permutations the smallest p-value 1/6 = 0.167 exceeds alpha/m = 0.05, so none of them can be significant; a single discovery needs at least 19 permutations",
			"each {ordering, window} pair (2 tests): with 5 permutations the smallest p-value 1/6 = 0.167 exceeds alpha/m = 0.05, so none of them can be significant",
			"each window-ordering test (a family of 1): with 5 permutations the smallest p-value 1/6 = 0.167 exceeds alpha/m = 0.1, so none of them can be significant; a single discovery needs at least 9 permutations",
			"no feature is important at alpha 0.1",
		}
		if len(ex.Warnings) != len(want) {
			t.Fatalf("%+v: warnings %q, want %d", cfg, ex.Warnings, len(want))
		}
		for k, w := range want {
			if !strings.Contains(ex.Warnings[k], w) {
				t.Errorf("%+v: warning %q, want it to contain %q", cfg, ex.Warnings[k], w)
			}
		}
	}
	// A significant window of two timesteps: its ordering can never be
	// significant at α = 0.1 (p ≥ 1/2). The default caps give no floor
	// warning.
	for _, cfg := range []explain.TIME{{}, {Tests: explain.FixedTests}} {
		ex, err := cfg.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		fr := ex.Features[0]
		if fr.Window == nil || *fr.Window != (tempora.Window{Start: 2, End: 3}) || !fr.WindowSignificant || fr.WindowOrderingPValue != 0.5 {
			t.Errorf("%+v: feature 0: %+v, want window [2, 3], significant, ordering p 1/2", cfg, fr)
		}
		if len(ex.Warnings) != 2 || !strings.Contains(ex.Warnings[1], `feature "0": window [2, 3] has 2 timesteps, so its ordering p-value is at least 1/2`) {
			t.Errorf("%+v: warnings %q", cfg, ex.Warnings)
		}
	}
}

// TestTIMEFloorWarnings checks the floor warning of every family of a
// hierarchy, and that the default caps never need one.
func TestTIMEFloorWarnings(t *testing.T) {
	const d = 14
	x := gaussianData(30, d, 3, 5)
	f := weightedWindow(0, 0, []float64{1, 1, 1})
	data := regressionData(t, x, f, 1, 5)
	h := &explain.Hierarchy{Groups: []*explain.Group{
		{Name: "a", Features: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{Name: "b", Features: []int{12}, Children: []*explain.Group{{Name: "c", Features: []int{13}}}},
	}}
	for _, tc := range []struct {
		name string
		cfg  explain.TIME
		want []string
	}{
		{"flat fixed P=50", explain.TIME{Tests: explain.FixedTests}, []string{
			"the family of 14 features: with 50 permutations the smallest p-value 1/51 = 0.0196 exceeds alpha/m = 0.00714, so BH rejects none of them unless at least 3 reach it; a single discovery needs at least 139 permutations"}},
		{"flat sequential P_max=50", explain.TIME{Permutations: 50}, []string{"the family of 14 features: with 50 permutations"}},
		{"flat sequential default", explain.TIME{}, nil},
		{"flat fixed P=139", explain.TIME{Tests: explain.FixedTests, Permutations: 139}, nil},
		{"hierarchy fixed P=50", explain.TIME{Tests: explain.FixedTests, Hierarchy: h}, []string{
			`the family of the 12 members of group "a": with 50 permutations the smallest p-value 1/51 = 0.0196 exceeds alpha/m = 0.00833, so BH rejects none of them unless at least 3 reach it; a single discovery needs at least 119 permutations`}},
		{"hierarchy fixed P=15", explain.TIME{Tests: explain.FixedTests, Permutations: 15, Hierarchy: h}, []string{
			"the top family of 2 groups: with 15 permutations the smallest p-value 1/16 = 0.0625 exceeds alpha/m = 0.05, so BH rejects none of them unless at least 2 reach it",
			`the family of the 12 members of group "a": with 15 permutations`,
			`the family of the 2 members of group "b": with 15 permutations`,
			"each {ordering, window} pair (2 tests): with 15 permutations",
		}},
		{"hierarchy sequential default", explain.TIME{Hierarchy: h}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := tc.cfg.Explain(context.Background(), f, data)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range ex.Warnings {
				if strings.Contains(w, "smallest p-value") {
					got = append(got, w)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("floor warnings %q, want %d", got, len(tc.want))
			}
			for k, w := range tc.want {
				if !strings.Contains(got[k], w) {
					t.Errorf("warning %q, want it to contain %q", got[k], w)
				}
			}
		})
	}
}

// TestTIMELoneFeature is the silent floor of the paper's configuration: one
// feature of ten matters. Fixed P = 50 gives it p = 1/51 > α/10 = 0.01, so
// BH cannot reject it, and TIME says so in a warning; the sequential
// default caps the top family so that p can reach α/10 = 0.01, and finds
// the feature and its window.
func TestTIMELoneFeature(t *testing.T) {
	x := gaussianData(300, 10, 12, 9)
	f := weightedWindow(6, 4, []float64{1, 2, 3})
	data := regressionData(t, x, f, 0.5, 9)
	fixed, err := explain.TIME{Tests: explain.FixedTests, Seed: 1}.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	if p := fixed.Features[6].PValue; p != 1.0/51 || fixed.Features[6].Important {
		t.Errorf("fixed P = 50: feature 6 p = %v, important %v; want 1/51, not important", p, fixed.Features[6].Important)
	}
	if len(fixed.Warnings) != 2 || !strings.Contains(fixed.Warnings[0], "unless at least 2 reach it") || !strings.HasPrefix(fixed.Warnings[1], "no feature is important") {
		t.Errorf("fixed P = 50: warnings %q, want the floor warning and that no feature is important", fixed.Warnings)
	}
	seq, err := explain.TIME{Seed: 1}.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, seq, explain.DefaultAlpha)
	for j, fr := range seq.Features {
		if fr.Important != (j == 6) {
			t.Errorf("sequential: feature %d important %v (p %v)", j, fr.Important, fr.PValue)
		}
	}
	if w := seq.Features[6].Window; w == nil || *w != (tempora.Window{Start: 4, End: 6}) || seq.Features[6].PValue > 0.01 {
		t.Errorf("sequential: feature 6 window %v p %v, want [4, 6] and at most α/10 = 0.01", w, seq.Features[6].PValue)
	}
	for _, w := range seq.Warnings {
		if strings.Contains(w, "smallest p-value") {
			t.Errorf("sequential: floor warning %q", w)
		}
	}
	if seq.Accounting.InstanceEvals >= fixed.Accounting.InstanceEvals {
		t.Errorf("sequential made %d instance evaluations, fixed %d", seq.Accounting.InstanceEvals, fixed.Accounting.InstanceEvals)
	}
}

func TestTIMECancelled(t *testing.T) {
	x := gaussianData(50, 2, 6, 3)
	f := weightedWindow(0, 2, []float64{1, 2})
	data := regressionData(t, x, f, 0.1, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (explain.TIME{}).Explain(ctx, f, data); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
