package metrics

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
)

// TestAreasTable checks AUROC and AUPRC against values computed by hand.
// Each case shows the computation; the values are also what scikit-learn's
// roc_auc_score and average_precision_score return for the same inputs.
func TestAreasTable(t *testing.T) {
	T, F := true, false
	for _, tc := range []struct {
		name     string
		truth    []bool
		scores   []float64
		roc, apr float64
	}{
		// scikit-learn's documented example: y_true = [0, 0, 1, 1],
		// y_scores = [0.1, 0.4, 0.35, 0.8]; roc_auc_score = 0.75 and
		// average_precision_score = 0.8333….
		// ROC: positive pairs (0.35 > 0.1), (0.8 > 0.1), (0.8 > 0.4),
		// (0.35 < 0.4): 3 of 4. AP: thresholds 0.8 (R ½, P 1), 0.4 (no
		// new true), 0.35 (R 1, P ⅔), so ½·1 + ½·⅔ = 5/6.
		{"sklearn docs", []bool{F, F, T, T}, []float64{0.1, 0.4, 0.35, 0.8}, 0.75, 5.0 / 6},
		// Ties: positives at 0.5 and 0.3, negatives at 0.5, 0.3, 0.1.
		// Pairs: 0.5 vs (0.5, 0.3, 0.1) = ½+1+1; 0.3 vs (0.5, 0.3, 0.1) =
		// 0+½+1; total 4 of 6. AP: threshold 0.5 selects one true and one
		// false (R ½, P ½), threshold 0.3 two of each (R 1, P ½): ½·½ +
		// ½·½ = ½. (scikit-learn: 0.6667 and 0.5.)
		{"ties", []bool{T, F, T, F, F}, []float64{0.5, 0.5, 0.3, 0.3, 0.1}, 4.0 / 6, 0.5},
		// A perfect ranking.
		{"perfect", []bool{T, T, F, F, F}, []float64{5, 4, 3, 2, 1}, 1, 1},
		// The reversed ranking: ROC 0; AP with the true items last, at
		// ranks 4 and 5: ½·¼ + ½·⅖ = 0.325.
		{"reversed", []bool{F, F, F, T, T}, []float64{5, 4, 3, 2, 1}, 0, 0.5*0.25 + 0.5*0.4},
		// Constant scores: one threshold selecting everything, so ROC ½
		// and AP the prevalence 2/5.
		{"constant", []bool{T, F, T, F, F}, []float64{7, 7, 7, 7, 7}, 0.5, 0.4},
		// Infinite scores rank as usual: +Inf first, −Inf last.
		{"infinite", []bool{T, F, F}, []float64{math.Inf(1), 0, math.Inf(-1)}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			roc, err := AUROC(tc.truth, tc.scores)
			if err != nil {
				t.Fatal(err)
			}
			apr, err := AUPRC(tc.truth, tc.scores)
			if err != nil {
				t.Fatal(err)
			}
			// Sums of a handful of exact fractions: 1e-12 is far above
			// rounding and far below any real difference.
			if math.Abs(roc-tc.roc) > 1e-12 {
				t.Errorf("AUROC %v, want %v", roc, tc.roc)
			}
			if math.Abs(apr-tc.apr) > 1e-12 {
				t.Errorf("AUPRC %v, want %v", apr, tc.apr)
			}
		})
	}
}

// TestAreasErrors checks the errors for bad input and one-class truth.
func TestAreasErrors(t *testing.T) {
	for _, f := range []struct {
		name string
		fn   func([]bool, []float64) (float64, error)
	}{{"AUROC", AUROC}, {"AUPRC", AUPRC}} {
		if _, err := f.fn([]bool{true, false}, []float64{1}); err == nil || !strings.Contains(err.Error(), "2 truth values for 1 scores") {
			t.Errorf("%s: length mismatch gave %v", f.name, err)
		}
		if _, err := f.fn([]bool{true, false}, []float64{1, math.NaN()}); err == nil || !strings.Contains(err.Error(), "score 1 is NaN") {
			t.Errorf("%s: NaN gave %v", f.name, err)
		}
		for _, truth := range [][]bool{{true, true}, {false, false}, {}} {
			if _, err := f.fn(truth, make([]float64, len(truth))); !errors.Is(err, ErrOneClass) {
				t.Errorf("%s: truth %v gave %v, want ErrOneClass", f.name, truth, err)
			}
		}
	}
}

