package explain

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// Defaults of the TIME configuration, used for zero fields.
const (
	// DefaultPermutations is the number of permutations per test in fixed
	// mode, the paper's P = 50.
	DefaultPermutations = 50
	DefaultAlpha        = 0.1
	DefaultGamma        = 0.99
	// DefaultWindows is the default most windows per feature.
	DefaultWindows = 3
)

// TIME is the Temporal Importance Model Explanation method of Sood and
// Craven (see the package documentation). The zero value runs the
// default tests (Tests: BesagCliffordTests, sequential p-values that stop
// after a set number of hits; docs/decisions.md, decision 25), with caps
// that let each family make a single discovery, FDR level 0.1, window
// localisation 0.99, up to 3 windows per feature, the task's default
// loss, seed 0, one worker per available CPU and a flat hierarchy.
// PaperTIME returns the paper's configuration.
type TIME struct {
	// Tests chooses the p-value tests: BesagCliffordTests (the zero
	// value), AnytimeTests or FixedTests, the paper's (tests.go).
	Tests Tests
	// Permutations sets the caps. With FixedTests it is the number of
	// draws P of every test (0: DefaultPermutations). With the sequential
	// choices it is the nominal cap P of every test, whose smallest
	// p-value is 1/(P+1): a Besag–Clifford test makes at most P draws, an
	// anytime test at most AnytimeCap(P) (a third more, for the same
	// smallest p-value), and a window-search probe at most P; 0 means,
	// for each family of m tests, P = MinPermutations(m, Alpha) (and
	// PowerHits times that for an important feature's {ordering,
	// windows}, OrderingHits times for its window orderings,
	// DefaultPermutations for the probes). Negative values are an error.
	Permutations int
	// Alpha is the FDR level α of every Benjamini–Hochberg family, in
	// (0, 1); 0 means DefaultAlpha.
	Alpha float64
	// Gamma is the window localisation parameter γ in (0, 1); 0 means
	// DefaultGamma. The window leaves out a prefix and a suffix whose
	// importance is each at most (1−γ)/2 of the whole sequence's.
	Gamma float64
	// Loss is the per-instance loss; nil means tempora.LossFor(data.Task).
	Loss tempora.Loss
	// Seed is the run seed of every permutation stream.
	Seed uint64
	// Workers is the number of goroutines evaluating the model; 0 means
	// runtime.GOMAXPROCS(0). The result does not depend on it.
	Workers int
	// Hierarchy is an optional tree of feature groups; nil means every
	// feature is tested alone in one family.
	Hierarchy *Hierarchy
	// MaxDraws bounds the worst case of the run, the draws it makes if
	// every test runs to its cap and every node is important
	// (TIME.Estimate); a configuration above it is refused before the
	// model is called. 0 means DefaultMaxDraws; negative means no limit.
	MaxDraws int64
	// MemoryBudget is the bytes the workers' copies of the data may use
	// (Engine.SetMemoryBudget): each worker copies the whole data when
	// all copies fit, else it predicts chunks of instances. 0 means
	// memlimit.CopyBudget, the smaller of 256 MiB and a quarter of the
	// process's memory limit. The result does not depend
	// on it; the model calls do.
	MemoryBudget int64
	// Batch is the most instances per model call (Engine.SetBatch): 0
	// leaves the calls as the memory budget and the model's limit make
	// them (a draw's M instances in one call when the copies fit);
	// BatchAuto times the model at a few sizes after the baseline and
	// takes the cheapest per instance (Engine.TuneBatch, at the cost of
	// up to five passes over the data). The result does not depend on
	// it; the model calls do (Accounting.Batch reports them).
	Batch int
	// MaxCalls and MaxTime are the run's budget (Engine.SetBudget): the
	// most model calls, the baseline's included, and the wall time from
	// the start of Explain after which no model call starts; 0 means no
	// limit. A run they stop returns the decisions settled before, with
	// Accounting.StoppedBy set and every node whose tests had not
	// finished marked Undecided (stopped.go).
	MaxCalls int64
	MaxTime  time.Duration
	// Estimates, if not nil, is called with the run's estimates of its
	// cost (estimate.go): after the baseline and the batch size, and once
	// the feature tests are decided. It is called from Explain's
	// goroutine and must return quickly.
	Estimates func(tempora.RunEstimate)
	// Conditional makes the across-instance tests (features, groups,
	// window search and window) conditional permutation tests
	// (Conditional, conditional.go): they ask whether a feature carries
	// information about the target beyond the other features, instead of
	// whether the model reads it. The ordering tests stay within-window
	// permutations. The explanation's Test is then "conditional".
	Conditional bool
	// WindowRule is the window search's rule and what an important
	// feature without a significant window reports; the zero value is
	// Verified, PaperRule the paper's.
	WindowRule WindowRule
	// Windows is the most windows reported per feature: the window search
	// finds one window, then splits it at interior gaps that surely carry
	// less than (1−γ)/2 of the importance, keeping the longest Windows − 1
	// gaps, trims its ends likewise and reports only the pieces that
	// surely carry more (split.go). 0 means DefaultWindows; 1 is the
	// paper's single window, which is neither split nor trimmed. Negative
	// values are an error.
	Windows int
	// LengthRule is how the across-instance tests move a feature's values
	// between instances of different lengths, on data with missing values
	// (lengths.go, docs/decisions.md, decision 19); nil is Strata, the
	// rule that keeps the tests valid. It has no effect on complete data.
	LengthRule LengthRule
	// TreeFDR controls the FDR of the whole tree of discoveries (features
	// or groups, their windows and whole-sequence orderings, the window
	// orderings) at Alpha instead of each family's: every family is
	// tested at Alpha/TreeLevel, Yekutieli's level adjustment
	// (docs/decisions.md, decision 20). The zero value (false) controls
	// each family at Alpha.
	TreeFDR bool
}

