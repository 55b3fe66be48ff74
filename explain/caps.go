package explain

import "math"

// The caps of TIME's tests. Each family of m tests gets the nominal cap
// P = TIME.Permutations, or by default MinPermutations(m, α) = ⌈m/α⌉ − 1,
// the smallest with 1/(P + 1) ≤ α/m, so that one test alone can pass BH
// (99 for 10 features at α = 0.1, 19 for the pair {ordering, window}); the
// choice of Tests turns it into the most draws of a test (capOf: P, or
// AnytimeCap(P) for anytime tests, 133 for P = 99). The window orderings,
// TIME's ordering claim, get PowerHits times that (29 for one window at
// α = 0.1), and a window-search probe at most P or DefaultPermutations.
// A within-window test of a window short enough that its exact test could
// just reach α/m is enumerated exactly even beyond its cap
// (orderingDraws).

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

// familyDraws returns the draws cap of a test in a window-ordering family
// of m tests: Permutations if set, else ⌈PowerHits·m/α⌉ − 1.
func (c TIME) familyDraws(m int) int {
	if c.Permutations > 0 {
		return c.Permutations
	}
	return MinPermutations(PowerHits*m, c.Alpha)
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
// Benjamini–Hochberg family.
func (c TIME) familyStop(n int) Stop { return c.mode().familyStop(n, c.Alpha) }
