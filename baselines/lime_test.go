package baselines

import (
	"context"
	"math"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestLIMELinear checks LIME's local weights and global scores on a linear
// regression model f(x) = Σ a_c x_c.
//
// Where the expectation comes from: LIME draws x = μ + σ·z and fits the
// surrogate on the standardised z, so f = const + Σ_c a_c·σ_c·z_c is exactly
// linear in the surrogate's features with coefficients β*_c = a_c·σ_c (σ the
// population SD of the data). With no noise, the weighted ridge solution is
// β = (G+αI)⁻¹Gβ*, G the weighted, centred Gram matrix, so
// ‖β − β*‖ ≤ α‖β*‖/(λ_min(G)+α). With p = 6 columns and kernel width²
// 0.5625·6, a sample's kernel weight averages (1+1/width²)^(−p/2)·
// exp(−‖z₀‖²/(2(width²+1))) ≈ 0.46·exp(−‖z₀‖²/8.75) (Gaussian integral),
// so Σw over 5000 samples is in the hundreds or more for any instance
// within ‖z₀‖² ≤ 20, and λ_min(G) ≥ 100 comfortably (G ≈ Σw·I).
// Hence each weight is within 1% of ‖β*‖ of a_c·σ_c: no Monte Carlo error
// enters at all. The global score is then mean |β| ≈ |a_c|·σ_c.
func TestLIMELinear(t *testing.T) {
	const (
		d, l, m   = 2, 3, 400
		explained = 20
		relTol    = 0.01 // α/λ_min(G) bound derived above
	)
	// Distinct coefficients and SDs per cell, so a wrong feature/timestep
	// mapping cannot pass; column 3 is irrelevant.
	a := []float64{2, -1, 0.5, 0, 1.5, -3}
	mu := []float64{1, -2, 0, 5, 0.5, 0}
	sd := []float64{1, 2, 0.5, 1, 3, 0.25}
	data, f := linearProblem(t, m, d, l, a, mu, sd, 1)

	want := make([]float64, d*l)
	var norm float64
	for c := range want {
		_, v := columnMoments(data.X, c, m)
		want[c] = a[c] * math.Sqrt(v)
		norm += want[c] * want[c]
	}
	norm = math.Sqrt(norm)

	cfg := LIME{Instances: explained, Seed: 7}
	w, _, _, err := cfg.localWeights(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range explained {
		for c := range want {
			if got := w[i*d*l+c]; math.Abs(got-want[c]) > relTol*norm {
				t.Errorf("instance %d column %d: local weight %.5f, want a·σ = %.5f ± %.5f", i, c, got, want[c], relTol*norm)
			}
		}
	}

	e, err := cfg.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Method != "LIME" || e.D != d || e.L != l {
		t.Fatalf("explanation %q %d×%d, want LIME %d×%d", e.Method, e.D, e.L, d, l)
	}
	for j := range d {
		for s := range l {
			c := j*l + s
			if got := e.Cell(j, s); math.Abs(got-math.Abs(want[c])) > relTol*norm {
				t.Errorf("cell (%d, %d): mean |weight| %.5f, want |a|·σ = %.5f", j, s, got, math.Abs(want[c]))
			}
		}
	}
	// Feature 0's cells are all non-zero, so its summary is their mean.
	if got, hi := e.Features[0].Score, (math.Abs(want[0])+math.Abs(want[1])+math.Abs(want[2]))/3; math.Abs(got-hi) > relTol*norm {
		t.Errorf("feature 0 score %.5f, want %.5f", got, hi)
	}
	if e.Accounting.ModelCalls != explained || e.Accounting.InstanceEvals != explained*DefaultLIMESamples {
		t.Errorf("accounting %+v, want %d calls of %d rows", e.Accounting, explained, DefaultLIMESamples)
	}
	if e.Accounting.Incomplete || len(e.Warnings) != 0 {
		t.Errorf("unexpected incomplete/warnings: %+v %v", e.Accounting, e.Warnings)
	}

	// SP-LIME's importance is √(Σ_i |W_ic|) = √(n · mean |W_ic|) for the
	// same weights.
	cfg.SPLIME = true
	sp, err := cfg.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sp.Cells {
		if want := math.Sqrt(explained * e.Cells[k]); math.Abs(v-want) > 1e-12*want {
			t.Errorf("SP-LIME cell %d = %v, want √(n·mean) = %v", k, v, want)
		}
	}
}

// TestLIMEClassification checks that a classifier is explained through
// P(class 1). sigmoid(s) = 1/2 + s/4 − s³/48 + O(s⁵); here s = a·x has
// SD τ ≈ 0.11 under LIME's sampling, so p is linear in z up to a cubic term
// that changes the best linear slope by a relative ≈ 12·τ²/48 = τ²/4 ≈
// 0.3%. The surrogate weights are therefore a_c·σ_c/4 up to that and the
// ridge shrinkage (≤ 1%, see TestLIMELinear): the test allows 2% of the
// largest weight.
func TestLIMEClassification(t *testing.T) {
	const (
		d, l, m = 1, 4, 300
		relTol  = 0.02
	)
	a := []float64{0.1, 0, -0.05, 0.02}
	sd := []float64{1, 1, 1, 1}
	x := gaussian(m, d, l, nil, sd, 3)
	prob := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			var s float64
			for c, v := range x.Instance(i) {
				s += a[c] * v
			}
			dst[i] = 1 / (1 + math.Exp(-s))
		}
		return nil
	})
	y := make([]float64, m)
	for i := range y {
		y[i] = float64(i % 2)
	}
	data := &tempora.Dataset{X: x, Y: y, Task: tempora.Classification}
	e, err := LIME{Instances: 10, Seed: 1}.Explain(context.Background(), prob, data)
	if err != nil {
		t.Fatal(err)
	}
	for c, ac := range a {
		_, v := columnMoments(x, c, m)
		want := math.Abs(ac) * math.Sqrt(v) / 4
		if got := e.Cells[c]; math.Abs(got-want) > relTol*0.1/4 {
			t.Errorf("cell %d: %.5f, want |a|·σ/4 = %.5f", c, got, want)
		}
	}
}
