package explain_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// modelFromWeights returns the linear model Σ_t w[t]·x[j, t] over the
// whole sequence of feature j.
func modelFromWeights(j int, w []float64) tempora.ModelFunc {
	return weightedWindow(j, 0, w)
}

// explainFeature runs cfg on model and data and returns feature j's
// result, failing the test on an error.
func explainFeature(t *testing.T, cfg explain.TIME, model tempora.Model, data *tempora.Dataset, j int) tempora.FeatureResult {
	t.Helper()
	ex, err := cfg.Explain(context.Background(), model, data)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, ex, explain.DefaultAlpha)
	return ex.Features[j]
}

// TestWindowNoiseWeights is the learned-noise model of the window search:
// feature 1 is read with weight w over its true window [16, 23] and with
// small weights ε_t ~ N(0, 0.05²) (drawn per seed) at every earlier
// timestep, as a trained network picks up. Under squared loss a region's
// score is 2·Σ(weights²) over it, so the ε-prefix carries the share
// Σε²/(8w² + Σε²) of the importance, with E Σε² = 16·0.05² = 0.04.
//
// With w = 2 that share is about 0.125%, a quarter of the threshold
// (1−γ)/2 = 0.5% at γ = 0.99: the window must stretch in at most 1 of 20
// seeds (the bar) and never cut the true window. With w = 1 the
// share is about 0.5%, the threshold itself: the ε-prefix is then
// important by γ's own definition in about half the seeds, and the window
// search stretches over it with either rule; the default several windows
// then trim the ε timesteps that surely carry less than θ from the
// window's start (splitWindows): none of 20 seeds stretches with either
// rule. The bar, at most 1 of 20 seeds, is asserted for the
// default (verified, several windows) at both weights.
func TestWindowNoiseWeights(t *testing.T) {
	if testing.Short() {
		t.Skip("80 explanations")
	}
	const m, d, l, seeds = 400, 3, 24, 20
	truth := tempora.Window{Start: 16, End: 23}
	for _, wTrue := range []float64{2, 1} {
		stretched := map[explain.WindowRule]int{}
		for seed := range uint64(seeds) {
			w := make([]float64, l)
			rng := tempora.NewRand(seed, "noise weights")
			for k := range w {
				w[k] = 0.05 * rng.NormFloat64()
				if truth.Contains(k) {
					w[k] = wTrue
				}
			}
			model := modelFromWeights(1, w)
			x := gaussianData(m, d, l, 100+seed)
			data := regressionData(t, x, model, 0.5, 100+seed)
			for _, rule := range []explain.WindowRule{explain.Verified, explain.PaperRule} {
				f := explainFeature(t, explain.TIME{Seed: seed, WindowRule: rule, Workers: 2}, model, data, 1)
				if !f.Important || f.Window == nil {
					t.Fatalf("w=%v seed %d %v: feature 1 not important", wTrue, seed, rule)
				}
				cells := claimed(f)
				for t0 := truth.Start; t0 <= truth.End; t0++ {
					if !cells[t0] {
						t.Errorf("w=%v seed %d %v: windows %v cut the true window %v", wTrue, seed, rule, windowList(f), truth)
						break
					}
				}
				for t0, c := range cells {
					if c && !truth.Contains(t0) {
						stretched[rule]++
						break
					}
				}
			}
		}
		t.Logf("w=%v: stretched windows in %d seeds: verified %d, paper %d", wTrue, seeds, stretched[explain.Verified], stretched[explain.PaperRule])
		if stretched[explain.Verified] > 1 {
			t.Errorf("w=%v: verified rule stretched the window in %d of %d seeds, want at most 1", wTrue, stretched[explain.Verified], seeds)
		}
	}
}

// claimed returns the timesteps of f's significant windows.
func claimed(f tempora.FeatureResult) map[int]bool {
	out := map[int]bool{}
	for _, w := range f.Windows {
		for t := w.Window.Start; w.Significant && t <= w.Window.End; t++ {
			out[t] = true
		}
	}
	return out
}

// windowList returns f's windows.
func windowList(f tempora.FeatureResult) []tempora.Window {
	var out []tempora.Window
	for _, w := range f.Windows {
		out = append(out, w.Window)
	}
	return out
}

