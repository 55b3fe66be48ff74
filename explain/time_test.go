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
// Gaussian (M = 500, D = 5, L = 15) and P = 50. The signals are strong
// enough that every overall, window and ordering decision below has a wide
// margin (the window boundaries' single-timestep scores exceed the search
// threshold θ·I by a factor 4 or more; the ordering tests of the weighted
// sums fail only if 4 of 50 random orderings were the identity), so these
// checks do not depend on the seed.
func TestTIMEDesignedModels(t *testing.T) {
	const m, d, l = 500, 5, 15
	x := gaussianData(m, d, l, 1)
	ramp := make([]float64, l) // 1, 1.07, …, 1.93: the whole sequence matters
	for k := range ramp {
		ramp[k] = 1 + float64(k)/l
	}
	weights := []float64{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		name           string
		model          tempora.ModelFunc
		task           tempora.Task
		feature        int
		window         tempora.Window
		windowOrdering bool // the window's ordering matters
	}{
		{"weighted sum", weightedWindow(2, 5, weights), tempora.Regression, 2, tempora.Window{Start: 5, End: 9}, true},
		{"max", maxWindow(2, 5, 9), tempora.Regression, 2, tempora.Window{Start: 5, End: 9}, false},
		{"whole sequence", weightedWindow(1, 0, ramp), tempora.Regression, 1, tempora.Window{Start: 0, End: l - 1}, true},
		{"classification weighted sum", sigmoid(weightedWindow(2, 5, weights), 0.5), tempora.Classification, 2, tempora.Window{Start: 5, End: 9}, true},
		{"classification max", sigmoid(maxWindow(3, 0, 4), 3), tempora.Classification, 3, tempora.Window{Start: 0, End: 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var data *tempora.Dataset
			if tc.task == tempora.Regression {
				data = regressionData(t, x, tc.model, 0.1, 2)
			} else {
				data = classificationData(t, x, tc.model, 2)
			}
			ex, err := explain.TIME{Seed: 7}.Explain(context.Background(), tc.model, data)
			if err != nil {
				t.Fatal(err)
			}
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
					if f.Window != nil || !math.IsNaN(f.OrderingPValue) {
						t.Errorf("feature %d: window %v and ordering p %v for an unimportant feature", j, f.Window, f.OrderingPValue)
					}
					for s := range l {
						if c := ex.Cell(j, s); c != 0 {
							t.Errorf("cell (%d, %d) = %v, want 0", j, s, c)
						}
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
				// any window shorter than L, so it matters for every model;
				// the whole-sequence ramp is order-sensitive too.
				if !f.OrderingImportant {
					t.Errorf("feature %d: whole-sequence ordering not important (p %v)", j, f.OrderingPAdjusted)
				}
				for s := range l {
					want := 0.0
					if tc.window.Contains(s) {
						want = f.WindowScore
					}
					if c := ex.Cell(j, s); c != want {
						t.Errorf("cell (%d, %d) = %v, want %v", j, s, c, want)
					}
				}
			}
			acc := ex.Accounting
			if acc.InstanceEvals != acc.ModelCalls*m || acc.WindowProbes == 0 || acc.Runtime <= 0 {
				t.Errorf("accounting %+v", acc)
			}
			// One baseline call, P draws per overall test, per probe, and
			// per ordering and window test (L = 15 and the windows of 5
			// timesteps are too long to enumerate).
			if want := 1 + 50*(int64(d)+acc.WindowProbes+3); acc.ModelCalls != want {
				t.Errorf("%d model calls, want %d", acc.ModelCalls, want)
			}
		})
	}
}

