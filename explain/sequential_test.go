package explain_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// noisyProblem returns a regression dataset of m instances whose targets
// are y = Σ_t c_t·x[0, t] + noise, and the model Σ_t c_t·x[0, t] + b·x[1, 0]:
// feature 0 matters, feature 1 is read by the model but carries no signal
// (its permutation tests are null tests with continuous statistics).
func noisyProblem(t *testing.T, m, l int, noise, b float64, seed uint64) (*tempora.Dataset, tempora.ModelFunc) {
	t.Helper()
	x := gaussianData(m, 2, l, seed)
	f := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			var v float64
			for s, c := range x.Series(i, 0) {
				v += (1 + float64(s)) * c
			}
			dst[i] = 0.2*v + b*x.At(i, 1, 0)
		}
		return nil
	})
	data := regressionData(t, x, f, noise, seed)
	// The targets come from the model without the feature-1 term.
	for i := range data.Y {
		data.Y[i] -= b * x.At(i, 1, 0)
	}
	return data, f
}

// TestSequentialMatchesFixedPrefix checks the Besag–Clifford rule against
// its definition. A fixed test with P draws uses draws 0..P−1 of its
// stream, so fixed tests with P = 1, 2, … reveal the hit count after every
// draw; the sequential test with the same key must stop at the first draw
// k with h hits and report h/k, or, when it never gets h hits, equal the
// fixed test with P_max draws. Draws, Evaluated, Max and Stopped are
// checked too.
func TestSequentialMatchesFixedPrefix(t *testing.T) {
	data, f := noisyProblem(t, 40, 3, 1, 0.3, 3)
	eng, err := explain.NewEngine(f, data, nil, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	const pmax = 60
	for _, tc := range []struct {
		name    string
		feature int
		hits    int
	}{
		{"null h=10", 1, 10},
		{"null h=3", 1, 3},
		{"null h=1", 1, 1},
		{"relevant h=10", 0, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := explain.Test{Features: []int{tc.feature}, Window: tempora.Window{Start: 0, End: 2}, Key: "k" + tc.name}
			var fixed []explain.Test
			for p := 1; p <= pmax; p++ {
				ft := base
				ft.Permutations = p
				fixed = append(fixed, ft)
			}
			fres, err := eng.Run(context.Background(), fixed)
			if err != nil {
				t.Fatal(err)
			}
			// hits[k] = number of hits among draws 0..k-1.
			hits := make([]int, pmax+1)
			for k := 1; k <= pmax; k++ {
				hits[k] = int(math.Round(fres[k-1].PValue*float64(k+1))) - 1
			}
			seq := base
			seq.Permutations = pmax
			seq.Stop = explain.BesagClifford{Hits: tc.hits}
			sres, err := eng.Run(context.Background(), []explain.Test{seq})
			if err != nil {
				t.Fatal(err)
			}
			got := sres[0]
			want := explain.TestResult{Draws: pmax, Max: pmax, PValue: fres[pmax-1].PValue, Score: fres[pmax-1].Score}
			for k := 1; k <= pmax; k++ {
				if hits[k] == tc.hits {
					want = explain.TestResult{Draws: k, Max: pmax, Stopped: true, PValue: float64(tc.hits) / float64(k), Score: fres[k-1].Score}
					if k == pmax {
						// The last draw: the test ran to its end.
						want.Stopped = false
						want.PValue = fres[pmax-1].PValue
					}
					break
				}
			}
			if got.Draws != want.Draws || got.Stopped != want.Stopped || got.Max != want.Max ||
				got.PValue != want.PValue || math.Abs(got.Score-want.Score) > 1e-12 {
				t.Errorf("sequential %+v, want %+v (hits after each draw %v)", got, want, hits[1:])
			}
			if got.Evaluated < got.Draws || got.Evaluated > pmax {
				t.Errorf("evaluated %d draws, want between %d and %d", got.Evaluated, got.Draws, pmax)
			}
			if tc.feature == 0 && got.Stopped {
				t.Errorf("the relevant feature's test stopped early: %+v", got)
			}
		})
	}
}