// TestWindowHarmfulRegion checks how a region whose permutation lowers
// the loss is reported. The model reads feature 0 over [10, 14] correctly
// and timestep 0 with the wrong sign: the targets hold −b·x₀ and the model
// +b·x₀, so permuting x₀ across instances halves that error (4b² → 2b²):
// the prefixes that contain timestep 0 have score −2b², far beyond the
// threshold in magnitude. The model reads timestep 0, so the verified
// rule, which judges a region by the size of its effect and leaves out
// only the regions its checks find surely below the threshold, reports it
// as a window of its own beside [10, 14] (docs/decisions.md, decision 25);
// the paper's rule, one window, stretches it over [0, 14].
func TestWindowHarmfulRegion(t *testing.T) {
	const m, d, l, b = 400, 2, 15, 0.5
	x := gaussianData(m, d, l, 7)
	good := weightedWindow(0, 10, []float64{1, 1, 2, 2, 3})
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		if err := good(dst, x); err != nil {
			return err
		}
		for i := range dst {
			dst[i] += b * x.At(i, 0, 0)
		}
		return nil
	})
	truth := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		if err := good(dst, x); err != nil {
			return err
		}
		for i := range dst {
			dst[i] -= b * x.At(i, 0, 0)
		}
		return nil
	})
	data := regressionData(t, x, truth, 0.3, 7)
	for _, fixed := range []bool{false, true} {
		f := explainFeature(t, explain.TIME{Seed: 1, Tests: testsOf(fixed)}, model, data, 0)
		want := []tempora.Window{{Start: 0, End: 0}, {Start: 10, End: 14}}
		if got := windowList(f); !slices.Equal(got, want) {
			t.Errorf("fixed=%v: verified windows %v, want %v", fixed, got, want)
		}
		p := explainFeature(t, explain.TIME{Seed: 1, Tests: testsOf(fixed), WindowRule: explain.PaperRule, Windows: 1}, model, data, 0)
		if p.Window == nil || *p.Window != (tempora.Window{Start: 0, End: 14}) {
			t.Errorf("fixed=%v: paper window %v, want [0, 14] (the test's premise)", fixed, p.Window)
		}
	}
}

// TestWindowSignChange checks that effects whose sign changes inside the
// window keep their window under the verified rule: prefixes and
// suffixes are judged by the loss their permutation adds, which is
// positive whatever the sign of the weights they remove.
func TestWindowSignChange(t *testing.T) {
	const m, d, l = 400, 3, 16
	for seed := range uint64(5) {
		x := gaussianData(m, d, l, 30+seed)
		model := weightedWindow(2, 4, []float64{2, -3, 1, -1, 3, -2})
		data := regressionData(t, x, model, 0.5, 30+seed)
		for _, fixed := range []bool{false, true} {
			f := explainFeature(t, explain.TIME{Seed: seed, Tests: testsOf(fixed)}, model, data, 2)
			if want := (tempora.Window{Start: 4, End: 9}); f.Window == nil || *f.Window != want || !f.WindowSignificant {
				t.Errorf("seed %d fixed=%v: window %v significant %v, want %v significant", seed, fixed, f.Window, f.WindowSignificant, want)
			}
			if !f.WindowOrderingImportant {
				t.Errorf("seed %d fixed=%v: the window's ordering is not important", seed, fixed)
			}
		}
	}
}

