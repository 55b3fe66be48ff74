package explain

import (
	"fmt"
	"math"
)

// BesagClifford is the sequential Monte Carlo p-value of Besag and
// Clifford (1991): after each draw k, in draw order,
//
//   - if k = N the test ends at its cap with p = (1 + H_N)/(1 + N), as a
//     fixed test; this holds even when the h-th hit is draw N, which gives
//     (1 + h)/(1 + N), slightly above Besag and Clifford's h/N, so still
//     valid;
//   - else if H_k = h the test stops (Stopped) with p = h/k.
//
// So p takes the values h/k for k = h, …, N − 1 and (1 + j)/(1 + N) for
// j = 0, …, h; its floor is still 1/(1 + N), reached by a test that runs
// to its cap with no hit. Under the null hypothesis (the draws and the
// data exchangeable) with a continuous statistic, the baseline's quantile
// U is uniform and each draw is a hit with probability U, independently;
// over U,
//
//	P(p = h/k)         = h/(k(k+1))   for h ≤ k ≤ N − 1,
//	P(p = (1+j)/(1+N)) = 1/(N+1)      for 0 ≤ j < h,
//	P(p = (1+h)/(1+N)) = h/(N(N+1)),
//
// so P(p ≤ u) ≤ u for every u (tested in pvalue_test.go), with equality at
// the atoms (1+j)/(1+N), j < h, and h/k ≥ (1+h)/(1+N); at the stopped
// atoms h/k < (1+h)/(1+N) it falls short by h/(N(N+1)), and at (1+h)/(1+N)
// it is h/k₀, k₀ = ⌈h(N+1)/(1+h)⌉: the price of the cap rule above.
// Benjamini–Hochberg keeps its guarantee. A null test stops after about
// h·(1 + ln(N/h)) draws on average; only a test that ends up significant
// runs to its cap.
//
// Batches: a test with H hits after I issued draws asks for c = min(max(e,
// h − H), max(I, h − H)) with e = ⌈(h − H)·I/H⌉ (the draws the missing
// hits need at the observed hit rate) if H > 0, else e = max(I, h − H):
// at least the missing hits, and at most doubling the draws so far.
type BesagClifford struct {
	// Hits is h, at least 1: the test stops at the first draw at which h
	// draws have been hits.
	Hits int
}

func (b BesagClifford) validate() error {
	if b.Hits < 1 {
		return fmt.Errorf("stops after %d hits, need at least 1", b.Hits)
	}
	return nil
}

func (b BesagClifford) start() stopper { return b }

func (b BesagClifford) batch(t *tally) int {
	need := b.Hits - t.hits
	est := max(t.issued, need)
	if t.hits > 0 {
		est = (need*t.issued + t.hits - 1) / t.hits
	}
	return min(max(est, need), max(t.issued, need))
}

func (b BesagClifford) add(t *tally) bool { return t.hits >= b.Hits }

func (b BesagClifford) pValue(t *tally, stopped bool) float64 {
	if stopped {
		return float64(t.hits) / float64(t.used)
	}
	return t.pValue()
}

// StopHits is the largest h of a sequential test (SequentialStop).
const StopHits = 10

// SequentialStop returns the stopping rule of a sequential test of at most
// p draws whose p-value will be compared with thresholds of at most alpha
// (every Benjamini–Hochberg threshold of a family at level alpha is at most
// alpha): BesagClifford{Hits: h} with
//
//	h = min(StopHits, ⌊alpha·p⌋ + 1).
//
// h = 10 is Besag and Clifford's suggestion: the p-value h/k of a test
// stopped at draw k is then known to about 1/√h ≈ 30% relative error,
// plenty for comparisons with BH thresholds, and a null test stops after
// about h/p draws. The bound ⌊alpha·p⌋ + 1 stops a test as soon as it can
// no longer reach p ≤ alpha: a test stopped at draw k ≤ p has p-value h/k >
// alpha, and the fixed test with the same p draws would have had at least
// h + 1 hits out of p + 1, also a p-value above alpha. Whenever
// ⌊alpha·p⌋ + 1 ≤ StopHits (p ≤ 99 at alpha = 0.1) the sequential test
// therefore rejects exactly when the fixed test with the same draws does:
// it only saves draws.
func SequentialStop(alpha float64, p int) BesagClifford {
	return BesagClifford{Hits: min(StopHits, int(math.Floor(alpha*float64(p)+1e-9))+1)}
}

// besagCliffordTests is BesagCliffordTests: every p-value test stops by
// SequentialStop, with the caps MinPermutations(m, α) of its family.
type besagCliffordTests struct{ sequentialSearch }

func (besagCliffordTests) permutations() int                    { return 0 }
func (besagCliffordTests) capOf(p float64) float64              { return p }
func (besagCliffordTests) familyStop(n int, alpha float64) Stop { return SequentialStop(alpha, n) }
func (besagCliffordTests) pairStop(n int, alpha float64) Stop   { return SequentialStop(alpha, n) }
func (besagCliffordTests) powerHits() (int, int)                { return PowerHits, OrderingHits }