// TestSequentialDeterministic checks that sequential tests, probes and
// their accounting do not depend on the number of workers.
func TestSequentialDeterministic(t *testing.T) {
	data, f := noisyProblem(t, 60, 6, 1, 0.5, 4)
	tests := []explain.Test{
		{Features: []int{1}, Window: tempora.Window{Start: 0, End: 5}, Permutations: 99, Key: "null", Stop: explain.BesagClifford{Hits: 10}},
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: 5}, Permutations: 99, Key: "relevant", Stop: explain.BesagClifford{Hits: 10}},
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: 5}, Kind: explain.WithinWindow{}, Permutations: 40, Key: "order", Stop: explain.BesagClifford{Hits: 2}},
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: 2}, Permutations: 50, Key: "probe", Stop: explain.Probe{Threshold: 0.05}},
		{Features: []int{1}, Window: tempora.Window{Start: 3, End: 5}, Permutations: 50, Key: "probe zero", Stop: explain.Probe{Threshold: 0.05}},
		{Features: []int{0, 1}, Window: tempora.Window{Start: 1, End: 3}, Kind: explain.WithinWindow{}, Permutations: 50, Key: "exact", Stop: explain.BesagClifford{Hits: 1}},
	}
	var ref []explain.TestResult
	var refAcc tempora.Accounting
	for _, workers := range []int{1, 2, 5} {
		eng, err := explain.NewEngine(f, data, nil, 9, workers)
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Run(context.Background(), tests)
		if err != nil {
			t.Fatal(err)
		}
		acc := eng.Accounting()
		if ref == nil {
			ref, refAcc = res, acc
			continue
		}
		if !reflect.DeepEqual(res, ref) && !sameResults(res, ref) {
			t.Errorf("%d workers: %+v, want %+v", workers, res, ref)
		}
		if !reflect.DeepEqual(acc, refAcc) {
			t.Errorf("%d workers: accounting %+v, want %+v", workers, acc, refAcc)
		}
	}
	// The exact test ignores its hit rule: it enumerates all 5 orderings.
	if r := ref[5]; r.Draws != 5 || r.Stopped {
		t.Errorf("exact test %+v, want 5 draws, not stopped", r)
	}
	// A probe's p-value is not reported.
	if r := ref[3]; !math.IsNaN(r.PValue) {
		t.Errorf("probe p-value %v, want NaN", r.PValue)
	}
	// The model never reads feature 1 after timestep 0: the probe's draws
	// are all exactly 0 and it stops after DefaultProbeMinDraws.
	if r := ref[4]; r.Draws != explain.DefaultProbeMinDraws || r.Score != 0 || !r.Stopped {
		t.Errorf("zero probe %+v, want %d draws, score 0, stopped", r, explain.DefaultProbeMinDraws)
	}
	var calls int64 = 1 // the baseline
	for _, r := range ref {
		calls += int64(r.Evaluated)
	}
	if refAcc.ModelCalls != calls {
		t.Errorf("%d model calls, want 1 + Σ evaluated = %d", refAcc.ModelCalls, calls)
	}
}

// sameResults compares results treating NaN p-values as equal.
func sameResults(a, b []explain.TestResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if math.IsNaN(x.PValue) && math.IsNaN(y.PValue) {
			x.PValue, y.PValue = 0, 0
		}
		if x != y {
			return false
		}
	}
	return true
}

// bcAtoms returns the values a Besag–Clifford p-value with h hits and at
// most p draws can take, ascending: (1+j)/(1+p) for j < h (no stop) and
// h/k for k = h..p (stopped at draw k).
func bcAtoms(h, p int) []float64 {
	var atoms []float64
	for j := range h {
		atoms = append(atoms, float64(1+j)/float64(1+p))
	}
	for k := h; k < p; k++ {
		atoms = append(atoms, float64(h)/float64(k))
	}
	sort.Float64s(atoms)
	return atoms
}

// ksAtoms returns the largest |F_n(a) − a| over the atoms a, F_n the
// empirical CDF of the sorted p-values ps. A valid p-value has
// P(p ≤ a) ≤ a; the sequential p-value of a continuous statistic has
// P(p ≤ a) = a exactly at its atoms (Besag and Clifford 1991), so F_n(a)
// estimates a with binomial error.
func ksAtoms(ps, atoms []float64) float64 {
	dist := 0.0
	for _, a := range atoms {
		n := sort.SearchFloat64s(ps, a*(1+1e-12)) // #{p ≤ a}
		dist = max(dist, math.Abs(float64(n)/float64(len(ps))-a))
	}
	return dist
}