// TestWindowOrderingPower measures the power of the window-ordering test
// on an exactly ordering-sensitive model: y = x[1, 6] − x[1, 13], so the
// window is [6, 13] (8 timesteps) and a within-window permutation leaves
// every prediction unchanged only when it fixes both ends (1 in 56 draws)
// and changes it otherwise. With the cap MinPermutations(1, α) = 9 the
// test passes only with no such draw, (55/56)⁹ ≈ 85% (34 of 40 seeds
// expected); with PowerHits = 3 (cap 29, up to 2 such draws)
// P(Bin(29, 1/56) ≤ 2) ≈ 98.5%. The bar is 38 of 40 seeds, which
// the new cap misses with probability P(Bin(40, 0.015) ≥ 3) ≈ 2% (the
// seeds are fixed, so the test is deterministic) and the old cap would
// meet with probability P(Bin(40, 0.15) ≤ 2) ≈ 5%. The order-invariant mean over the same window
// must get no ordering claim in any seed: every permutation leaves its
// predictions unchanged up to rounding. The sensitive model runs with one
// window (Windows = 1): with several, its window splits into [6, 6] and
// [13, 13], which have no ordering to test (the order between windows is
// not among TIME's tests).
func TestWindowOrderingPower(t *testing.T) {
	if testing.Short() {
		t.Skip("80 explanations")
	}
	const m, d, l, seeds = 300, 2, 20, 40
	sensitive := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			dst[i] = x.At(i, 1, 6) - x.At(i, 1, 13)
		}
		return nil
	})
	mean := weightedWindow(1, 6, []float64{1, 1, 1, 1, 1, 1, 1, 1})
	found, claimed, wholeSeq := 0, 0, 0
	for seed := range uint64(seeds) {
		x := gaussianData(m, d, l, 200+seed)
		data := regressionData(t, x, sensitive, 0.5, 200+seed)
		f := explainFeature(t, explain.TIME{Seed: seed, Workers: 2, Windows: 1}, sensitive, data, 1)
		if f.Window != nil && *f.Window == (tempora.Window{Start: 6, End: 13}) && f.WindowOrderingImportant {
			found++
		}
		data = regressionData(t, x, mean, 0.5, 200+seed)
		f = explainFeature(t, explain.TIME{Seed: seed, Workers: 2}, mean, data, 1)
		if f.WindowOrderingImportant {
			claimed++
		}
		if f.OrderingImportant {
			wholeSeq++
		}
	}
	t.Logf("window ordering found in %d of %d seeds; order-invariant mean: window ordering claimed in %d, whole-sequence ordering test rejected in %d", found, seeds, claimed, wholeSeq)
	if found < 38 {
		t.Errorf("window ordering found in %d of %d seeds, want at least 38", found, seeds)
	}
	if claimed > 0 {
		t.Errorf("order-invariant mean: window ordering claimed in %d of %d seeds, want none", claimed, seeds)
	}
}

// TestSeveralWindows checks the gap split on a feature read over [2, 5]
// and [14, 17] of 20 timesteps, with weights of either sign: the default
// (up to 3 windows) must report exactly these two windows, both
// significant, in at least 18 of 20 seeds (the bar is 80%; the
// split fails only if a gap probe is unsure or a block timestep within
// noise of the threshold, rare at this signal), while one window
// (Windows = 1, the paper's) reports their hull [2, 17] in every seed.
// It also checks that a single contiguous window is never split.
func TestSeveralWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("60 explanations")
	}
	const m, d, l, seeds = 300, 3, 20, 20
	a, b := weightedWindow(1, 2, []float64{1, -2, 1.5, 1}), weightedWindow(1, 14, []float64{-1, 2, 1, -1.5})
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		tmp := make([]float64, len(dst))
		if err := a(dst, x); err != nil {
			return err
		}
		if err := b(tmp, x); err != nil {
			return err
		}
		for i := range dst {
			dst[i] += tmp[i]
		}
		return nil
	})
	single := weightedWindow(1, 6, []float64{1, 0.5, -1, 2, 1})
	want := []tempora.Window{{Start: 2, End: 5}, {Start: 14, End: 17}}
	exact, hull, whole := 0, 0, 0
	for seed := range uint64(seeds) {
		x := gaussianData(m, d, l, 300+seed)
		data := regressionData(t, x, model, 0.5, 300+seed)
		f := explainFeature(t, explain.TIME{Seed: seed, Workers: 2}, model, data, 1)
		if got := windowList(f); len(got) == 2 && got[0] == want[0] && got[1] == want[1] && f.Windows[0].Significant && f.Windows[1].Significant {
			exact++
		} else {
			t.Logf("seed %d: windows %v", seed, got)
		}
		f = explainFeature(t, explain.TIME{Seed: seed, Workers: 2, Windows: 1}, model, data, 1)
		if f.Window != nil && *f.Window == (tempora.Window{Start: 2, End: 17}) {
			hull++
		}
		data = regressionData(t, x, single, 0.5, 300+seed)
		f = explainFeature(t, explain.TIME{Seed: seed, Workers: 2}, single, data, 1)
		if got := windowList(f); len(got) == 1 && got[0] == (tempora.Window{Start: 6, End: 10}) {
			whole++
		} else {
			t.Errorf("seed %d: contiguous window [6, 10] reported as %v", seed, got)
		}
	}
	t.Logf("two windows recovered exactly in %d of %d seeds; one window: hull [2, 17] in %d; contiguous [6, 10] kept whole in %d", exact, seeds, hull, whole)
	if exact < 18 {
		t.Errorf("two windows recovered exactly in %d of %d seeds, want at least 18", exact, seeds)
	}
	if hull != seeds {
		t.Errorf("one window: hull reported in %d of %d seeds, want all", hull, seeds)
	}
}