// bruteAUROC is the Mann–Whitney statistic by definition: the fraction of
// (true, false) pairs ranked correctly, ties counting one half.
func bruteAUROC(truth []bool, s []float64) float64 {
	var wins, pairs float64
	for i := range s {
		for k := range s {
			if !truth[i] || truth[k] {
				continue
			}
			pairs++
			switch {
			case s[i] > s[k]:
				wins++
			case s[i] == s[k]:
				wins += 0.5
			}
		}
	}
	return wins / pairs
}

// bruteAUPRC is the average precision by definition: for each distinct
// score v, from the largest down, the recall gained by selecting every
// score ≥ v times the precision of that selection.
func bruteAUPRC(truth []bool, s []float64) float64 {
	var pos float64
	for _, t := range truth {
		if t {
			pos++
		}
	}
	var ap, prevR float64
	done := map[float64]bool{}
	for range s {
		// The largest score not yet used as a threshold.
		v := math.Inf(-1)
		found := false
		for _, x := range s {
			if !done[x] && (!found || x > v) {
				v, found = x, true
			}
		}
		if !found {
			break
		}
		done[v] = true
		var tp, sel float64
		for i, x := range s {
			if x >= v {
				sel++
				if truth[i] {
					tp++
				}
			}
		}
		ap += (tp/pos - prevR) * tp / sel
		prevR = tp / pos
	}
	return ap
}

// TestAreasBruteForce compares AUROC and AUPRC with their definitions on
// random inputs with many ties (integer scores in 0..4).
func TestAreasBruteForce(t *testing.T) {
	rng := tempora.NewRand(3, "auc-brute")
	for rep := range 300 {
		n := 2 + rng.IntN(30)
		truth := make([]bool, n)
		s := make([]float64, n)
		for i := range n {
			truth[i] = rng.Float64() < 0.3
			s[i] = float64(rng.IntN(5))
		}
		truth[0], truth[1] = true, false
		roc, err := AUROC(truth, s)
		if err != nil {
			t.Fatal(err)
		}
		apr, err := AUPRC(truth, s)
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteAUROC(truth, s); math.Abs(roc-want) > 1e-12 {
			t.Fatalf("rep %d: AUROC %v, brute force %v (truth %v, scores %v)", rep, roc, want, truth, s)
		}
		if want := bruteAUPRC(truth, s); math.Abs(apr-want) > 1e-12 {
			t.Fatalf("rep %d: AUPRC %v, brute force %v (truth %v, scores %v)", rep, apr, want, truth, s)
		}
	}
}

// TestAreasRandomScores checks the areas of random rankings statistically.
//
// With continuous random scores every ranking is equally likely. AUROC is
// then the Mann–Whitney statistic under the null: mean ½, variance
// (P+N+1)/(12·P·N) for P true and N false items. For AP, a true item at
// uniform rank r has precision (1 + #true items ranked above it)/r, and the
// other P−1 true items occupy uniform ranks among the other n−1 = P+N−1, so
//
//	E[AP] = H_n/n + (P−1)/(n−1)·(1 − H_n/n),
//
// H_n the n-th harmonic number: the prevalence (P−1)/(n−1) ≈ P/n plus a
// small-sample excess from the first ranks. With n = 200 and P = 20,
// E[AP] ≈ 0.1223 against a prevalence of 0.1. Over R = 2000 replicates the
// mean's standard error is SD/√R, estimated from the replicates; the test
// allows 4 standard errors (a false failure about once in 16,000 runs, and
// fixed seeds make the run deterministic anyway).
func TestAreasRandomScores(t *testing.T) {
	const (
		n, pos, reps = 200, 20, 2000
	)
	rng := tempora.NewRand(11, "auc-random")
	truth := make([]bool, n)
	for i := range pos {
		truth[i] = true
	}
	s := make([]float64, n)
	var sumR, sumR2, sumA, sumA2 float64
	for range reps {
		for i := range s {
			s[i] = rng.Float64()
		}
		roc, err := AUROC(truth, s)
		if err != nil {
			t.Fatal(err)
		}
		apr, err := AUPRC(truth, s)
		if err != nil {
			t.Fatal(err)
		}
		sumR += roc
		sumR2 += roc * roc
		sumA += apr
		sumA2 += apr * apr
	}
	var h float64
	for k := 1; k <= n; k++ {
		h += 1 / float64(k)
	}
	wantAP := h/n + float64(pos-1)/float64(n-1)*(1-h/n)
	check := func(name string, sum, sum2, want float64) {
		mean := sum / reps
		sd := math.Sqrt((sum2/reps - mean*mean) * reps / (reps - 1))
		if se := sd / math.Sqrt(reps); math.Abs(mean-want) > 4*se {
			t.Errorf("%s of random scores: mean %.5f over %d replicates, want %.5f ± %.5f (4 SE)", name, mean, reps, want, 4*se)
		}
	}
	check("AUROC", sumR, sumR2, 0.5)
	check("AUPRC", sumA, sumA2, wantAP)
	// The null variance of AUROC pins down the spread as well: the sample
	// variance over 2000 replicates has a relative SE of about √(2/R) ≈
	// 3%, so 15% is a wide margin.
	meanR := sumR / reps
	varR := sumR2/reps - meanR*meanR
	if want := float64(n+1) / (12 * pos * (n - pos)); math.Abs(varR-want) > 0.15*want {
		t.Errorf("AUROC variance %.6f, want (P+N+1)/(12PN) = %.6f", varR, want)
	}
}

