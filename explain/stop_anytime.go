package explain

import "math"

// Anytime is the anytime-valid p-value of a test that stops by its
// family's decision (TIME's default, docs/decisions.md, decision 16): its
// p-value is 1/max_{j≤k} M_j, M the mixture likelihood ratio of
// anytimeLogM, valid at any stopping time by Ville's inequality. The test
// never stops by itself: Engine.RunFamilies settles the tests of each
// Family between batches (settle), stopping a test once its
// Benjamini–Hochberg decision at the family's level is the one BH would
// make if every test of the family ran to its cap. An exact test of the
// family never stops early, but its bounds take part in the family's
// decisions. Anytime needs a family: Engine.Run refuses it.
//
// Batches: a first batch of anytimeMinBatch draws (a test whose every
// draw ties settles after it), then batches of 2 growing by an eighth, so
// that a test runs at most an eighth (or 2 draws) past the point at which
// it settles. The decisions do not depend on the batches (they are those
// at the caps, see settle); only the draws do.
type Anytime struct{}

func (Anytime) validate() error { return nil }
func (Anytime) start() stopper  { return &anytimeState{} }

// anytimeState is an Anytime test's running maximum of log M_k.
type anytimeState struct{ logM float64 }

func (*anytimeState) batch(t *tally) int {
	if t.issued == 0 {
		return anytimeMinBatch
	}
	return max(2, t.issued/8)
}

func (a *anytimeState) add(t *tally) bool {
	a.logM = max(a.logM, anytimeLogM(t.used, t.hits, t.max))
	return false
}

func (a *anytimeState) pValue(t *tally, _ bool) float64 {
	if t.exact {
		return t.pValue()
	}
	up, _ := a.bounds(t)
	return up
}

// bounds returns the test's current p-value, 1/max M, an upper bound of
// its p-value at the cap, and a lower bound: the p-value if every
// remaining draw is a miss (misses raise M, so the largest M is then M at
// the cap). For an exact test they are the p-values of the enumeration if
// every remaining draw is a hit, or none is.
func (a *anytimeState) bounds(t *tally) (upper, lower float64) {
	if t.exact {
		return float64(1+t.hits+t.max-t.used) / float64(1+t.max), float64(1+t.hits) / float64(1+t.max)
	}
	best := max(a.logM, anytimeLogM(t.max, t.hits, t.max))
	return math.Min(1, math.Exp(-a.logM)), math.Min(1, math.Exp(-best))
}

// anytimeMinBatch is the first batch of an anytime test and the smallest
// of later ones.
const anytimeMinBatch = 4

// anytimeLogM returns log M_k of an anytime test with h hits in k draws
// and cap n (docs/decisions.md, decision 16):
//
//	M_k = B(h + 1, k − h + b) / (B(1, b) · B(h + 1, k − h + 1)),  b = n,
//
// B the beta function, b = anytimePrior(n) = 3n + 4. Under the null
// hypothesis the hits of a permutation test (draws not worse than the
// data) are exchangeable with the data's own rank: a sequence of k draws
// with h hits has probability B(h + 1, k − h + 1) (Pólya's urn, the hit
// rate U uniform). The numerator is its probability when U has the
// Beta(1, b) law, of mean 1/(1 + b): a test whose hits are rare. M is the
// ratio of the two, a nonnegative martingale of mean 1 under the null, so
// by Ville's inequality P(max_k M_k ≥ 1/u) ≤ u and p = 1/max_k M_k is
// valid at any stopping time, however chosen. Ties counted as hits only
// lower M (M decreases in h at fixed k), so ties keep it valid. M_0 = 1;
// each miss raises M (b > 1) and each hit lowers it. With no hit in k
// draws M_k = (k+1)·b/(k+b): about k + 1 while k ≪ b (as good as the
// fixed test's 1/(k+1)), and (3n + 4)/4 at the cap: the floor of the
// p-value is 4/(3n + 4), so a cap n = ⌈4(m/α − 1)/3⌉ (AnytimePermutations),
// a third above MinPermutations, lets one test of m pass BH. A larger b
// would bring the floor nearer 1/(n+1) but make a single hit cost more.
func anytimeLogM(k, h, n int) float64 {
	b := anytimePrior(n)
	return lbeta(float64(h+1), float64(k-h)+b) + math.Log(b) - lbeta(float64(h+1), float64(k-h+1))
}

// lbeta returns log B(a, b).
func lbeta(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// anytimePrior returns b of anytimeLogM for a test of cap n: 3n + 4.
func anytimePrior(n int) float64 { return 3*float64(n) + 4 }

// AnytimeCap returns the cap of an anytime test that reaches the smallest
// p-value of a fixed test of p draws: the smallest n whose floor
// 4/(3n + 4) is below 1/(p + 1), ⌊4p/3⌋ + 1 (133 for p = 99). The floor is
// strictly below so that rounding in 1/M cannot lift a test with no hit
// above a BH threshold of exactly 1/(p + 1).
func AnytimeCap(p int) int { return int(anytimeCap(float64(p))) }

// anytimeCap is AnytimeCap in float64.
func anytimeCap(p float64) float64 { return math.Floor(4*p/3) + 1 }

// AnytimePermutations returns the cap of an anytime test in a family of m
// tests at level alpha, AnytimeCap(MinPermutations(m, alpha)): 133 for 10
// tests at 0.1, 13 for one. Like MinPermutations it needs m/alpha to fit
// an int (TIME's cost guard checks it first).
func AnytimePermutations(m int, alpha float64) int {
	return AnytimeCap(MinPermutations(m, alpha))
}

// anytimeTests is AnytimeTests: the p-value tests of every
// Benjamini–Hochberg family of features stop by Anytime, with caps
// AnytimePermutations(m, α) (the same smallest p-value as
// MinPermutations(m, α) draws of a fixed test), and so do an important
// feature's {ordering, windows}; its window orderings stop by Besag and
// Clifford's rule. The caps below an important feature are those of the
// cheaper choice: anytimePairHits and anytimeOrderingHits
// (docs/decisions.md, decision 25).
type anytimeTests struct{ sequentialSearch }

// The hits that set the caps below an important feature under
// AnytimeTests: MinPermutations for {ordering, windows} (19 for one
// window at α = 0.1) and 3 times it for the window orderings (29).
const (
	anytimePairHits     = 1
	anytimeOrderingHits = 3
)

func (anytimeTests) permutations() int            { return 0 }
func (anytimeTests) capOf(p float64) float64      { return anytimeCap(p) }
func (anytimeTests) familyStop(int, float64) Stop { return Anytime{} }
func (anytimeTests) pairStop(int, float64) Stop   { return Anytime{} }
func (anytimeTests) powerHits() (int, int)        { return anytimePairHits, anytimeOrderingHits }