// TestGapCalibration is the calibration of the gap split at its null
// boundary. Claiming a gap says that the model's use of those timesteps
// carries at most θ = (1−γ)/2 of the feature's importance on the data
// explained (TIME's tests are conditional on the data); the null of a gap
// is that it carries more. The model reads feature 0 over [4, 11] with
// weight 1 except at timestep 8, whose weight c is solved per dataset so
// that the expected score of permuting timestep 8 alone is exactly θ times
// that of permuting the whole sequence: the hardest null, on the boundary.
// For a linear model under squared loss with residuals r (the targets'
// noise) and a uniform permutation π of the instances, the expected score
// of permuting a block whose contribution is a_i is 2·var(a) + 2·cov(r, a)
// (population moments over the instances), so both sides are quadratics in
// c. A gap at 8 is kept only when the upper end of its check's interval,
// Score + t·SE, is at most the threshold at one of its three looks, at
// O'Brien and Fleming's boundary whose joint one-sided error is that of
// one look at ±2 SE (2.3%; docs/decisions.md, decision 22), so the
// false-split rate at the boundary should be at most about 2.3%
// (less, since a gap is verified only where every single-timestep probe
// was already surely unimportant); the threshold itself is estimated (from the overall test's draws), which the
// probe's interval does not see. Over 400 trials the test requires a rate
// of at most 0.05: 2.3% plus 3 binomial SEs at 400 trials (3·0.0075) is
// 0.045, so 0.05 fails only if the rate is materially above nominal, and
// is half the α = 0.1 of the window family. A split anywhere else inside
// [4, 11] (timesteps of share about 1/7) is a false gap too and counts.
func TestGapCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("400 explanations")
	}
	const m, d, l, trials = 200, 2, 16, 400
	theta := (1 - explain.DefaultGamma) / 2
	split, found := 0, 0
	for trial := range uint64(trials) {
		x := gaussianData(m, d, l, 5000+trial)
		r := make([]float64, m)
		rng := tempora.NewRand(5000+trial, "noise")
		for i := range r {
			r[i] = 0.5 * rng.NormFloat64()
		}
		c := boundaryWeight(x, r, theta)
		w := []float64{1, 1, 1, 1, c, 1, 1, 1}
		model := weightedWindow(0, 4, w)
		y := make([]float64, m)
		if err := model(y, x); err != nil {
			t.Fatal(err)
		}
		for i := range y {
			y[i] += r[i]
		}
		ex, err := explain.TIME{Seed: trial, Workers: 1}.Explain(context.Background(), model, &tempora.Dataset{X: x, Y: y, Task: tempora.Regression})
		if err != nil {
			t.Fatal(err)
		}
		f := ex.Features[0]
		if !f.Important {
			continue
		}
		found++
		// A gap inside the hull of the windows is a split.
		for k := 1; k < len(f.Windows); k++ {
			if f.Windows[k-1].Window.End >= 4 && f.Windows[k].Window.Start <= 11 {
				split++
				break
			}
		}
	}
	rate := float64(split) / float64(max(found, 1))
	t.Logf("false splits at the null boundary: %d of %d trials with the feature found (%.4f)", split, found, rate)
	if found < trials*9/10 {
		t.Fatalf("feature found in %d of %d trials: the test's premise (a strong feature) fails", found, trials)
	}
	if rate > 0.05 {
		t.Errorf("false-split rate %.4f > 0.05", rate)
	}
}

