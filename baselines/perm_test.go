package baselines

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// TestPERMLinear checks PERM's effect sizes and p-values on a linear
// regression model f(x) = Σ a_c x_c with y = f(x) and quadratic loss.
//
// Where the expectation comes from: the baseline loss is 0, and permuting
// column c by π gives the loss mean_i a_c²(x_π(i)c − x_ic)². For a uniform
// π, π(i) is uniform over all instances, so its expectation is
// a_c²·mean_{i,k}(x_kc − x_ic)² = 2a_c²·Var(x_c) (population variance of
// the data), and ≈ 2a_c²σ_c² (Breiman's/Fisher's model reliance for an
// additive model).
//
// Monte Carlo SE: one draw's mean D = (1/M)Σ_i T_i with T_i = a²(x_π(i) −
// x_i)². For Gaussian x, Var(T) = 8a⁴σ⁴ and neighbouring terms of a cycle of
// π share an instance, Cov = 2a⁴σ⁴ (Cov(U², V²) = 2Cov(U, V)² with
// Cov(U, V) = −σ²), so Var(D) ≈ 12a⁴σ⁴/M and the mean of P draws has
// SE = a²σ²·√(12/(M·P)).
func TestPERMLinear(t *testing.T) {
	const (
		d, l, m = 2, 3, 1000
		z       = 4.0 // tolerance in standard errors
	)
	a := []float64{2, -1, 0.5, 0, 1.5, 0}
	sd := []float64{1, 2, 1, 1, 0.5, 3}
	data, f := linearProblem(t, m, d, l, a, nil, sd, 6)

	r, err := PERM{Seed: 1, Tests: explain.FixedTests}.Analyze(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Baseline != 0 {
		t.Errorf("baseline loss %v, want 0 (y = f(x))", r.Baseline)
	}
	const perms = DefaultPERMPermutations
	for c := range d * l {
		_, v := columnMoments(data.X, c, m)
		exact := 2 * a[c] * a[c] * v
		se := a[c] * a[c] * sd[c] * sd[c] * math.Sqrt(12.0/(m*perms))
		got := r.Scores[c]
		if math.Abs(got-exact) > z*se {
			t.Errorf("column %d: score %.4f, want 2a²·Var = %.4f ± %.4f", c, got, exact, z*se)
		}
		// Against the population value 2a²σ², add the sample variance's
		// error, sd 2a²σ²·√(2/M).
		pop := 2 * a[c] * a[c] * sd[c] * sd[c]
		if tol := z*se + z*pop*math.Sqrt(2.0/m); math.Abs(got-pop) > tol {
			t.Errorf("column %d: score %.4f, want 2a²σ² = %.4f ± %.4f", c, got, pop, tol)
		}
		// A used column's every draw loses more than the baseline: the
		// smallest p-value 1/(P+1). An unused column's draws change
		// nothing: p = 1.
		wantP := 1.0 / (perms + 1)
		if a[c] == 0 {
			wantP = 1
		}
		if r.PValues[c] != wantP {
			t.Errorf("column %d: p = %v, want %v", c, r.PValues[c], wantP)
		}
	}
	e := r.Explanation(false)
	if e.Method != "PERM" || !sameFloats(e.Cells, r.Scores) {
		t.Errorf("PERM explanation %q cells %v, want the scores %v", e.Method, e.Cells, r.Scores)
	}
	// One baseline call, then one call of M instances per draw.
	if want := int64(1 + d*l*perms); e.Accounting.ModelCalls != want || e.Accounting.InstanceEvals != want*m {
		t.Errorf("accounting %+v, want %d calls of %d instances", e.Accounting, want, m)
	}
	if c := e.Accounting.Draws; len(c) != 1 || c[0] != (tempora.DrawCount{Test: "cell", Tests: d * l, Draws: d * l * perms, MaxDraws: d * l * perms}) {
		t.Errorf("draw counts %+v", c)
	}

	// Sequential (the default): 6 cells cap each test at
	// MinPermutations(6, 0.1) = 59 draws and stop after h = 6 hits. A used
	// column's draws are all worse: p = 1/60 after 59 draws, the same
	// score as the fixed run up to its 50 draws' noise. An unused column's
	// draws are all hits: p = 1 after 6 draws.
	s, err := PERM{Seed: 1}.Analyze(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	const cap = 59
	var draws int64
	for c := range d * l {
		wantP, wantDraws := 1.0/(cap+1), cap
		if a[c] == 0 {
			wantP, wantDraws = 1, 6
		}
		if s.PValues[c] != wantP || s.Draws[c] != wantDraws {
			t.Errorf("sequential column %d: p = %v after %d draws, want %v after %d", c, s.PValues[c], s.Draws[c], wantP, wantDraws)
		}
		se := a[c] * a[c] * sd[c] * sd[c] * math.Sqrt(12.0/(m*float64(wantDraws)))
		if math.Abs(s.Scores[c]-r.Scores[c]) > z*(se+a[c]*a[c]*sd[c]*sd[c]*math.Sqrt(12.0/(m*perms))) {
			t.Errorf("sequential column %d: score %.4f, fixed %.4f", c, s.Scores[c], r.Scores[c])
		}
		draws += int64(wantDraws)
	}
	if c := s.Accounting.Draws[0]; s.Permutations != cap || s.Tests != explain.BesagCliffordTests || c.Draws != draws || c.MaxDraws != d*l*cap || s.Accounting.ModelCalls != 1+draws {
		t.Errorf("sequential: cap %d, tests %v, draws %+v, %d model calls; want cap %d and %d draws", s.Permutations, s.Tests, c, s.Accounting.ModelCalls, cap, draws)
	}
}

// TestPERMNullUniform checks PERM's p-values under the null. The model
// f(x) = 0.3·Σ_c x_c uses every cell, but the targets are independent noise
// and the columns are independent, so the observed data is exchangeable
// with its column-permuted copies: each p-value is uniform on
// {1, …, P+1}/(P+1). Over 200 cells the mean p-value should be
// (P+2)/(2(P+1)) ≈ 0.510 with SD √((P+1)²−1)/(√12·(P+1))/√200 ≈ 0.0204,
// and the count of p ≤ 10/51 binomial(200, 10/51) (mean 39.2, SD 5.6); the
// cells share the targets, so they are only nearly independent, and the
// test allows 4 SDs. BH at 0.1 needs 40 cells at the minimum p 1/51, so
// under the null PERM-f selects nothing.
func TestPERMNullUniform(t *testing.T) {
	const (
		d, l, m = 10, 20, 200
		perms   = DefaultPERMPermutations
	)
	p := d * l
	a := make([]float64, p)
	sd := make([]float64, p)
	for c := range a {
		a[c], sd[c] = 0.3, 1
	}
	x := gaussian(m, d, l, nil, sd, 8)
	y := make([]float64, m)
	rng := tempora.NewRand(8, "targets")
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	data := &tempora.Dataset{X: x, Y: y}
	r, err := PERM{Seed: 2, Tests: explain.FixedTests}.Analyze(context.Background(), linear{a}, data)
	if err != nil {
		t.Fatal(err)
	}
	var mean float64
	low := 0
	for c, pv := range r.PValues {
		k := pv * (perms + 1)
		if math.Abs(k-math.Round(k)) > 1e-9 || k < 1 || k > perms+1 {
			t.Fatalf("cell %d: p = %v is not k/%d", c, pv, perms+1)
		}
		mean += pv / float64(p)
		if math.Round(k) <= 10 {
			low++
		}
	}
	wantMean := float64(perms+2) / (2 * (perms + 1))
	sdMean := math.Sqrt(float64((perms+1)*(perms+1)-1)/12) / (perms + 1) / math.Sqrt(float64(p))
	if math.Abs(mean-wantMean) > 4*sdMean {
		t.Errorf("mean p-value %.4f, want %.4f ± %.4f", mean, wantMean, 4*sdMean)
	}
	q := 10.0 / (perms + 1)
	wantLow := q * float64(p)
	sdLow := math.Sqrt(float64(p) * q * (1 - q))
	if math.Abs(float64(low)-wantLow) > 4*sdLow {
		t.Errorf("%d cells with p ≤ 10/51, want %.1f ± %.1f", low, wantLow, 4*sdLow)
	}
	if n := r.Count(); n != 0 {
		t.Errorf("BH selected %d null cells, want 0", n)
	}
	if pf := r.Explanation(true); len(pf.Warnings) != 1 || !strings.Contains(pf.Warnings[0], "unless at least 40 reach it") {
		t.Errorf("fixed PERM-f warnings %q, want the floor warning", pf.Warnings)
	}

	// Sequential (the default): the cap is MinPermutations(200, 0.1) =
	// 1999 and h = 10. The p-value is uniform at its atoms, so the count of
	// cells with p ≤ 0.1 is binomial(200, 0.1) (mean 20, SD 4.2; 4 SDs
	// allowed), and a null cell's test makes h(1 + ln(P/h)) ≈ 63 draws on
	// average (SD ≈ 90 per cell, so the mean of 200 has SE 6.4; 4 SE
	// allowed).
	s, err := PERM{Seed: 2}.Analyze(context.Background(), linear{a}, data)
	if err != nil {
		t.Fatal(err)
	}
	low = 0
	var draws float64
	for c, pv := range s.PValues {
		if pv <= 0.1 {
			low++
		}
		draws += float64(s.Draws[c]) / float64(p)
	}
	sdLow = math.Sqrt(float64(p) * 0.1 * 0.9)
	if math.Abs(float64(low)-0.1*float64(p)) > 4*sdLow {
		t.Errorf("sequential: %d cells with p ≤ 0.1, want %.1f ± %.1f", low, 0.1*float64(p), 4*sdLow)
	}
	if want := 10 * (1 + math.Log(1999.0/10)); math.Abs(draws-want) > 4*6.4 {
		t.Errorf("sequential: %.1f draws per cell, want %.1f ± %.1f", draws, want, 4*6.4)
	}
	if n := s.Count(); n != 0 {
		t.Errorf("sequential: BH selected %d null cells, want 0", n)
	}
	if pf := s.Explanation(true); len(pf.Warnings) != 0 {
		t.Errorf("sequential PERM-f warnings %q", pf.Warnings)
	}
	t.Logf("sequential: %d cells with p ≤ 0.1, %.1f draws per cell (fixed P = 50: 50)", low, draws)
}

// TestPERMf checks PERM-f's selection. With y = f(x), a used cell's p-value
// is 1/(P+1) and an unused cell's is 1 (see TestPERMLinear). With fixed
// P = 50, BH over m = 12 cells rejects the k cells at 1/51 exactly when
// 1/51 ≤ k·0.1/12, i.e. k ≥ 3: four strong cells are all selected and
// nothing else, while a single strong cell cannot be (the p-value floor
// 1/(P+1) of the paper's PERM-f), and the explanation warns. The
// sequential default caps the tests at MinPermutations(12, 0.1) = 119, so
// a used cell's p-value is 1/120 ≤ 0.1/12 and even a single strong cell is
// selected.
func TestPERMf(t *testing.T) {
	const d, l, m = 3, 4, 300
	sd := make([]float64, d*l)
	for c := range sd {
		sd[c] = 1
	}
	for _, tc := range []struct {
		name     string
		fixed    bool
		relevant []int
		selected bool
	}{
		{"fixed four", true, []int{0, 5, 6, 11}, true},
		{"fixed one", true, []int{7}, false},
		{"sequential four", false, []int{0, 5, 6, 11}, true},
		{"sequential one", false, []int{7}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := make([]float64, d*l)
			for _, c := range tc.relevant {
				a[c] = 1 + float64(c)/10
			}
			data, f := linearProblem(t, m, d, l, a, nil, sd, 10)
			r, err := PERM{Filter: true, Tests: permTests(tc.fixed), Seed: 4}.Analyze(context.Background(), f, data)
			if err != nil {
				t.Fatal(err)
			}
			pf := r.Explanation(true)
			if pf.Method != "PERM-f" {
				t.Errorf("method %q, want PERM-f", pf.Method)
			}
			for c := range a {
				want := a[c] != 0 && tc.selected
				if r.Significant[c] != want {
					t.Errorf("cell %d: significant %v, want %v (p = %v, adjusted %v)", c, r.Significant[c], want, r.PValues[c], r.PAdjusted[c])
				}
				wantCell := 0.0
				if want {
					wantCell = r.Scores[c]
				}
				if pf.Cells[c] != wantCell {
					t.Errorf("PERM-f cell %d = %v, want %v", c, pf.Cells[c], wantCell)
				}
			}
			// Explain with Filter gives the same explanation as the result.
			if warned := len(pf.Warnings) == 1 && strings.Contains(pf.Warnings[0], "the family of 12 cells"); warned != tc.fixed {
				t.Errorf("PERM-f warnings %q", pf.Warnings)
			}
			if len(r.Explanation(false).Warnings) != 0 {
				t.Errorf("PERM carries the warnings of the cells' significance")
			}
			e, err := PERM{Filter: true, Tests: permTests(tc.fixed), Seed: 4}.Explain(context.Background(), f, data)
			if err != nil {
				t.Fatal(err)
			}
			if !sameFloats(e.Cells, pf.Cells) || e.Method != "PERM-f" {
				t.Errorf("Explain cells %v, want %v", e.Cells, pf.Cells)
			}
		})
	}
}

// permTests returns FixedTests when fixed, else PERM's default tests.
func permTests(fixed bool) explain.Tests {
	if fixed {
		return explain.FixedTests
	}
	return ""
}
