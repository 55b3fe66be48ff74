package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/method"
)

// The permutation-test parameters of TIME, also PERM's (PERM runs TIME's
// tests on every cell).
var (
	permutations = method.Spec[int]{Name: "permutations",
		Doc: fmt.Sprintf("permutations per test: with fixed tests P, the draws of every test (0: %d); with sequential tests the nominal cap P, whose smallest p-value is 1/(P+1): at most P draws (besag-clifford), ⌊4P/3⌋ + 1 (anytime); 0: P = ⌈m/α⌉ − 1 for a family of m features, and, with besag-clifford, %d and %d times that below an important feature (its ordering and windows, its window orderings)",
			explain.DefaultPermutations, explain.PowerHits, explain.OrderingHits),
		Default: 0, Range: "[0, inf)"}
	// sequential and familyStop are the deprecated spellings of tests.
	sequential = method.Spec[bool]{Name: "sequential",
		Doc:     "deprecated spelling: false is tests=fixed",
		Default: true, Deprecated: "tests=fixed"}
	familyStop = method.Spec[bool]{Name: "family-stop",
		Doc:     "deprecated spelling: true is tests=anytime, false tests=besag-clifford",
		Default: false, Deprecated: "tests=anytime or tests=besag-clifford"}
)

// testsDoc is the help text of the tests parameter.
var testsDoc = "p-value tests: " + strings.Join(explain.TestsNames(), ", ") + " (besag-clifford: Besag and Clifford's sequential tests, each stopping at its h-th draw as bad as the baseline; anytime: each test of a family of features stops once its Benjamini–Hochberg decision is settled, fewer draws for less power; fixed: the paper's fixed-P tests)"

// timeTests is TIME's choice of tests.
var timeTests = method.Spec[string]{Name: "tests", Doc: testsDoc, Default: string(explain.BesagCliffordTests)}

// testsOf returns the tests chosen in v by the tests parameter (spec,
// whose default depends on the method) or by its deprecated spellings
// sequential=false (fixed) and, where the method has it, family-stop
// (true: anytime, false: besag-clifford); a deprecated spelling that
// contradicts a given tests is an error.
func testsOf(v method.Values, spec method.Spec[string], hasFamilyStop bool) (explain.Tests, error) {
	t := spec.Get(v)
	legacy := ""
	switch {
	case v.Given(sequential.Name) && !sequential.Get(v):
		legacy = string(explain.FixedTests)
	case hasFamilyStop && v.Given(familyStop.Name) && familyStop.Get(v):
		legacy = string(explain.AnytimeTests)
	case hasFamilyStop && v.Given(familyStop.Name):
		legacy = string(explain.BesagCliffordTests)
	}
	if legacy != "" {
		if v.Given(spec.Name) && t != legacy {
			return "", fmt.Errorf("tests=%s contradicts a deprecated spelling that means tests=%s", t, legacy)
		}
		t = legacy
	}
	return explain.ParseTests(t)
}

// TIME's own parameters.
var (
	timeAlpha = method.Spec[float64]{Name: "alpha", Doc: "FDR level α of every Benjamini–Hochberg family",
		Default: explain.DefaultAlpha, Range: "(0, 1)"}
	timeGamma = method.Spec[float64]{Name: "gamma", Doc: "window localisation γ: the window leaves out at most (1−γ)/2 of the importance at each end",
		Default: explain.DefaultGamma, Range: "(0, 1)"}
	timeHierarchy = method.Spec[string]{Name: "hierarchy", Doc: "feature-group hierarchy JSON file (empty: every feature tested alone)"}
	drawLimit     = method.Spec[int]{Name: "draw-limit",
		Doc:     "refuse a run whose worst case (every test to its cap) exceeds this many draws, before the model is called (0: no limit)",
		Default: explain.DefaultMaxDraws, Range: "[0, inf)"}
	copyMemory = method.Spec[int]{Name: "copy-memory",
		Doc:   "MiB the workers' copies of the data may use: each worker copies the whole data when all copies fit, else it predicts chunks of instances (0: the smaller of 256 MiB and a quarter of the memory limit; results are the same)",
		Range: "[0, inf)"}
	timeBatch = method.Spec[string]{Name: "batch",
		Doc: "most instances per model call: a number, or auto (time the model at a few sizes after the baseline, one pass over the data each, and take the cheapest per instance); empty: a draw's instances in one call where the copy-memory and the model allow (results are the same)"}
	timeMaxCalls = method.Spec[int]{Name: "max-calls",
		Doc:   "budget of model calls, the baseline's included: the run stops before exceeding it with the decisions settled so far, its other features marked undecided (0: none)",
		Range: "[0, inf)"}
	timeMaxTime = method.Spec[time.Duration]{Name: "max-time",
		Doc:   "wall-time budget: no model call starts after it, and the run stops with the decisions settled so far, its other features marked undecided (0: none)",
		Range: "[0, inf)"}
	timeConditional = method.Spec[bool]{Name: "conditional",
		Doc: "conditional permutation tests: does a feature carry information about the target beyond the other features (false: marginal tests, does the model's loss depend on it)"}
	timeWindowRule = method.Spec[string]{Name: "window-rule",
		Doc:     "window search rule: verified (a region belongs to the window when the size of its effect, |score|, exceeds the threshold; a region is left out only when a check finds it surely below; a feature without a significant window claims no timesteps) or paper (|score| against the threshold, one look per check; every timestep of such a feature)",
		Default: explain.Verified.String()}
	timeLengthRule = method.Spec[string]{Name: "length-rule",
		Doc:     "on data with missing values, how across-instance tests permute sequences of different lengths: strata (only among instances whose supports cover the window alike), receiver (each instance keeps its length and takes the donor's cells inside it) or donor (the donor's whole block, padding included)",
		Default: explain.Strata{}.String()}
	timeWindows = method.Spec[int]{Name: "windows",
		Doc:     "most windows per feature: the window is split at interior gaps that surely carry less than (1−γ)/2 of the importance (1: the paper's single window)",
		Default: explain.DefaultWindows, Range: "[1, inf)"}
	timeTreeFDR = method.Spec[bool]{Name: "tree-fdr",
		Doc: fmt.Sprintf("control the FDR of the whole tree of discoveries (features, windows, orderings) at alpha by testing every family at alpha/%.2f (Yekutieli's level adjustment; false: each family's FDR at alpha)", explain.TreeLevel)}
)