// boundaryWeight returns the weight c ≥ 0 of timestep 8 (feature 0) at
// which the expected score of permuting it alone is θ times that of
// permuting timesteps 4..11 with weights (1, 1, 1, 1, c, 1, 1, 1), for
// residuals r: with u_i = x_i8 and v_i the sum of the other seven,
// 2(c²var u + c·cov(r, u)) = θ·2(var(v) + 2c·cov(u, v) + c²var u + cov(r, v) + c·cov(r, u)),
// solved by bisection on [0, 2] (the left side minus the right is negative
// at 0 and positive at 2 for the data here).
func boundaryWeight(x *tempora.Tensor, r []float64, theta float64) float64 {
	m := x.M
	u, v := make([]float64, m), make([]float64, m)
	for i := range m {
		for t := 4; t <= 11; t++ {
			if t == 8 {
				u[i] = x.At(i, 0, t)
			} else {
				v[i] += x.At(i, 0, t)
			}
		}
	}
	cov := func(a, b []float64) float64 {
		var ma, mb, s float64
		for i := range a {
			ma += a[i]
			mb += b[i]
		}
		ma /= float64(len(a))
		mb /= float64(len(b))
		for i := range a {
			s += (a[i] - ma) * (b[i] - mb)
		}
		return s / float64(len(a))
	}
	vu, vv, uv, ru, rv := cov(u, u), cov(v, v), cov(u, v), cov(r, u), cov(r, v)
	g := func(c float64) float64 {
		return c*c*vu + c*ru - theta*(vv+2*c*uv+c*c*vu+rv+c*ru)
	}
	lo, hi := 0.0, 2.0
	for range 100 {
		mid := (lo + hi) / 2
		if g(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TestProbeCut checks that stopping the window-search probes and gap
// checks early (the default) finds the same windows as running every
// probe and check to its cap (the test-only FullProbesTests), on models
// that read three features over windows of unequal weights, and reports
// the probes' draws: a window that differs must lie within the ranges the
// full run gives its ends (a probe that stopped once its interval cleared
// the threshold may not clear it after all its draws; the full run then
// reports that end as uncertain).
func TestProbeCut(t *testing.T) {
	if testing.Short() {
		t.Skip("explains 6 problems in two modes")
	}
	const m, d, l = 300, 4, 20
	same, total := 0, 0
	var draws, fullDraws int64
	for seed := range uint64(6) {
		x := gaussianData(m, d, l, 60+seed)
		parts := []tempora.ModelFunc{
			weightedWindow(0, 2, []float64{1, 2, 1.5, 0.5}),
			weightedWindow(1, 9, []float64{-1, 1, -1, 2, 0.3}),
			weightedWindow(3, 15, []float64{0.8, 0.8, 0.8}),
		}
		model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			part := make([]float64, len(dst))
			clear(dst)
			for _, f := range parts {
				if err := f(part, x); err != nil {
					return err
				}
				for i, v := range part {
					dst[i] += v
				}
			}
			return nil
		})
		data := regressionData(t, x, model, 1, 60+seed)
		cut, err := explain.TIME{Seed: seed}.Explain(context.Background(), model, data)
		if err != nil {
			t.Fatal(err)
		}
		full, err := explain.TIME{Seed: seed, Tests: explain.FullProbesTests}.Explain(context.Background(), model, data)
		if err != nil {
			t.Fatal(err)
		}
		draws += cut.Accounting.Draws[1].Draws
		fullDraws += full.Accounting.Draws[1].Draws
		for j := range cut.Features {
			a, b := cut.Features[j], full.Features[j]
			if a.Important != b.Important {
				t.Fatalf("seed %d feature %d: important %v and %v (the overall decisions differ)", seed, j, a.Important, b.Important)
			}
			if a.Window == nil || b.Window == nil {
				continue
			}
			total++
			fr := b.Windows[0]
			switch {
			case slices.Equal(windowList(a), windowList(b)):
				same++
			case len(a.Windows) == 1 && len(b.Windows) == 1 && fr.StartRange.Contains(a.Window.Start) && fr.EndRange.Contains(a.Window.End):
				t.Logf("seed %d feature %d: windows %v with probe stopping, %v (start in %v, end in %v) with full probes", seed, j, windowList(a), windowList(b), fr.StartRange, fr.EndRange)
			default:
				t.Errorf("seed %d feature %d: windows %v with probe stopping, %v with full probes", seed, j, windowList(a), windowList(b))
			}
		}
	}
	t.Logf("probe stopping: %d/%d windows unchanged; window-search draws %d instead of %d (%.1f%%)", same, total, draws, fullDraws, 100*float64(draws)/float64(fullDraws))
	if total < 18 {
		t.Errorf("%d windows compared, want the 18 of the three features in 6 problems", total)
	}
}

// TestWindowOrderingAnyWindow checks the feature-level window-ordering
// claim of a feature read over two windows: the mean over [2, 5], whose
// order does not matter, and a weighted sum over [12, 16], whose order
// does. The claim must show at the feature level whichever window leads.
func TestWindowOrderingAnyWindow(t *testing.T) {
	const m, d, l = 400, 2, 20
	mean := weightedWindow(0, 2, []float64{1.5, 1.5, 1.5, 1.5})
	weighted := weightedWindow(0, 12, []float64{1, 3, -2, 0.5, 2.5})
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		a := make([]float64, len(dst))
		if err := mean(a, x); err != nil {
			return err
		}
		if err := weighted(dst, x); err != nil {
			return err
		}
		for i := range dst {
			dst[i] += a[i]
		}
		return nil
	})
	for seed := range uint64(5) {
		data := regressionData(t, gaussianData(m, d, l, 40+seed), model, 0.5, 40+seed)
		f := explainFeature(t, explain.TIME{Seed: seed}, model, data, 0)
		ws := windowList(f)
		if len(ws) != 2 || ws[0] != (tempora.Window{Start: 2, End: 5}) || ws[1] != (tempora.Window{Start: 12, End: 16}) {
			t.Errorf("seed %d: windows %v, want [2, 5] and [12, 16]", seed, ws)
			continue
		}
		if f.Windows[0].OrderingImportant || !f.Windows[1].OrderingImportant {
			t.Errorf("seed %d: window orderings %v and %v, want false and true", seed, f.Windows[0].OrderingImportant, f.Windows[1].OrderingImportant)
		}
		if !f.WindowOrderingImportant || f.WindowOrderingPValue != f.Windows[1].OrderingPValue {
			t.Errorf("seed %d: feature-level window ordering %v (p %v), want true with the second window's p %v", seed, f.WindowOrderingImportant, f.WindowOrderingPValue, f.Windows[1].OrderingPValue)
		}
	}
}

