package baselines

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestSAGELinear checks SAGE values on a linear regression model
// f(x) = Σ a_c x_c with independent Gaussian columns, quadratic loss and
// targets y = f(x).
//
// Where the expectation comes from: with marginal imputation the averaged
// prediction of a coalition S is Σ_{c∈S} a_c x_c + Σ_{c∉S} a_c b̄_c (f is
// linear, b̄ the background mean), so the loss is (Σ_{c∉S} a_c e_c)² with
// e = x − b̄. Over the data, v(S) = −Σ_{c,c'∉S} a_c a_c' G_cc' with
// G = mean_i e_i e_iᵀ. The Shapley value of this quadratic game gives each
// diagonal term to its column and splits each pair term equally, so the
// SAGE value is exactly φ_c = a_c·(G a)_c, of which the estimator (rows
// sampled from the data) is an unbiased Monte Carlo estimate. For
// independent columns G ≈ diag(Var x_c), hence φ_c ≈ a_c²·Var(x_c).
//
// Monte Carlo SE: one row's sample for column c is a²e_c² + 2a e_c A, with A
// the sum of a_c'e_c' over the columns after c in the row's permutation
// (each other column with probability 1/2). For Gaussian e its variance is
// 2a⁴σ⁴ + 2a²σ²·Σ_{c'≠c} a_c'²σ_c'², so SE = √(that/N) over N rows.
func TestSAGELinear(t *testing.T) {
	const (
		d, l, m = 2, 3, 20000
		perms   = 8000
		bg      = 512
		z       = 4.0 // tolerance in standard errors
	)
	a := []float64{2, -1, 0.5, 0, 1.5, 0}
	sd := []float64{1, 2, 1, 1, 0.5, 3}
	data, f := linearProblem(t, m, d, l, a, nil, sd, 2)
	p := d * l

	// Background mean and G = mean_i (x_i − b̄)(x_i − b̄)ᵀ.
	bbar := make([]float64, p)
	for c := range p {
		bbar[c], _ = columnMoments(data.X, c, bg)
	}
	g := make([]float64, p*p)
	for i := range m {
		xi := data.X.Instance(i)
		for c := range p {
			for c2 := range p {
				g[c*p+c2] += (xi[c] - bbar[c]) * (xi[c2] - bbar[c2]) / m
			}
		}
	}
	var total float64 // Σ_c a_c²σ_c²
	for c := range p {
		total += a[c] * a[c] * sd[c] * sd[c]
	}

	r, err := SAGE{Background: bg, MaxPermutations: perms, Threshold: 1e-9, Seed: 3}.Estimate(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Permutations != perms || r.Converged || !r.Accounting.Incomplete {
		t.Errorf("run: %d permutations, converged %v, incomplete %v; want %d, false, true", r.Permutations, r.Converged, r.Accounting.Incomplete, perms)
	}
	for c := range p {
		var ga float64
		for c2 := range p {
			ga += g[c*p+c2] * a[c2]
		}
		exact := a[c] * ga
		v := a[c] * a[c] * sd[c] * sd[c]
		se := math.Sqrt((2*v*v + 2*v*(total-v)) / perms)
		if got := r.Values[c]; math.Abs(got-exact) > z*se {
			t.Errorf("column %d: SAGE value %.4f, want a·(Ga) = %.4f ± %.4f", c, got, exact, z*se)
		}
		if a[c] == 0 {
			// Every sample of an unused column is exactly 0.
			if r.Values[c] != 0 || r.StdErr[c] != 0 {
				t.Errorf("unused column %d: value %v ± %v, want exactly 0", c, r.Values[c], r.StdErr[c])
			}
			continue
		}
		// The estimator's own standard error estimates the same SE; the
		// formula neglects b̄ ≠ μ and sampling error in the SE estimate, a
		// few percent each.
		if got := r.StdErr[c]; math.Abs(got-se) > 0.15*se {
			t.Errorf("column %d: reported SE %.5f, derived %.5f", c, got, se)
		}
		// Against the population value a²σ²: add the data's error in G,
		// sd ≈ a²σ²·√(2/M) for the diagonal (sample variance of a normal)
		// plus |a|σ·Σ|a'|σ'·(1/√M) for the off-diagonal (sample
		// covariances), and the background offset (x̄−b̄)² ≈ σ²/Bg (a χ²₁
		// variable: allow 9×).
		var cross float64
		for c2 := range p {
			if c2 != c {
				cross += math.Abs(a[c2]) * sd[c2]
			}
		}
		tolPop := z*se + z*(v*math.Sqrt(2.0/m)+math.Abs(a[c])*sd[c]*cross/math.Sqrt(m)) + 9*v/bg
		if got := r.Values[c]; math.Abs(got-v) > tolPop {
			t.Errorf("column %d: SAGE value %.4f, want a²·Var = %.4f ± %.4f", c, got, v, tolPop)
		}
	}
}

// TestSAGEImputers checks the three imputers on f(x) = x₀² (column 0 only)
// with y = f(x) and quadratic loss, where the answer is analytic.
//
// Where the expectation comes from: a coalition containing column 0
// predicts y exactly (loss 0); one without it predicts a constant m, so
// every row's sample for column 0 is (x₀² − m)², whatever the permutation,
// and every other column's sample is exactly 0. The SAGE value of column 0
// is the data mean of (x₀² − m)², estimated from N rows sampled with
// replacement, SE = SD_data((x₀² − m)²)/√N. The constant m is
//   - Marginal: the background mean of x₀² (predictions averaged over the
//     background), ≈ E x₀² = 2 for x₀ ~ N(1, 1), so φ ≈ Var(x₀²) = 6;
//   - Mean (SAGE-m): (mean of x₀)² ≈ 1, so φ ≈ E(x₀²−1)² = 7;
//   - Zero (SAGE-z): 0, so φ ≈ E x₀⁴ = 10.
func TestSAGEImputers(t *testing.T) {
	const (
		d, l, m = 2, 2, 5000
		perms   = 20000
		z       = 4.0 // tolerance in standard errors
	)
	x := gaussian(m, d, l, []float64{1, 0, 0, 0}, []float64{1, 1, 1, 1}, 5)
	square := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			v := x.Instance(i)[0]
			dst[i] = v * v
		}
		return nil
	})
	y := make([]float64, m)
	square(y, x)
	data := &tempora.Dataset{X: x, Y: y}

	bgMean := func(n int) float64 {
		var s float64
		for i := range n {
			s += y[i]
		}
		return s / float64(n)
	}
	x0mean, _ := columnMoments(x, 0, m)
	for _, tc := range []struct {
		imp      Imputer
		constant float64
		approx   float64 // the population value, for orientation only
	}{
		{Marginal, bgMean(DefaultSAGEBackground), 6},
		{Mean, x0mean * x0mean, 7},
		{Zero, 0, 10},
	} {
		t.Run(tc.imp.String(), func(t *testing.T) {
			var mean, sq float64
			for i := range m {
				s := (y[i] - tc.constant) * (y[i] - tc.constant)
				mean += s / m
				sq += s * s / m
			}
			se := math.Sqrt((sq - mean*mean) / perms)
			r, err := SAGE{Imputer: tc.imp, MaxPermutations: perms, Threshold: 1e-9, Seed: 11}.Estimate(context.Background(), square, data)
			if err != nil {
				t.Fatal(err)
			}
			if r.Method != tc.imp.String() {
				t.Errorf("method %q, want %q", r.Method, tc.imp)
			}
			if got := r.Values[0]; math.Abs(got-mean) > z*se {
				t.Errorf("column 0: %.4f, want mean (x₀²−m)² = %.4f ± %.4f (population ≈ %v)", got, mean, z*se, tc.approx)
			}
			for c := 1; c < d*l; c++ {
				if r.Values[c] != 0 {
					t.Errorf("unused column %d: %v, want exactly 0", c, r.Values[c])
				}
			}
			bg := 1
			if tc.imp == Marginal {
				bg = DefaultSAGEBackground
			}
			// (d·l + 1) evaluations of every row and its background
			// copies.
			if want := int64(perms * (d*l + 1) * bg); r.Accounting.InstanceEvals != want {
				t.Errorf("%d instance evaluations, want %d", r.Accounting.InstanceEvals, want)
			}
		})
	}
}