// TestTIMECalibration checks the tests under the null: the targets are
// independent of the data while the model is a fixed function of it. Then
// the baseline is exchangeable with the permuted copies, so each feature's
// p-value is uniform on {1, …, P+1}/(P+1), and with BH at α the probability
// of any discovery (the FDR when every hypothesis is null) is at most α.
func TestTIMECalibration(t *testing.T) {
	const (
		trials = 1000
		m      = 40
		d      = 3
		l      = 4
		perms  = 50
		alpha  = 0.1
	)
	for _, task := range []tempora.Task{tempora.Regression, tempora.Classification} {
		t.Run(task.String(), func(t *testing.T) {
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
			discoveries := 0
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
				ex, err := explain.TIME{Seed: seed, Permutations: perms, Alpha: alpha, Workers: 1}.
					Explain(context.Background(), model, &tempora.Dataset{X: x, Y: y, Task: task})
				if err != nil {
					t.Fatal(err)
				}
				any := false
				for j, f := range ex.Features {
					pvals[j] = append(pvals[j], f.PValue)
					any = any || f.Important
				}
				if any {
					discoveries++
				}
			}
			// Binomial standard error of the discovery rate at α.
			se := math.Sqrt(alpha * (1 - alpha) / trials)
			rate := float64(discoveries) / trials
			t.Logf("discovery rate %.3f (bound %.3f)", rate, alpha+3*se)
			if rate > alpha+3*se {
				t.Errorf("%d of %d null trials made a discovery: rate %.3f > α + 3 SE = %.3f", discoveries, trials, rate, alpha+3*se)
			}
			// Kolmogorov–Smirnov distance to the discrete uniform CDF on
			// k/(P+1), k = 1..P+1, evaluated at its atoms (where a discrete
			// ECDF's largest deviations lie). The continuous KS critical
			// value is conservative for a discrete law; at level 0.001/d
			// (Bonferroni over the d features) it is
			// sqrt(ln(2d/0.001)/2)/sqrt(n).
			crit := math.Sqrt(math.Log(2*d/0.001)/2) / math.Sqrt(trials)
			for j, ps := range pvals {
				sort.Float64s(ps)
				dist := 0.0
				for k := 1; k <= perms+1; k++ {
					atom := float64(k) / (perms + 1)
					n := sort.SearchFloat64s(ps, atom+1e-12) // #{p ≤ atom}
					dist = max(dist, math.Abs(float64(n)/trials-atom))
				}
				t.Logf("feature %d: KS distance %.4f (critical %.4f)", j, dist, crit)
				if dist > crit {
					t.Errorf("feature %d: KS distance %.4f to the discrete uniform > %.4f", j, dist, crit)
				}
			}
		})
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
	}{
		{name: "nil model", want: "nil model"},
		{name: "nil data", model: half, modify: func(*tempora.Dataset) *tempora.Dataset { return nil }, want: "nil dataset"},
		{name: "target count", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset { ds.Y = ds.Y[:m-1]; return ds }, want: "19 targets for 20 instances"},
		{name: "shape", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset { ds.X.L = 5; return ds }, want: "needs 300"},
		{name: "NaN data", model: half, modify: func(ds *tempora.Dataset) *tempora.Dataset { ds.X.Set(2, 1, 3, math.NaN()); return ds }, want: "instance 2, feature 1, timestep 3 is NaN"},
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
			if ex != nil {
				t.Errorf("explanation returned with an error")
			}
		})
	}
}

type stubError struct{}

func (stubError) Error() string { return "stub failure" }

var errStub = stubError{}

func TestTIMEWarnings(t *testing.T) {
	x := gaussianData(50, 2, 6, 3)
	f := weightedWindow(0, 2, []float64{1, 2})
	y := make([]float64, x.M)
	f(y, x)
	data := &tempora.Dataset{X: x, Y: y}
	ex, err := explain.TIME{Permutations: 5}.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"baseline loss is zero", "smallest p-value is 0.167 > alpha 0.1"}
	if len(ex.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", ex.Warnings, len(want))
	}
	for k, w := range want {
		if !strings.Contains(ex.Warnings[k], w) {
			t.Errorf("warning %q, want it to contain %q", ex.Warnings[k], w)
		}
	}
	// A significant window of two timesteps: its ordering can never be
	// significant at α = 0.1 (p ≥ 1/2).
	ex, err = explain.TIME{}.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	fr := ex.Features[0]
	if fr.Window == nil || *fr.Window != (tempora.Window{Start: 2, End: 3}) || !fr.WindowSignificant || fr.WindowOrderingPValue != 0.5 {
		t.Errorf("feature 0: %+v, want window [2, 3], significant, ordering p 1/2", fr)
	}
	if len(ex.Warnings) != 2 || !strings.Contains(ex.Warnings[1], `feature "0": window [2, 3] has 2 timesteps, so its ordering p-value is at least 1/2`) {
		t.Errorf("warnings %q", ex.Warnings)
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
