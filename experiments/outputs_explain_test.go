package experiments

import (
	"context"
	"fmt"
	"testing"

	"github.com/tempora-dev/tempora/explain"
)

// Weaknesses of TIME with several outputs that the worlds of synth with
// outputs reveal (issue 30). These tests fail until explain changes; the
// reports of the o-worlds branch describe them for the lead, who owns
// explain.

// TestTIMEOutputsSharedKey explains model 13 of the outputs suite's
// setting world=classes/noise-weights=0.05 as Run does (TIME's defaults:
// up to 3 windows). TIME fails: "tests 3 and 4 share the key
// time/feature/0/window-ordering/0-4 but not their block and perturbation
// (or one enumerates its permutations and the other samples them)". Two
// units of feature 0 (two classes, or a class and the whole model) have
// the same significant window [0, 4] but different numbers m of
// significant windows, so testWindowOrderings gives them the same key
// (windowKey with the window's coordinates) with different caps:
// orderingDraws(familyDraws(m), m, 5) enumerates the 5! − 1 = 119
// permutations of the unit with m = 3 (exactWidth(3) = 5) and samples for
// the unit with m ≤ 2 (exactWidth = 4). With windows=1 or 2 the same
// problem is explained. Either the key should hold what makes the draws
// differ (the family size, or exact against sampled), or units sharing a
// window should share one cap.
func TestTIMEOutputsSharedKey(t *testing.T) {
	items, err := Items(Options{Suite: "outputs", Models: 14, Methods: []string{"TIME"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		it := &items[i]
		if it.Setting.Key() != "world=classes/noise-weights=0.05" || it.Model != 13 {
			continue
		}
		prob, err := synthesise(context.Background(), it.Setting.Problem, it.ProblemSeed)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, _, err := explainOrRefuse(context.Background(), it, prob, 0); err != nil {
			t.Errorf("TIME on the suite's problem: %v", err)
		}
		return
	}
	t.Fatal("no such item")
}

// TestTIMEOutputsCausalVerdict measures the causal check's verdict on
// the steps world of the null calibration (outputsNullWorlds: every
// output's black box reads the future through its noise weights, its
// targets never): the explanation says that some output reads the future
// (OutputResults.ReadsFuture) in 63 of 300 trials (21%), while each
// feature's causal family keeps its FDR at about α (TestOutputsNull:
// 0.11 over 605 families). The verdict ORs one BH family per important
// feature, each at α, so under the null it errs with probability up to
// 1 − (1 − α)^f for f important features (0.19 for the 2 relevant ones
// here). A model-level claim needs a model-level family: one BH family
// over every (feature, output) unit of the causal check (or Simes across
// the per-feature families) would keep the verdict's error at α. The test
// asserts that the rate of trials with a false verdict is at most α + 3
// SE (fdrBound).
func TestTIMEOutputsCausalVerdict(t *testing.T) {
	const alpha = explain.DefaultAlpha
	w := outputsNullWorlds[2]
	if w.name != "steps" {
		t.Fatal("outputsNullWorlds[2] is not the steps world")
	}
	a := runNull(t, w.name, w.cfg, nullTrials(t, 300))
	rate, bound := float64(a.verdicts)/float64(a.trials), fdrBound(alpha, a.trials)
	t.Logf("the causal check says some output reads the future in %d of %d trials (%.3f; bound %.3f); none does", a.verdicts, a.trials, rate, bound)
	if a.futures > 0 {
		t.Fatalf("the truth says an output reads the future in %d trials", a.futures)
	}
	if rate > bound {
		t.Errorf("false verdicts 'reads the future' in %.3f of the trials, more than α + 3 SE = %.3f", rate, bound)
	}
	if a.trials == 300 && !testing.Short() {
		docStates(t, fmt.Sprintf("said that some output reads the future in %d of %d trials", a.verdicts, a.trials))
	}
}