// PaperTIME returns the configuration of the paper (Sood and Craven):
// fixed tests of DefaultPermutations draws (FixedTests), the paper's
// window rule (PaperRule) and one window per feature. The benchmark's
// suites run TIME so.
func PaperTIME() TIME {
	return TIME{Tests: FixedTests, WindowRule: PaperRule, Windows: 1}
}

// TreeLevel is the divisor of α under TIME.TreeFDR: Yekutieli (2008)
// bounds the FDR of the full tree of a hierarchical procedure that applies
// BH at level q in every family by 2·δ*·q, with δ* ≤ 1.44, so BH at
// α/(2·1.44) in every family bounds it by α.
const TreeLevel = 2 * 1.44

// DefaultMaxDraws is the default limit of TIME's worst-case draws
// (TIME.MaxDraws): 10⁸ draws, far above any default configuration of up to
// a few hundred features (10 features at α = 0.1 need at most about 10⁴).
const DefaultMaxDraws = 100_000_000

var _ tempora.Explainer = TIME{}

// config returns c with defaults filled in (a zero Permutations stays 0
// with the sequential tests: the caps are chosen per family), or an error
// naming the offending field.
func (c TIME) config() (TIME, error) {
	tests, err := ParseTests(string(c.Tests))
	if err != nil {
		return c, err
	}
	c.Tests = tests
	if c.Permutations < 0 {
		return c, fmt.Errorf("explain: TIME permutations %d is negative (0 chooses the caps per family of tests)", c.Permutations)
	}
	if c.Permutations == 0 {
		c.Permutations = c.mode().permutations()
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if !(c.Alpha > 0 && c.Alpha < 1) {
		return c, fmt.Errorf("explain: TIME alpha %v outside (0, 1)", c.Alpha)
	}
	if c.TreeFDR {
		// From here on Alpha is every family's level.
		c.Alpha /= TreeLevel
		c.TreeFDR = false
	}
	if c.Gamma == 0 {
		c.Gamma = DefaultGamma
	}
	if !(c.Gamma > 0 && c.Gamma < 1) {
		return c, fmt.Errorf("explain: TIME gamma %v outside (0, 1)", c.Gamma)
	}
	if c.Workers < 0 {
		return c, fmt.Errorf("explain: TIME workers %d is negative", c.Workers)
	}
	if c.MaxDraws == 0 {
		c.MaxDraws = DefaultMaxDraws
	}
	if c.Windows < 0 {
		return c, fmt.Errorf("explain: TIME windows %d is negative (0 means %d)", c.Windows, DefaultWindows)
	}
	if c.Windows == 0 {
		c.Windows = DefaultWindows
	}
	if c.Batch < BatchAuto {
		return c, fmt.Errorf("explain: TIME batch %d: want 0 (none), a size, or BatchAuto", c.Batch)
	}
	if c.MaxCalls < 0 || c.MaxTime < 0 {
		return c, fmt.Errorf("explain: TIME budget of %d model calls and %v is negative (0: no limit)", c.MaxCalls, c.MaxTime)
	}
	if c.WindowRule != Verified && c.WindowRule != PaperRule {
		return c, fmt.Errorf("explain: TIME window rule %d unknown", int(c.WindowRule))
	}
	if c.LengthRule == nil {
		c.LengthRule = Strata{}
	}
	return c, nil
}

// mode returns the tests' mode (c.Tests parsed).
func (c TIME) mode() testMode { return c.Tests.mode() }

// explain runs TIME on model m and data. It returns an error, never a
// panic, for an invalid configuration, invalid data (shape, infinite
// values, an instance or a feature with no observed value, non-binary
// classification labels, fewer than 2 instances), an invalid hierarchy,
// conditional tests on data with missing values, a failing model or one
// that predicts non-finite values, or when ctx is cancelled.
//
// The data may have missing values (NaN), which reach the model as NaN:
// the tests then follow docs/decisions.md, decision 19 (missing.go), and
// the windows lie in the span where their features are observed, in the
// data's aligned time.
//
// After the start (the baseline prediction) and the batch size (tune),
// the steps are those of stages. A budget (MaxCalls, MaxTime) that stops
// them is not an error: the explanation holds what was decided before it
// (stop).
func (c TIME) explain(ctx context.Context, m tempora.Model, held resident.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	began := time.Now()
	r, top, err := c.start(m, data)
	if err != nil {
		return nil, err
	}
	r.eng.Hold(held)
	var deadline time.Time
	if r.cfg.MaxTime > 0 {
		deadline = began.Add(r.cfg.MaxTime)
	}
	r.eng.SetBudget(r.cfg.MaxCalls, deadline)
	err = r.tune(ctx)
	if err == nil {
		r.estimateStart(top)
		err = r.stages(ctx, top)
	}
	if by := stoppedBy(err); by != "" {
		r.stop(by, top)
	} else if err != nil {
		return nil, err
	}
	r.fillCells()
	acc := r.eng.Accounting()
	acc.WindowProbes = r.probes
	acc.Draws = r.counts
	acc.Runtime = time.Since(began)
	acc.StoppedBy, acc.Incomplete = r.stoppedBy, r.stoppedBy != ""
	acc.Batch = r.batch
	if acc.Batch != nil {
		acc.Batch.Size = r.eng.BatchSize()
	}
	r.ex.Accounting = acc
	return r.ex, nil
}

// stages runs the tests after the start: the feature and group families,
// top-down (testFamilies); for every important node, the window search
// and split (locateWindows), the family {whole-sequence ordering,
// windows} (testOrderingWindow) and the orderings of the significant
// windows (testWindowOrderings); then the causal check of a model with
// several outputs. Each step marks the nodes it decides undecided until
// it has decided them (stopped.go), so that a budget that stops a step
// leaves them so.
func (r *timeRun) stages(ctx context.Context, top []*node) error {
	important, err := r.testFamilies(ctx, top)
	if err != nil {
		return err
	}
	r.diagnose(r.topRes, len(important))
	r.estimateWindows(important)
	units, err := r.units(ctx, important)
	if err != nil {
		return err
	}
	r.markFuture(important)
	r.enter(units, stepWindow)
	windows, err := r.locateWindows(ctx, units)
	if err != nil {
		return err
	}
	significant, err := r.testOrderingWindow(ctx, units, windows)
	if err != nil {
		return err
	}
	r.leave(units)
	r.enter(significant, stepWindowOrdering)
	if err := r.testWindowOrderings(ctx, significant); err != nil {
		return err
	}
	r.leave(significant)
	return r.checkCausal(ctx, important)
}

// timeRun is the state of one Explain: the configuration with its
// defaults, the engine, the explanation being filled in, the whole
// sequence's window, the window search's threshold fraction θ = (1−γ)/2,
// the draws per kind of test and the window probes made.
type timeRun struct {
	cfg    TIME
	eng    *Engine
	ex     *tempora.Explanation
	whole  tempora.Window
	theta  float64
	counts []tempora.DrawCount
	probes int64
	// topRes are the results of the first family's tests (diagnose).
	topRes []TestResult
	// batch is the batch size set or chosen (tune), nil without one;
	// stoppedBy the budget that stopped the run (stop), empty without.
	batch     *tempora.Batch
	stoppedBy string
	// future holds the results per output that the causal check decides,
	// from the units on (markFuture) until it has.
	future map[*tempora.FeatureResult]bool
	// mark is where the last estimate was made.
	mark estimated
}

// start checks the configuration, the model, the data and the hierarchy
// (before the model is called), builds the test tree, predicts the
// baseline and collects the warnings known before any test. It returns the
// run and the top family.
func (c TIME) start(m tempora.Model, data *tempora.Dataset) (*timeRun, []*node, error) {
	cfg, err := c.config()
	if err != nil {
		return nil, nil, err
	}
	if m == nil {
		return nil, nil, fmt.Errorf("explain: nil model")
	}
	if data == nil {
		return nil, nil, fmt.Errorf("explain: nil dataset")
	}
	obs, err := data.Observe(2)
	if err != nil {
		return nil, nil, fmt.Errorf("explain: %w", err)
	}
	if cfg.Conditional && !obs.Complete() {
		return nil, nil, fmt.Errorf("explain: TIME's conditional tests need complete data, and this data has missing values (NaN): run the marginal tests (conditional off)")
	}
	ex := tempora.NewExplanation("TIME", data)
	if cfg.Conditional {
		ex.Test = conditionalTestName
	}
	top, err := cfg.buildNodes(ex, data)
	if err != nil {
		return nil, nil, err
	}
	if err := cfg.guard(top, data); err != nil {
		return nil, nil, err
	}
	eng, err := newEngine(m, data, obs, cfg.Loss, cfg.Seed, cfg.Workers, max(0, cfg.Batch))
	if err != nil {
		return nil, nil, err
	}
	eng.SetMemoryBudget(cfg.MemoryBudget)
	if eng.BaselineLoss() == 0 {
		ex.Warnings = append(ex.Warnings, "baseline loss is zero: the model fits the targets exactly")
	}
	ex.Warnings = append(ex.Warnings, cfg.floorWarnings(top)...)
	ex.Warnings = append(ex.Warnings, cfg.conditionalWarnings(data)...)
	if !obs.Complete() {
		ex.Warnings = append(ex.Warnings, cfg.LengthRule.warnings(obs)...)
	}
	counts := make([]tempora.DrawCount, drawKinds, drawOutputKinds)
	for k := range counts {
		counts[k].Test = drawNames[k]
	}
	if data.Outputs != nil {
		for _, name := range drawOutputNames {
			counts = append(counts, tempora.DrawCount{Test: name})
		}
	}
	r := &timeRun{cfg: cfg, eng: eng, ex: ex, whole: tempora.Window{Start: 0, End: data.X.L - 1}, theta: (1 - cfg.Gamma) / 2, counts: counts}
	return r, top, nil
}

// floorWarnings checks every family of the hierarchy: the top family, the
// members of each group, the {ordering, window} pairs and the window
// orderings. A family of m tests whose cap P has 1/(P+1) > α/m cannot make a
// single discovery; BH then rejects nothing unless ⌈m/(α(P+1))⌉ tests reach
// the smallest p-value together. With the default caps
// (MinPermutations) this never happens.
func (c TIME) floorWarnings(top []*node) []string {
	var out []string
	check := func(family string, m int) {
		p := c.nominal(m)
		floor := 1 / float64(p+1)
		if floor <= c.Alpha/float64(m)*(1+1e-12) {
			return
		}
		need := int(math.Ceil(float64(m)/(c.Alpha*float64(p+1)) - 1e-9))
		consequence := fmt.Sprintf("BH rejects none of them unless at least %d reach it", need)
		if need > m {
			consequence = "none of them can be significant"
		}
		out = append(out, fmt.Sprintf("%s: with %d permutations the smallest p-value 1/%d = %.3g exceeds alpha/m = %.3g, so %s; a single discovery needs at least %d permutations",
			family, p, p+1, floor, c.Alpha/float64(m), consequence, MinPermutations(m, c.Alpha)))
	}
	if c.Hierarchy == nil {
		check(fmt.Sprintf("the family of %d features", len(top)), len(top))
	} else {
		check(fmt.Sprintf("the top family of %d groups", len(top)), len(top))
		var walk func(n *node)
		walk = func(n *node) {
			if len(n.children) == 0 {
				return
			}
			check(fmt.Sprintf("the family of the %d members of %s", len(n.children), n.name), len(n.children))
			for _, ch := range n.children {
				walk(ch)
			}
		}
		for _, n := range top {
			walk(n)
		}
	}
	check("each {ordering, window} pair (2 tests)", 2)
	check("each window-ordering test (a family of 1)", 1)
	return out
}
