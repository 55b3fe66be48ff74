package explain

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Tests names TIME's choice of p-value tests (TIME.Tests): which stopping
// rule each family of tests uses and the caps of its tests. The zero value
// is BesagCliffordTests.
type Tests string

// The choices of TIME.Tests, each declared with its stopping rule
// (stop_besag_clifford.go, stop_anytime.go, stop_fixed.go) and registered
// in testModes.
const (
	// BesagCliffordTests, the default: every p-value test stops by Besag
	// and Clifford's sequential rule (BesagClifford, SequentialStop):
	// once it has h draws as bad as the baseline, or at its cap.
	// Window-search probes stop by Probe, gap and trim checks by Looks.
	// It keeps the paper's power at less than half its model calls
	// (docs/decisions.md, decision 25).
	BesagCliffordTests Tests = "besag-clifford"
	// AnytimeTests, the cheaper choice: every p-value test of a
	// Benjamini–Hochberg family (the features, an important feature's
	// {ordering, windows}) has an anytime-valid p-value and stops as soon
	// as its decision within the family is settled, with exactly the
	// decisions BH would make if every test ran to its cap (Anytime;
	// docs/decisions.md, decision 16); window orderings stop by Besag and
	// Clifford's rule, probes and checks as under BesagCliffordTests. The
	// caps below an important feature are smaller. It makes far fewer
	// draws and finds fewer weak features and orderings: the anytime
	// p-value is about twice Besag and Clifford's for a test with
	// a few hits (docs/decisions.md, decision 25).
	AnytimeTests Tests = "anytime"
	// FixedTests is the paper's procedure: every test, probes and checks
	// included, makes exactly TIME.Permutations draws (DefaultPermutations
	// when 0), p = (1 + #not worse)/(1 + P).
	FixedTests Tests = "fixed"
)

// testMode is what a choice of Tests decides for TIME: the caps and the
// stopping rule of every kind of test.
type testMode interface {
	// permutations returns the default of TIME.Permutations (0: the caps
	// are chosen per family).
	permutations() int
	// capOf returns the most draws of a p-value test whose nominal cap is
	// p, the P whose smallest p-value 1/(P+1) the test reaches; in
	// float64, so that an absurd configuration can be estimated without
	// overflow.
	capOf(p float64) float64
	// familyStop returns the rule of a p-value test with cap n in a
	// Benjamini–Hochberg family at level alpha.
	familyStop(n int, alpha float64) Stop
	// powerHits returns the hits that set the caps of the families
	// below an important feature (TIME.powerDraws): pair for its
	// {ordering, windows}, ordering for its window orderings.
	powerHits() (pair, ordering int)
	// pairStop returns the rule of a test with cap n at level alpha in
	// an important feature's family {ordering, windows}.
	pairStop(n int, alpha float64) Stop
	// orderingStop returns the rule of a window-ordering test with cap n
	// at level alpha.
	orderingStop(n int, alpha float64) Stop
	// probeStop returns the rule of a window-search probe with threshold
	// thr.
	probeStop(thr float64) Stop
	// checkStop returns the rule of a gap or trim check with threshold
	// thr under the verified window rule.
	checkStop(thr float64) Stop
}

// testModes registers the choices of Tests.
var testModes = map[Tests]testMode{
	AnytimeTests:       anytimeTests{},
	BesagCliffordTests: besagCliffordTests{},
	FixedTests:         fixedTests{},
}

// TestsNames returns the names of the choices of Tests, the default first.
func TestsNames() []string {
	names := []string{string(BesagCliffordTests)}
	var rest []string
	for t := range testModes {
		if t != BesagCliffordTests {
			rest = append(rest, string(t))
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// ParseTests returns the choice named s; "" is the default,
// BesagCliffordTests.
func ParseTests(s string) (Tests, error) {
	t := Tests(s)
	if t == "" {
		t = BesagCliffordTests
	}
	if _, ok := testModes[t]; !ok {
		return "", fmt.Errorf("explain: unknown tests %s (want %s)", strconv.Quote(s), strings.Join(TestsNames(), ", "))
	}
	return t, nil
}

// mode returns the registered mode of t ("" is BesagCliffordTests); t
// must have been parsed.
func (t Tests) mode() testMode {
	if t == "" {
		t = BesagCliffordTests
	}
	return testModes[t]
}

// sequentialSearch is the window search's part of the sequential choices:
// probes stop once their interval settles the comparison with the
// threshold (Probe), gap and trim checks at O'Brien and Fleming's
// boundary (Looks).
type sequentialSearch struct{}

func (sequentialSearch) probeStop(thr float64) Stop { return Probe{Threshold: thr} }
func (sequentialSearch) checkStop(thr float64) Stop {
	return Looks{K: DefaultLooks, Threshold: thr}
}

// orderingStop of the sequential choices: Besag and Clifford's rule even
// when the other families stop by family (docs/decisions.md, decisions
// 18 and 25). A window-ordering family holds a feature's few significant
// windows and its cap is chosen for power; the anytime-valid p-value of
// the family rule is about twice Besag and Clifford's for a test with a
// few hits, which would cost the power the cap buys, and would save
// little on so small a family. Every rule gives valid p-values, so BH
// keeps its guarantee whichever a family uses.
func (sequentialSearch) orderingStop(n int, alpha float64) Stop { return SequentialStop(alpha, n) }

// MinPermutations returns the smallest number of permutations P at which a
// single test of a family of m tests can pass Benjamini–Hochberg at level
// alpha: the smallest p-value of a permutation test, 1/(P+1), must be at
// most alpha/m, so P = ⌈m/alpha⌉ − 1 (99 for 10 tests at 0.1). With fewer,
// BH rejects nothing unless several tests reach the smallest p-value
// together. It returns at least 1 for m ≥ 1 and alpha in (0, 1).
func MinPermutations(m int, alpha float64) int {
	return int(minPermutations(float64(m), alpha))
}

// minPermutations is MinPermutations in float64, for estimates that must
// not overflow.
func minPermutations(m, alpha float64) float64 {
	// The slack keeps ⌈10/0.1⌉ at 100 despite 0.1's rounding.
	return math.Max(1, math.Ceil(m/alpha-1e-9)-1)
}

// Family returns the cap and the stopping rule of a p-value test in a
// Benjamini–Hochberg family of m tests at level alpha under t, with
// TIME.Permutations' meaning of permutations (0: the default): what TIME
// gives the tests of its feature families, and what PERM gives its cells.
// t must have been parsed ("" is AnytimeTests).
func (t Tests) Family(m int, alpha float64, permutations int) (int, Stop) {
	cfg := TIME{Tests: t, Alpha: alpha, Permutations: permutations}
	if permutations == 0 {
		cfg.Permutations = cfg.mode().permutations()
	}
	n := cfg.maxDraws(m)
	return n, cfg.familyStop(n)
}
