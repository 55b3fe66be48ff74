package metrics

import (
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
)

// outputsCase returns an explanation of 3 features × 6 timesteps with 2
// steps outputs (anchors 2 and 5) and the truth it is scored against:
//
//	output 0 reads feature 0 over [1, 3] (lags [−1, 1]: it reads the
//	future) and feature 1 over [0, 2];
//	output 1 reads feature 0 over [3, 5].
//
// The explanation finds on output 0 features 0 (window [1, 3], exact,
// reads the future) and 2 (false), on output 1 feature 0 with window
// [4, 5] (not exact); it misses output 0's feature 1.
func outputsCase() (*record.Truth, *tempora.Explanation) {
	const d, l = 3, 6
	w := func(s, e int) tempora.Window { return tempora.Window{Start: s, End: e} }
	tr := &record.Truth{
		Relevant: []bool{true, true, false}, Windows: []tempora.Window{w(1, 5), w(0, 2), w(0, 5)},
		EffectSize: make([]float64, d), OrderingImportant: make([]bool, d), WindowOrderingImportant: make([]bool, d),
		Outputs: []record.OutputTruth{
			{Relevant: []bool{true, true, false}, Windows: []tempora.Window{w(1, 3), w(0, 2), {}}, Lags: []tempora.Window{w(-1, 1), w(0, 2), {}}},
			{Relevant: []bool{true, false, false}, Windows: []tempora.Window{w(3, 5), {}, {}}, Lags: []tempora.Window{w(0, 2), {}, {}}},
		},
	}
	data := &tempora.Dataset{X: tempora.NewTensor(1, d, l), Outputs: &tempora.Outputs{Kind: tempora.Steps, K: 2, Anchors: []int{2, 5}}}
	e := tempora.NewExplanation("TIME", data)
	found := func(k, j int, win tempora.Window, score float64) {
		f := &e.Outputs.Outputs[k].Features[j]
		lag, _ := data.Outputs.Lag(win, k, l)
		f.Important = true
		f.Windows = []tempora.WindowResult{{Window: win, Significant: true, Lag: &lag}}
		for t := win.Start; t <= win.End; t++ {
			e.Outputs.Outputs[k].Cells[j*l+t] = score
		}
	}
	found(0, 0, w(1, 3), 2)
	found(0, 2, w(0, 0), 0.5)
	found(1, 0, w(4, 5), 1)
	e.Outputs.Outputs[0].Features[0].ReadsFuture = true
	e.Outputs.ReadsFuture = true
	e.Outputs.CausalChecked = true
	return tr, e
}

// TestOutputMetrics checks OutputMetrics on outputsCase against values
// worked out by hand.
func TestOutputMetrics(t *testing.T) {
	tr, e := outputsCase()
	ms, err := OutputMetrics(tr, e)
	if err != nil {
		t.Fatal(err)
	}
	// Output 0: cells of feature 0 at 1..3 (score 2) and of feature 2 at
	// 0 (0.5) against the true cells 1..3 of feature 0 and 0..2 of
	// feature 1 (6 true of 18): AUROC: the 3 true cells scoring 2 beat
	// all 12 false cells; the false cell scoring 0.5 beats the other 3
	// true cells; the other 11 false tie with those 3 (½ each):
	// (3·12 + 3·11·½)/(6·12) = 52.5/72. AP: 3 true at precision 1, the
	// next threshold adds 1 false, the last the other 3 true at 6/18:
	// ½·1 + ½·(6/18) = 2/3. Features (scores 2, 0, 0.5; truth t, t, f):
	// AUROC ½ (feature 0 beats 2, feature 1 loses to 2), AP ½·1 + ½·2/3.
	// Output 1: cells of feature 0 at 4..5 (1) against 3..5: AUROC (2·15 +
	// 1·15·½)/(3·15) = 37.5/45, AP 2/3·1 + 1/3·3/18; features: feature 0
	// alone scores, and is the only true one: 1, 1.
	want := map[string]float64{
		OutputFeaturePower: 2.0 / 3, OutputFeatureFDR: 1.0 / 3,
		OutputExactWindow: 1.0 / 3, OutputExactLag: 1.0 / 3,
		OutputFeatureAUROC: (0.5 + 1) / 2, OutputFeatureAUPRC: (0.5 + 1.0/3 + 1) / 2,
		OutputCellAUROC: (52.5/72 + 37.5/45) / 2, OutputCellAUPRC: (2.0/3 + 2.0/3 + 1.0/18) / 2,
		FuturePower: 1, FutureFDR: 0, CausalAccuracy: 1,
	}
	order := []string{OutputFeaturePower, OutputFeatureFDR, OutputExactWindow, OutputExactLag, OutputFeatureAUROC, OutputFeatureAUPRC,
		OutputCellAUROC, OutputCellAUPRC, FuturePower, FutureFDR, CausalAccuracy}
	if len(ms) != len(order) {
		t.Fatalf("%d metrics %v, want %d", len(ms), ms, len(order))
	}
	const tol = 1e-12
	for i, m := range ms {
		if m.Name != order[i] || math.Abs(m.Value-want[m.Name]) > tol {
			t.Errorf("metric %d: %s = %v, want %s = %v", i, m.Name, m.Value, order[i], want[order[i]])
		}
	}
	// The verdict wrong: the explanation says no output reads the
	// future.
	e.Outputs.ReadsFuture = false
	e.Outputs.Outputs[0].Features[0].ReadsFuture = false
	ms, _ = OutputMetrics(tr, e)
	got := map[string]float64{}
	for _, m := range ms {
		got[m.Name] = m.Value
	}
	if got[CausalAccuracy] != 0 || got[FuturePower] != 0 || got[FutureFDR] != 0 {
		t.Errorf("no future found: %v", got)
	}
}

// TestOutputMetricsClasses checks that outputs without anchors have no
// lag and no causal metrics.
func TestOutputMetricsClasses(t *testing.T) {
	tr, e := outputsCase()
	for k := range tr.Outputs {
		tr.Outputs[k].Lags = nil
	}
	e.Outputs.Anchors = nil
	ms, err := OutputMetrics(tr, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == OutputExactLag || strings.Contains(m.Name, "future") || m.Name == CausalAccuracy {
			t.Errorf("metric %s for outputs without anchors", m.Name)
		}
	}
}

// TestOutputMetricsErrors checks that a truth that does not fit the
// explanation is refused.
func TestOutputMetricsErrors(t *testing.T) {
	for _, tc := range []struct {
		edit func(tr *record.Truth, e *tempora.Explanation)
		want string
	}{
		{func(tr *record.Truth, e *tempora.Explanation) { tr.Outputs = nil }, "need an explanation and a truth with outputs"},
		{func(tr *record.Truth, e *tempora.Explanation) { e.Outputs = nil }, "need an explanation and a truth with outputs"},
		{func(tr *record.Truth, e *tempora.Explanation) { tr.Outputs = tr.Outputs[:1] }, "truth has 1 outputs, explanation 2"},
		{func(tr *record.Truth, e *tempora.Explanation) { tr.Outputs[1].Relevant = tr.Outputs[1].Relevant[:2] }, "output 1: truth of 2 features"},
		{func(tr *record.Truth, e *tempora.Explanation) { tr.Outputs[0].Lags = nil }, "true lags"},
		{func(tr *record.Truth, e *tempora.Explanation) { tr.Outputs[0].Windows[1].End = 6 }, "does not fit 6 timesteps"},
	} {
		tr, e := outputsCase()
		tc.edit(tr, e)
		if _, err := OutputMetrics(tr, e); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}