// TestAreaMetrics checks the record metrics of a cell-score matrix.
func TestAreaMetrics(t *testing.T) {
	const d, l = 3, 4
	tr := &record.Truth{
		Relevant: []bool{true, false, true},
		Windows:  []tempora.Window{{Start: 1, End: 2}, {}, {Start: 3, End: 3}},
	}
	// True cells (0,1), (0,2), (2,3). Scores: the true cells 0.9, −0.8
	// (magnitude counts) and 0.5; false cells: (1,0) 0.6 and 1e-12 (below
	// NearZero, so 0) elsewhere.
	cells := make([]float64, d*l)
	for k := range cells {
		cells[k] = 1e-12
	}
	cells[0*l+1], cells[0*l+2], cells[2*l+3], cells[1*l+0] = 0.9, -0.8, 0.5, 0.6
	ms, err := AreaMetrics(tr, cells, d, l)
	if err != nil {
		t.Fatal(err)
	}
	// Features: scores 0.85, 0.6, 0.5 (mean non-zero |cell|) against
	// T, F, T: pairs (0.85 > 0.6), (0.5 < 0.6): ROC ½. AP: thresholds
	// 0.85 (R ½, P 1), 0.6, 0.5 (R 1, P ⅔): 5/6.
	// Cells: 3 true, 9 false. The true cells 0.9 and 0.8 beat every false
	// cell (9 + 9 pairs); 0.5 beats the 8 zeros and loses to 0.6: 26/27.
	// AP: 0.9 (R ⅓, P 1), 0.8 (R ⅔, P 1), 0.6, 0.5 (R 1, P ¾):
	// ⅓ + ⅓ + ⅓·¾ = 11/12.
	want := []record.Metric{
		{Name: "feature-auroc", Value: 0.5}, {Name: "feature-auprc", Value: 5.0 / 6},
		{Name: "timestep-auroc", Value: 26.0 / 27}, {Name: "timestep-auprc", Value: 11.0 / 12},
	}
	if len(ms) != len(want) {
		t.Fatalf("metrics %v, want %v", ms, want)
	}
	for i, m := range ms {
		if m.Name != want[i].Name || math.Abs(m.Value-want[i].Value) > 1e-12 {
			t.Errorf("metric %d = %v, want %v", i, m, want[i])
		}
	}

	// Every feature relevant: the feature areas are undefined and left
	// out, the cell areas remain.
	all := &record.Truth{Relevant: []bool{true, true, true}, Windows: []tempora.Window{{Start: 0, End: 0}, {Start: 0, End: 0}, {Start: 0, End: 0}}}
	ms, err = AreaMetrics(all, cells, d, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name != "timestep-auroc" || ms[1].Name != "timestep-auprc" {
		t.Errorf("with every feature relevant got %v, want the timestep areas only", ms)
	}
	if _, err := AreaMetrics(tr, cells[:5], d, l); err == nil || !strings.Contains(err.Error(), "5 scores for 3 features × 4 timesteps") {
		t.Errorf("short cells gave %v", err)
	}
	if _, err := AreaMetrics(nil, cells, d, l); err == nil {
		t.Error("nil truth gave no error")
	}
}

// TestInstanceMetrics checks the per-instance averages on three instances
// of 2 features × 3 timesteps.
func TestInstanceMetrics(t *testing.T) {
	const n, d, l = 3, 2, 3
	T, F := true, false
	truth := []bool{
		// Instance 0: cells (0,2) and (1,0) true.
		F, F, T, T, F, F,
		// Instance 1: cells (0,0), (0,1) true; feature 1 has none.
		T, T, F, F, F, F,
		// Instance 2: no true cell (counts at neither level).
		F, F, F, F, F, F,
	}
	attr := []float64{
		// Instance 0: true cells 0.5 and −0.9; false cells 0.1, 0.7, 0, 0.
		// Cells: (0.9 beats all 4 false) + (0.5 beats 0.1, 0, 0, loses to
		// 0.7) = 7 of 8. AP: 0.9 (R ½, P 1), 0.7, 0.5 (R 1, P ⅔): 5/6.
		// Features: both true, so the feature level is undefined.
		0.1, 0, 0.5, -0.9, 0.7, 0,
		// Instance 1: true 0.2 and 0.3; false 0.4, 0.3, 0, 0.
		// Cells: 0.3 beats 0.3? tie ½, beats 0, 0 → 2.5 plus loses to
		// 0.4; 0.2 beats 0, 0 → 2: 4.5 of 8. AP: 0.4 (R 0), 0.3 (tp 1,
		// sel 3: R ½, P ⅓), 0.2 (tp 2, sel 4: R 1, P ½): ⅙ + ¼ = 5/12.
		// Features: 0 true, scores 0.25 (mean of 0.2, 0.3) vs 0.35
		// (mean of 0.4, 0.3): ROC 0, AP ½ (the true one second).
		0.2, 0.3, 0, 0.4, 0.3, 0,
		// Instance 2: anything.
		1, 2, 3, 4, 5, 6,
	}
	a, err := InstanceMetrics(truth, attr, n, d, l)
	if err != nil {
		t.Fatal(err)
	}
	want := InstanceAreas{
		CellAUROC: (7.0/8 + 4.5/8) / 2, CellAUPRC: (5.0/6 + 5.0/12) / 2, Cells: 2,
		FeatureAUROC: 0, FeatureAUPRC: 0.5, Features: 1,
	}
	if a.Cells != want.Cells || a.Features != want.Features ||
		math.Abs(a.CellAUROC-want.CellAUROC) > 1e-12 || math.Abs(a.CellAUPRC-want.CellAUPRC) > 1e-12 ||
		math.Abs(a.FeatureAUROC-want.FeatureAUROC) > 1e-12 || math.Abs(a.FeatureAUPRC-want.FeatureAUPRC) > 1e-12 {
		t.Errorf("got %+v, want %+v", a, want)
	}
	ms := a.Metrics()
	names := []string{"instance-timestep-auroc", "instance-timestep-auprc", "instance-feature-auroc", "instance-feature-auprc"}
	if len(ms) != len(names) {
		t.Fatalf("metrics %v", ms)
	}
	for i, m := range ms {
		if m.Name != names[i] {
			t.Errorf("metric %d named %q, want %q", i, m.Name, names[i])
		}
	}
	if got := (InstanceAreas{Cells: 1}).Metrics(); len(got) != 2 {
		t.Errorf("with no feature-level instance got %v, want the timestep pair only", got)
	}

	// Bad input.
	if _, err := InstanceMetrics(truth[:5], attr, n, d, l); err == nil || !strings.Contains(err.Error(), "5 truth values and 18 attributions") {
		t.Errorf("short truth gave %v", err)
	}
	bad := append([]float64(nil), attr...)
	bad[2*d*l+4] = math.NaN()
	if _, err := InstanceMetrics(truth, bad, n, d, l); err == nil || !strings.Contains(err.Error(), "instance 2, feature 1, timestep 1 is NaN") {
		t.Errorf("NaN attribution gave %v", err)
	}
	if _, err := InstanceMetrics(nil, nil, 0, 0, 3); err == nil {
		t.Error("zero features gave no error")
	}
}
