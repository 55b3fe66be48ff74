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
// Craven (see the package documentation). The zero value runs sequential
// permutation tests that stop once their Benjamini–Hochberg decision in
// their family is settled (anytime-valid p-values, docs/decisions.md,
// decision 16; BesagClifford selects Besag and Clifford's tests), with caps
// that let each family make a single discovery, FDR level 0.1, window
// localisation 0.99, the task's default loss, seed 0, one worker per
// available CPU and a flat hierarchy. With Fixed set it is the paper's
// configuration: 50 permutations per test.
type TIME struct {
	// Permutations bounds the draws per test. In sequential mode (the
	// default) it is P_max, the most draws of any test; 0 means, for each
	// family of m tests, MinPermutations(m, Alpha) (99 for 10 features at
	// α = 0.1, 19 for the {ordering, window} pair, 9 for the window
	// ordering), and DefaultPermutations for the window-search probes. In
	// fixed mode it is the number of draws P of every test; 0 means
	// DefaultPermutations. Negative values are an error.
	Permutations int
	// Fixed selects the paper's fixed-P tests: every test makes exactly
	// Permutations draws, and p = (1 + #not worse)/(1 + P). The zero value
	// (false) selects sequential tests: a test stops as soon as its
	// SequentialStop rule says so, and a window-search probe as soon as
	// its score is clearly above or below the search threshold (see
	// FullProbes).
	Fixed bool
	// FullProbes runs every window-search probe to its cap in sequential
	// mode, instead of stopping it once a Student-t interval of its score
	// with the coverage of ±DefaultProbeZ SE (after at least
	// DefaultProbeMinDraws draws) settles the comparison with the
	// threshold (Stop.Probe). Fixed implies it.
	FullProbes bool
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
	// BesagClifford selects, in sequential mode, Besag and Clifford's
	// sequential tests (each test stops after its SequentialStop hits),
	// with caps MinPermutations(m, Alpha). The zero value (false) selects
	// the family stopping rule (docs/decisions.md, decision 16):
	// anytime-valid p-values with caps AnytimePermutations(m, Alpha), each
	// test stopping as soon as its Benjamini–Hochberg decision within its
	// family is settled, with the decisions BH would make if every test
	// ran to its cap.
	BesagClifford bool
	// MaxDraws bounds the worst case of the run, the draws it makes if
	// every test runs to its cap and every node is important
	// (TIME.Estimate); a configuration above it is refused before the
	// model is called. 0 means DefaultMaxDraws; negative means no limit.
	MaxDraws int64
	// MemoryBudget is the bytes the workers' copies of the data may use
	// (Engine.SetMemoryBudget): each worker copies the whole data when
	// all copies fit, else it predicts chunks of instances. 0 means a
	// quarter of the process's memory limit. The result does not depend
	// on it; the model calls do.
	MemoryBudget int64
	// Conditional makes the across-instance tests (features, groups,
	// window search and window) conditional permutation tests
	// (Conditional, conditional.go): they ask whether a feature carries
	// information about the target beyond the other features, instead of
	// whether the model reads it. The ordering tests stay within-window
	// permutations. The explanation's Test is then "conditional".
	Conditional bool
	// WindowRule is the window search's rule and what an important
	// feature without a significant window reports; the zero value is
	// OneSided, PaperRule the paper's.
	WindowRule WindowRule
	// Windows is the most windows reported per feature: the window search
	// finds one window, then splits it at interior gaps that surely carry
	// less than (1−γ)/2 of the importance, keeping the longest Windows − 1
	// gaps, trims its ends likewise and reports only the pieces that
	// surely carry more (splitWindows). 0 means DefaultWindows; 1 is the
	// paper's single window, which is neither split nor trimmed. Negative
	// values are an error.
	Windows int
	// LengthRule is how the across-instance tests move a feature's values
	// between instances of different lengths, on data with missing values
	// (missing.go, docs/decisions.md, decision 19); the zero value is
	// Strata, the rule that keeps the tests valid. It has no effect on
	// complete data.
	LengthRule LengthRule
	// TreeFDR controls the FDR of the whole tree of discoveries (features
	// or groups, their windows and whole-sequence orderings, the window
	// orderings) at Alpha instead of each family's: every family is
	// tested at Alpha/TreeLevel, Yekutieli's level adjustment
	// (docs/decisions.md, decision 20). The zero value (false) controls
	// each family at Alpha.
	TreeFDR bool
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

// config returns c with defaults filled in (a zero Permutations stays 0 in
// sequential mode: the cap is chosen per family), or an error naming the
// offending field.
func (c TIME) config() (TIME, error) {
	if c.Permutations < 0 {
		return c, fmt.Errorf("explain: TIME permutations %d is negative (0 chooses the caps per family of tests)", c.Permutations)
	}
	if c.Permutations == 0 && c.Fixed {
		c.Permutations = DefaultPermutations
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
	if c.WindowRule != OneSided && c.WindowRule != PaperRule {
		return c, fmt.Errorf("explain: TIME window rule %d unknown", int(c.WindowRule))
	}
	if c.LengthRule != Receiver && c.LengthRule != Donor && c.LengthRule != Strata {
		return c, fmt.Errorf("explain: TIME length rule %d unknown", int(c.LengthRule))
	}
	return c, nil
}

// maxDraws returns the draws cap of a test in a family of m tests: the
// nominal cap, or with the family stopping rule AnytimeCap of it (the same
// smallest p-value).
func (c TIME) maxDraws(m int) int {
	p := c.nominal(m)
	if c.anytime() {
		return AnytimeCap(p)
	}
	return p
}

// nominal returns Permutations, or MinPermutations(m, Alpha) when it is 0:
// the P whose smallest p-value 1/(P+1) every stopping rule reaches.
func (c TIME) nominal(m int) int {
	if c.Permutations > 0 {
		return c.Permutations
	}
	return MinPermutations(m, c.Alpha)
}

// anytime reports whether the tests use the family stopping rule.
func (c TIME) anytime() bool { return !c.Fixed && !c.BesagClifford }

// PowerHits is the number of exceedances k that sets the default cap of a
// window-ordering test in sequential mode, N = ⌈k/α⌉ − 1 (29 at α = 0.1):
// a test alone in its family then passes with up to k − 1 draws not worse
// than the baseline. MinPermutations (k = 1, cap 9) lets it pass only with
// none, and a permutation that fixes the timesteps the model reads leaves
// the loss unchanged: for a model that reads 2 of the 8 timesteps of its
// window (a hit in 1 of 56 draws) the ordering would be missed in 1 −
// (55/56)⁹ ≈ 15% of runs; with k = 3 in P(Bin(29, 1/56) ≥ 3) ≈ 1.5%. The
// window ordering is TIME's claim that the order matters, hence the
// power; k = 3 keeps the extra draws of true orderings (which run to the
// cap) to 20 per window. The other families keep MinPermutations, since a true feature or
// window rarely ties with the baseline (its permutations change the
// values, not only their order).
const PowerHits = 3

// familyDraws returns the draws cap of a test in a window-ordering family
// of m tests: Permutations if set, else ⌈PowerHits·m/α⌉ − 1.
func (c TIME) familyDraws(m int) int {
	if c.Permutations > 0 {
		return c.Permutations
	}
	return MinPermutations(PowerHits*m, c.Alpha)
}

// orderingStop returns the stopping rule of a window-ordering test with
// the given cap: Besag and Clifford's sequential rule even when the other
// families stop by family (docs/decisions.md, decision 18). A
// window-ordering family holds a feature's few significant windows and
// its cap is chosen for power (PowerHits); the anytime-valid p-value of
// the family rule is about twice Besag and Clifford's for a test with a
// few hits, which would cost the power the cap buys, and would save
// little on so small a family. Every rule gives valid p-values, so BH
// keeps its guarantee whichever a family uses.
func (c TIME) orderingStop(pmax int) Stop {
	if c.Fixed {
		return Stop{}
	}
	return SequentialStop(c.Alpha, pmax)
}

// orderingDraws returns the draws cap of a within-window test of w
// timesteps in a family of m tests whose cap is p. With the default caps, a window short
// enough that its ordering could just reach α/m (w ≤ w₀, the smallest w
// with 1/w! ≤ α/m: 4 for α/m in [1/24, 1/6)) is enumerated exactly, w! − 1
// draws, even above the family cap: a sampled test of a short window
// would draw the identity ordering, a sure hit, too often (probability
// 1/24 per draw for w = 4, so a 4-timestep window capped at 9 draws would
// lose a third of its power).
func (c TIME) orderingDraws(p, m, w int) int {
	if c.Permutations > 0 {
		return p
	}
	w0 := 1
	for f := 1; float64(f) < float64(m)/c.Alpha*(1-1e-12) && w0 < 20; f *= w0 {
		w0++
	}
	if e, ok := exactDraws(w, exactDrawsOf(w0)); ok {
		return max(p, e)
	}
	return p
}

// exactDrawsOf returns w! − 1 (w ≤ 20).
func exactDrawsOf(w int) int {
	f, _ := factorial(w, math.MaxInt)
	return f - 1
}

// stop returns the stopping rule of a p-value test with the given cap in
// the family named family.
func (c TIME) stop(pmax int, family string) Stop {
	switch {
	case c.Fixed:
		return Stop{}
	case c.anytime():
		return Stop{Anytime: true, Alpha: c.Alpha, Family: family}
	}
	return SequentialStop(c.Alpha, pmax)
}

// probeCap returns the draws cap of a window-search probe.
func (c TIME) probeCap() int {
	if c.Permutations > 0 {
		return c.Permutations
	}
	return DefaultPermutations
}

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
// The steps (see the package documentation) are: the feature and group
// families, top-down (testFamilies); for every important node, the window
// search (searchWindows), the family {whole-sequence ordering, window}
// (testOrderingWindow) and, if the window is significant, the window
// ordering (testWindowOrderings); then the cells.
func (c TIME) explain(ctx context.Context, m tempora.Model, held resident.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	began := time.Now()
	r, top, err := c.start(m, data)
	if err != nil {
		return nil, err
	}
	r.eng.Hold(held)
	important, err := r.testFamilies(ctx, top)
	if err != nil {
		return nil, err
	}
	probe := !r.cfg.Fixed && !r.cfg.FullProbes
	theta := (1 - r.cfg.Gamma) / 2
	found, probes, err := searchWindows(ctx, r.eng, important, r.whole.Len(), theta, r.cfg.WindowRule, r.cfg.probeCap(), probe, r.cfg.across(), &r.counts[drawSearch])
	if err != nil {
		return nil, err
	}
	r.clipToSpans(important, found) // missing values: windows lie in their span
	windows, gapProbes, err := splitWindows(ctx, r.eng, important, found, r.whole.Len(), r.cfg.Windows, theta, r.cfg.WindowRule, r.cfg.probeCap(), probe, r.cfg.across(), &r.counts[drawSearch])
	if err != nil {
		return nil, err
	}
	probes += gapProbes
	significant, err := r.testOrderingWindow(ctx, important, windows)
	if err != nil {
		return nil, err
	}
	if err := r.testWindowOrderings(ctx, significant); err != nil {
		return nil, err
	}
	fillCells(r.ex, r.cfg.WindowRule)
	acc := r.eng.Accounting()
	acc.WindowProbes = probes
	acc.Draws = r.counts
	acc.Runtime = time.Since(began)
	r.ex.Accounting = acc
	return r.ex, nil
}

// timeRun is the state of one Explain: the configuration with its defaults,
// the engine, the explanation being filled in, the whole sequence's window
// and the draws per kind of test.
type timeRun struct {
	cfg    TIME
	eng    *Engine
	ex     *tempora.Explanation
	whole  tempora.Window
	counts []tempora.DrawCount
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
	eng, err := newEngine(m, data, obs, cfg.LengthRule, cfg.Loss, cfg.Seed, cfg.Workers)
	if err != nil {
		return nil, nil, err
	}
	eng.SetMemoryBudget(cfg.MemoryBudget)
	if eng.BaselineLoss() == 0 {
		ex.Warnings = append(ex.Warnings, "baseline loss is zero: the model fits the targets exactly")
	}
	ex.Warnings = append(ex.Warnings, cfg.floorWarnings(top)...)
	ex.Warnings = append(ex.Warnings, cfg.conditionalWarnings(data)...)
	ex.Warnings = append(ex.Warnings, eng.missingWarnings()...)
	counts := make([]tempora.DrawCount, drawKinds)
	for k := range counts {
		counts[k].Test = drawNames[k]
	}
	r := &timeRun{cfg: cfg, eng: eng, ex: ex, whole: tempora.Window{Start: 0, End: data.X.L - 1}, counts: counts}
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
