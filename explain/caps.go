package explain

import "math"

// The caps of TIME's tests. Each family of m tests of features gets the
// nominal cap P = TIME.Permutations, or by default MinPermutations(m, α) =
// ⌈m/α⌉ − 1, the smallest with 1/(P + 1) ≤ α/m, so that one test alone can
// pass BH (99 for 10 features at α = 0.1); the choice of Tests turns it
// into the most draws of a test (capOf: P, or AnytimeCap(P) for anytime
// tests, 133 for P = 99). The small families below an important feature
// have caps chosen for power (pairDraws, windowOrderingDraws, with the
// hits of the tests' mode; docs/decisions.md, decision 25): by default
// the pair {ordering, window} PowerHits times MinPermutations (39 for one
// window at α = 0.1), the window orderings, TIME's ordering claim,
// OrderingHits times (99 for one window at α = 0.1), every such test
// stopping by Besag and Clifford's rule. A window-search probe makes at most P or
// DefaultPermutations draws. A within-window test of a window short enough
// that its exact test could just reach α/m is enumerated exactly even
// beyond its cap (orderingDraws).

// PowerHits is the number of exceedances k that sets the default cap of a
// test in an important feature's family {ordering, window 1, …, window
// k'} of m = k' + 1 tests, N = ⌈k·m/α⌉ − 1 (39 for one window at α = 0.1),
// each stopping by Besag and Clifford's rule. MinPermutations (k = 1)
// lets a test pass only with no draw as bad as the baseline, and a true
// window or ordering can tie with the baseline now and then: a feature
// whose window holds a few timesteps of small weight, or whose values
// repeat (a Markov chain holding its state), so that some permutations
// change little of what the model reads. A test with a hit probability q
// per draw then passes alone with probability P(Bin(N, q) < k): for q =
// 1/60 and one window, 0.73 at N = 19 (k = 1) against 0.86 at N = 39
// (k = 2). The anytime rule would not help here: its p-value is about
// twice Besag and Clifford's for a test with a few hits
// (docs/decisions.md, decision 16).
const PowerHits = 2

// OrderingHits is PowerHits for the window orderings, TIME's claim that
// the order of the values matters: a family of m significant windows caps
// each test at ⌈OrderingHits·m/α⌉ − 1 (99 for one window at α = 0.1). A
// within-window permutation that leaves the timesteps the model reads in
// place, or swaps equal values, is a hit; for a model that reads 2 of the
// 8 timesteps of its window (a hit in 1 of 56 draws) and a weak ordering
// effect besides, the test passes with probability P(Bin(99, q) < 10)
// (0.97 at q = 0.05) against P(Bin(19, q) < 2) (0.75) at PowerHits. A
// true ordering runs to its cap, so the power costs at most 80 more draws per claimed
// window than PowerHits; a false one stops at its tenth hit.
const OrderingHits = 10

// nominal returns Permutations, or MinPermutations(m, Alpha) when it is 0:
// the P whose smallest p-value 1/(P+1) every stopping rule reaches.
func (c TIME) nominal(m int) int {
	if c.Permutations > 0 {
		return c.Permutations
	}
	return MinPermutations(m, c.Alpha)
}

// maxDraws returns the draws cap of a p-value test in a family of m tests:
// the nominal cap as the tests' mode caps it.
func (c TIME) maxDraws(m int) int { return int(c.mode().capOf(float64(c.nominal(m)))) }

// pairDraws returns the draws cap of a test in an important feature's
// family {ordering, window 1, …, window k} of m = k + 1 tests, and
// windowOrderingDraws that of a test in its family of m window
// orderings: Permutations if set, else ⌈hits·m/α⌉ − 1 with the tests'
// mode's hits (PowerHits and OrderingHits by default); pairDraws as the
// mode caps such a test (capOf: the window orderings always stop by
// Besag and Clifford's rule).
func (c TIME) pairDraws(m int) int {
	pair, _ := c.mode().powerHits()
	return int(c.mode().capOf(float64(c.powerDraws(pair, m))))
}

// windowOrderingDraws returns the draws cap of a test in an important
// feature's family of m window orderings (see pairDraws).
func (c TIME) windowOrderingDraws(m int) int {
	_, ordering := c.mode().powerHits()
	return c.powerDraws(ordering, m)
}

// powerDraws returns Permutations if set, else ⌈hits·m/α⌉ − 1.
func (c TIME) powerDraws(hits, m int) int {
	if c.Permutations > 0 {
		return c.Permutations
	}
	return MinPermutations(hits*m, c.Alpha)
}

// orderingDraws returns the draws cap of a within-window test of w
// timesteps in a family of m tests whose cap is p. With the default caps,
// a window short enough that its ordering could just reach α/m (w ≤ w₀,
// the smallest w with 1/w! ≤ α/m: 4 for α/m in [1/24, 1/6)) is enumerated
// exactly, w! − 1 draws, even above the family cap: a sampled test of a
// short window would draw the identity ordering, a sure hit, too often
// (probability 1/24 per draw for w = 4, so a 4-timestep window capped at
// 9 draws would lose a third of its power).
func (c TIME) orderingDraws(p, m, w int) int {
	if c.Permutations > 0 {
		return p
	}
	if e, ok := exactDraws(w, exactDrawsOf(c.exactWidth(m))); ok {
		return max(p, e)
	}
	return p
}

// exactWidth returns w₀ of orderingDraws for a family of m tests: the
// smallest w with w! ≥ m/α (at most 20).
func (c TIME) exactWidth(m int) int {
	w0 := 1
	for f := 1; float64(f) < float64(m)/c.Alpha*(1-1e-12) && w0 < 20; f *= w0 {
		w0++
	}
	return w0
}

// exactDrawsOf returns w! − 1 (w ≤ 20).
func exactDrawsOf(w int) int {
	f, _ := factorial(w, math.MaxInt)
	return f - 1
}

// probeCap returns the draws cap of a window-search probe.
func (c TIME) probeCap() int {
	if c.Permutations > 0 {
		return c.Permutations
	}
	return DefaultPermutations
}

// familyStop returns the stopping rule of a p-value test with cap n in a
// Benjamini–Hochberg family of features.
func (c TIME) familyStop(n int) Stop { return c.mode().familyStop(n, c.Alpha) }

// pairStop returns the stopping rule of a test with cap n in an important
// feature's family {ordering, windows}, and orderingStop that of a window
// ordering.
func (c TIME) pairStop(n int) Stop { return c.mode().pairStop(n, c.Alpha) }

func (c TIME) orderingStop(n int) Stop { return c.mode().orderingStop(n, c.Alpha) }