// ksCritical is the critical value of the Kolmogorov–Smirnov distance of n
// draws at level lvl (the asymptotic bound sqrt(ln(2/lvl)/2)/√n), which is
// conservative for a discrete law.
func ksCritical(n int, lvl float64) float64 {
	return math.Sqrt(math.Log(2/lvl)/2) / math.Sqrt(float64(n))
}

// TestSequentialNullUniform checks that the sequential p-value is uniform
// under the null: on 2000 independent problems (fresh data and targets
// each time), the test of feature 1, which the model reads but which
// carries no signal, is exchangeable with its permutations. At every atom a
// of the p-value, P(p ≤ a) = a; the test compares the empirical CDF with a
// by the Kolmogorov–Smirnov distance (critical value at level 0.001) and
// checks the rate of p ≤ 0.1 within 3 SE of 0.1 (SE = √(0.1·0.9/2000) =
// 0.0067). The mean number of draws is E[min(h/U, P)] for U uniform, h(1 +
// ln(P/h)) = 32.9 for h = 10, P = 99.
func TestSequentialNullUniform(t *testing.T) {
	const (
		trials = 2000
		h      = 10
		pmax   = 99
		alpha  = 0.1
	)
	ps := make([]float64, 0, trials)
	var draws float64
	for trial := range trials {
		seed := uint64(10_000 + trial)
		data, f := noisyProblem(t, 20, 2, 1, 1, seed)
		eng, err := explain.NewEngine(f, data, nil, seed, 1)
		if err != nil {
			t.Fatal(err)
		}
		res, err := eng.Run(context.Background(), []explain.Test{{
			Features: []int{1}, Window: tempora.Window{Start: 0, End: 1}, Permutations: pmax, Key: "null", Stop: explain.BesagClifford{Hits: h},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, res[0].PValue)
		draws += float64(res[0].Draws) / trials
	}
	sort.Float64s(ps)
	dist, crit := ksAtoms(ps, bcAtoms(h, pmax)), ksCritical(trials, 0.001)
	low := float64(sort.SearchFloat64s(ps, alpha*(1+1e-12))) / trials
	se := math.Sqrt(alpha * (1 - alpha) / trials)
	want := h * (1 + math.Log(float64(pmax)/h))
	t.Logf("KS distance %.4f (critical %.4f); P(p ≤ %.1f) = %.4f ± %.4f; mean draws %.1f (expected %.1f)", dist, crit, alpha, low, se, draws, want)
	if dist > crit {
		t.Errorf("KS distance %.4f to the uniform law at the atoms > %.4f", dist, crit)
	}
	if math.Abs(low-alpha) > 3*se {
		t.Errorf("P(p ≤ %v) = %.4f, want %v ± %.4f", alpha, low, alpha, 3*se)
	}
	// The draws of one test are a geometric-like count with SD ≈ 25; over
	// 2000 trials the mean has SE ≈ 0.6.
	if math.Abs(draws-want) > 3 {
		t.Errorf("mean draws %.1f, want %.1f ± 3", draws, want)
	}
}

// TestSequentialStopRule checks SequentialStop and MinPermutations.
func TestSequentialStopRule(t *testing.T) {
	for _, tc := range []struct {
		m     int
		alpha float64
		want  int
	}{
		{1, 0.1, 9}, {2, 0.1, 19}, {10, 0.1, 99}, {100, 0.1, 999}, {200, 0.1, 1999}, {3, 0.05, 59}, {1, 0.5, 1}, {7, 0.3, 23},
	} {
		p := explain.MinPermutations(tc.m, tc.alpha)
		if p != tc.want {
			t.Errorf("MinPermutations(%d, %v) = %d, want %d", tc.m, tc.alpha, p, tc.want)
		}
		// The definition: 1/(P+1) ≤ α/m and 1/P > α/m.
		if 1/float64(p+1) > tc.alpha/float64(tc.m)*(1+1e-12) || (p > 1 && 1/float64(p) <= tc.alpha/float64(tc.m)*(1-1e-12)) {
			t.Errorf("MinPermutations(%d, %v) = %d is not the smallest P with 1/(P+1) ≤ α/m", tc.m, tc.alpha, p)
		}
	}
	for _, tc := range []struct {
		alpha float64
		p     int
		want  int
	}{
		{0.1, 9, 1}, {0.1, 10, 2}, {0.1, 19, 2}, {0.1, 50, 6}, {0.1, 99, 10}, {0.1, 999, 10}, {0.05, 59, 3},
	} {
		h := explain.SequentialStop(tc.alpha, tc.p).Hits
		if h != tc.want {
			t.Errorf("SequentialStop(%v, %d).Hits = %d, want %d", tc.alpha, tc.p, h, tc.want)
		}
		// Decision-exact when h is below StopHits: a stopped test's p-value
		// h/k ≥ h/P exceeds α.
		if h < explain.StopHits && float64(h)/float64(tc.p) <= tc.alpha {
			t.Errorf("SequentialStop(%v, %d): a test stopped at draw %d has p = %v ≤ α", tc.alpha, tc.p, tc.p, float64(h)/float64(tc.p))
		}
	}
}

// TestSequentialHugePermutations checks that the memory of a run does not
// grow with P_max: a null test capped at 10⁹ draws stops after its hits
// and allocates a few kilobytes, and a fixed test of 2000 draws allocates
// no more than one of 300.
func TestSequentialHugePermutations(t *testing.T) {
	data, f := noisyProblem(t, 30, 4, 1, 0, 6)
	eng, err := explain.NewEngine(f, data, nil, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	alloc := func(tests []explain.Test) uint64 {
		t.Helper()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := eng.Run(context.Background(), tests); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	// Feature 1 is never read (b = 0): every draw is a hit.
	huge := explain.Test{Features: []int{1}, Window: tempora.Window{Start: 0, End: 3}, Permutations: 1_000_000_000, Key: "huge", Stop: explain.BesagClifford{Hits: 10}}
	if a := alloc([]explain.Test{huge}); a > 1<<20 {
		t.Errorf("a sequential test with P_max = 10⁹ allocated %d bytes", a)
	}
	fixed := func(p int) explain.Test {
		return explain.Test{Features: []int{0}, Window: tempora.Window{Start: 0, End: 3}, Permutations: p, Key: fmt.Sprint("fixed", p)}
	}
	small, large := alloc([]explain.Test{fixed(300)}), alloc([]explain.Test{fixed(2000)})
	t.Logf("fixed P = 300: %d bytes, P = 2000: %d bytes", small, large)
	if large > 2*small+4096 {
		t.Errorf("a fixed test of 2000 draws allocated %d bytes, one of 300 %d: memory grows with P", large, small)
	}
	res, err := eng.Run(context.Background(), []explain.Test{huge})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Draws != 10 || r.PValue != 1 || r.Max != 1_000_000_000 {
		t.Errorf("huge test %+v, want 10 draws and p = 1", r)
	}
}

// TestStopErrors checks the validation of stopping rules.
func TestStopErrors(t *testing.T) {
	data, f := noisyProblem(t, 10, 2, 1, 0, 1)
	eng, err := explain.NewEngine(f, data, nil, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := tempora.Window{Start: 0, End: 1}
	for _, tc := range []struct {
		stop explain.Stop
		want string
	}{
		{explain.BesagClifford{Hits: -1}, "-1 hits"},
		{explain.BesagClifford{}, "0 hits"},
		{explain.Looks{}, "0 looks"},
		{explain.Looks{K: 3, Threshold: math.Inf(1)}, "threshold +Inf"},
		{explain.Looks{K: 3, Z: -1}, "look z -1"},
		{explain.Probe{Threshold: -1}, "threshold -1"},
		{explain.Probe{Threshold: math.NaN()}, "threshold NaN"},
		{explain.Probe{MinDraws: -2}, "minimum -2"},
		{explain.Probe{Z: math.Inf(1)}, "z +Inf"},
	} {
		_, err := eng.Run(context.Background(), []explain.Test{{Features: []int{0}, Window: w, Permutations: 5, Key: "k", Stop: tc.stop}})
		if err == nil || !strings.HasPrefix(err.Error(), "explain: test 0") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("stop %+v: error %v, want one containing %q", tc.stop, err, tc.want)
		}
	}
}