// TestWindowSlope checks that a feature read through its least-squares
// slope over [a, b], whose weights t − t̄ leave the cells near the
// window's centre almost no weight, keeps one window, exactly [a, b], with
// its ordering claim (issue 31: the split used to cut it in two pieces too
// short for their ordering test).
func TestWindowSlope(t *testing.T) {
	const m, d, l = 500, 2, 30
	for _, tc := range []struct{ a, b int }{{4, 11}, {6, 17}, {3, 22}, {0, 29}} {
		n := tc.b - tc.a + 1
		c := make([]float64, n)
		for k := range c {
			c[k] = (float64(k) - float64(n-1)/2) * 6 / float64(n)
		}
		model := weightedWindow(0, tc.a, c)
		for seed := range uint64(4) {
			data := regressionData(t, gaussianData(m, d, l, 100+seed), model, 0.5, 100+seed)
			f := explainFeature(t, explain.TIME{Seed: seed}, model, data, 0)
			want := tempora.Window{Start: tc.a, End: tc.b}
			if ws := windowList(f); len(ws) != 1 || ws[0] != want || !f.WindowSignificant || !f.WindowOrderingImportant {
				t.Errorf("slope over %v, seed %d: windows %v (significant %v), window ordering %v; want %v with its ordering", want, seed, ws, f.WindowSignificant, f.WindowOrderingImportant, want)
			}
		}
	}
}

// TestOrderingInvariantWindow is the null calibration of the window
// ordering claim: the model averages feature 0 over [8, 12] (equal
// weights: its order does not matter) and reads every even timestep with
// a small learned-noise weight ε ~ N(0, 0.1²), as a trained network picks
// up. Over 100 seeds, the share of explanations that claim an ordering for
// some window of the feature must stay within α plus 3 binomial standard
// errors (α + 0.09), and the reported window must be exactly [8, 12] in
// most of them: the noise weights must not stretch it.
func TestOrderingInvariantWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("100 explanations")
	}
	const (
		m, d, l = 500, 2, 24
		seeds   = 100
		alpha   = explain.DefaultAlpha
	)
	claims, exact := 0, 0
	for seed := range uint64(seeds) {
		rng := tempora.NewRand(seed, "noise weights")
		w := make([]float64, l)
		for s := 0; s < l; s += 2 {
			w[s] = 0.1 * rng.NormFloat64()
		}
		for s := 8; s <= 12; s++ {
			w[s] = 1.5
		}
		model := weightedWindow(0, 0, w)
		data := regressionData(t, gaussianData(m, d, l, 300+seed), model, 0.5, 300+seed)
		f := explainFeature(t, explain.TIME{Seed: seed}, model, data, 0)
		if f.WindowOrderingImportant {
			claims++
		}
		if ws := windowList(f); len(ws) == 1 && ws[0] == (tempora.Window{Start: 8, End: 12}) {
			exact++
		}
	}
	bound := alpha + 3*math.Sqrt(alpha*(1-alpha)/seeds)
	t.Logf("ordering claimed in %d of %d explanations (bound %.3f); window exactly [8, 12] in %d", claims, seeds, bound, exact)
	if float64(claims)/seeds > bound {
		t.Errorf("ordering claimed for an order-invariant window in %d of %d explanations, above α + 3 SE = %.3f", claims, seeds, bound)
	}
	if exact < seeds*8/10 {
		t.Errorf("window exactly [8, 12] in %d of %d explanations, want 80%%", exact, seeds)
	}
}