// TestSAGEStopping checks the stopping rules: the convergence test stops a
// run at the first batch whose ratio is below the threshold (Incomplete
// false, no warning), and a permutation or time budget stops a run that has
// not converged, with the warning.
func TestSAGEStopping(t *testing.T) {
	a := []float64{2, -1, 0.5, 0, 1.5, 0}
	sd := []float64{1, 2, 1, 1, 0.5, 3}
	data, f := linearProblem(t, 2000, 2, 3, a, nil, sd, 4)
	ctx := context.Background()
	cfg := SAGE{Imputer: Mean, BatchSize: 100, Seed: 9}

	r, err := cfg.Estimate(ctx, f, data)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Converged || r.Accounting.Incomplete || r.Ratio >= DefaultSAGEThreshold {
		t.Fatalf("default run: converged %v, incomplete %v, ratio %v", r.Converged, r.Accounting.Incomplete, r.Ratio)
	}
	if r.Batches < 2 || r.Permutations != 100*r.Batches {
		t.Fatalf("default run: %d batches, %d permutations", r.Batches, r.Permutations)
	}
	e, err := cfg.Explain(ctx, f, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Method != "SAGE-m" || e.Accounting.Incomplete || len(e.Warnings) != 0 {
		t.Errorf("converged explanation: %q incomplete %v warnings %v", e.Method, e.Accounting.Incomplete, e.Warnings)
	}

	// The same streams stopped one batch earlier have not converged: the
	// rule stopped the run at the first batch where it held.
	early := cfg
	early.MaxPermutations = r.Permutations - 100
	re, err := early.Estimate(ctx, f, data)
	if err != nil {
		t.Fatal(err)
	}
	if re.Converged || !re.Accounting.Incomplete || re.Ratio < DefaultSAGEThreshold {
		t.Errorf("one batch earlier: converged %v, ratio %v, want not converged", re.Converged, re.Ratio)
	}
	ee, err := early.Explain(ctx, f, data)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("SAGE did not converge within budget (ratio %.3g after %d permutations)", re.Ratio, re.Permutations)
	if !ee.Accounting.Incomplete || len(ee.Warnings) != 1 || ee.Warnings[0] != want {
		t.Errorf("budget-stopped explanation: incomplete %v, warnings %q, want %q", ee.Accounting.Incomplete, ee.Warnings, want)
	}

	// A permutation cap that is not a multiple of the batch size shortens
	// the last batch.
	capped := cfg
	capped.MaxPermutations = 150
	capped.Threshold = 1e-9
	rc, err := capped.Estimate(ctx, f, data)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Permutations != 150 || rc.Batches != 2 || rc.Converged {
		t.Errorf("cap 150: %d permutations in %d batches, converged %v", rc.Permutations, rc.Batches, rc.Converged)
	}

	// A time budget of 1ns stops after the first batch.
	timed := cfg
	timed.Threshold = 1e-9
	timed.MaxTime = 1
	tr, err := timed.Explain(ctx, f, data)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Accounting.Incomplete || len(tr.Warnings) != 1 || !strings.HasPrefix(tr.Warnings[0], "SAGE did not converge within budget") {
		t.Errorf("time budget: incomplete %v, warnings %q", tr.Accounting.Incomplete, tr.Warnings)
	}
}

// TestSAGEMarginalAveraging checks that the marginal imputer averages
// predictions over the background before the loss (not the losses): with a
// background of 2 rows and f(x) = x₀², the empty coalition predicts
// (b₀² + b₁²)/2 for every row.
func TestSAGEMarginalAveraging(t *testing.T) {
	x, _ := tempora.TensorFrom(3, 1, 1, []float64{1, 3, 2})
	square := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i, v := range x.Data {
			dst[i] = v * v
		}
		return nil
	})
	data := &tempora.Dataset{X: x, Y: []float64{1, 9, 4}}
	r, err := SAGE{Background: 2, MaxPermutations: 3000, Threshold: 1e-9}.Estimate(context.Background(), square, data)
	if err != nil {
		t.Fatal(err)
	}
	// Empty coalition predicts (1+9)/2 = 5; the full one predicts y. The
	// single column's value is the mean over sampled rows of (y−5)², whose
	// data values are 16, 16, 1: mean 11, SD √50 ≈ 7.07.
	se := math.Sqrt(50.0 / 3000)
	if got := r.Values[0]; math.Abs(got-11) > 4*se {
		t.Errorf("value %.4f, want 11 ± %.3f (averaging the losses would give 27)", got, 4*se)
	}
}