// timeMethod is TIME (package explain).
func timeMethod() method.Method {
	return method.Method{
		Name:   "TIME",
		Doc:    "Temporal Importance Model Explanation: permutation tests of features, windows and orderings with hierarchical FDR control",
		Params: method.Params(timeTests, permutations, timeAlpha, timeGamma, timeHierarchy, timeWindowRule, timeWindows, timeTreeFDR, timeConditional, timeLengthRule, drawLimit, copyMemory, timeBatch, timeMaxCalls, timeMaxTime, sequential, familyStop),
		New: func(c method.Config) (tempora.Explainer, error) {
			tests, err := testsOf(c.Values, timeTests, true)
			if err != nil {
				return nil, err
			}
			t := explain.TIME{
				Tests: tests, Permutations: permutations.Get(c.Values),
				Alpha: timeAlpha.Get(c.Values), Gamma: timeGamma.Get(c.Values),
				Seed: c.Seed, Workers: c.Workers, Conditional: timeConditional.Get(c.Values),
				MaxDraws:     int64(drawLimit.Get(c.Values)),
				MemoryBudget: int64(copyMemory.Get(c.Values)) << 20,
				MaxCalls:     int64(timeMaxCalls.Get(c.Values)), MaxTime: timeMaxTime.Get(c.Values),
				Estimates: c.Estimates,
			}
			if t.Batch, err = ParseBatch(timeBatch.Get(c.Values)); err != nil {
				return nil, err
			}
			if t.MaxDraws == 0 {
				t.MaxDraws = -1 // no limit
			}
			rule, err := explain.ParseWindowRule(timeWindowRule.Get(c.Values))
			if err != nil {
				return nil, err
			}
			t.WindowRule = rule
			lr, err := explain.ParseLengthRule(timeLengthRule.Get(c.Values))
			if err != nil {
				return nil, err
			}
			t.LengthRule = lr
			t.Windows = timeWindows.Get(c.Values)
			t.TreeFDR = timeTreeFDR.Get(c.Values)
			if path := timeHierarchy.Get(c.Values); path != "" {
				h, err := readHierarchy(path, c.Data)
				if err != nil {
					return nil, err
				}
				t.Hierarchy = h
			}
			return t, nil
		},
		Mode:  method.AllNonZero,
		Tests: true,
	}
}

// ParseBatch parses TIME's batch parameter: empty or 0 (none), auto
// (explain.BatchAuto) or a positive number of instances.
func ParseBatch(s string) (int, error) {
	switch s = strings.TrimSpace(s); s {
	case "", "0":
		return 0, nil
	case "auto":
		return explain.BatchAuto, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("batch %q: want auto, a number of instances per model call, or 0 (none)", s)
	}
	return n, nil
}

// TestsOf returns the tests that method m (TIME or PERM) runs with the
// parameter values v: its tests parameter, or a deprecated spelling of it.
func TestsOf(m *method.Method, v method.Values) (explain.Tests, error) {
	switch m.Name {
	case "TIME":
		return testsOf(v, timeTests, true)
	case "PERM":
		return testsOf(v, permTests, false)
	}
	return "", fmt.Errorf("builtins: %s has no tests parameter", m.Name)
}

// PaperParams returns the parameter values that configure TIME (and the
// tests of PERM) as the paper does, spelt from explain.PaperTIME: its
// tests, window rule and windows. The benchmark's paper suites set them.
func PaperParams() map[string]string {
	c := explain.PaperTIME()
	return map[string]string{
		timeTests.Name:      string(c.Tests),
		timeWindowRule.Name: c.WindowRule.String(),
		timeWindows.Name:    strconv.Itoa(c.Windows),
	}
}

// timeNMethod is TIME-n: TIME's run, scored like the baselines.
func timeNMethod(timeM *method.Method) method.Method {
	return method.Method{
		Name: "TIME-n", Doc: "TIME's explanation scored on its top n features and cells, like the baselines",
		From: timeM, Mode: method.TopN, Tests: true,
	}
}

// readHierarchy parses TIME's hierarchy file against the data's feature
// names.
func readHierarchy(path string, data *tempora.Dataset) (*explain.Hierarchy, error) {
	if data == nil {
		return nil, fmt.Errorf("hierarchy %s: no data to name features", path)
	}
	names := make([]string, data.X.D)
	for j := range names {
		names[j] = data.Name(j)
	}
	h, err := explain.ReadHierarchyFile(path, names)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe) && pe.Path == path:
		return nil, fmt.Errorf("hierarchy: %w", err)
	case err != nil:
		return nil, fmt.Errorf("hierarchy %s: %w", path, err)
	}
	return h, nil
}
