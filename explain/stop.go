package explain

import (
	"math"
)

// A Stop is a stopping rule of a permutation test: it decides, draw by
// draw and in draw order, whether the test ends before its cap, how many
// draws it asks for next, and what p-value it reports. The rules are
// Fixed (the zero rule: every draw, the paper's test), BesagClifford
// (Besag and Clifford's sequential p-value), Anytime (anytime-valid
// p-values stopped by their family's Benjamini–Hochberg decision), Probe
// (a score compared with a threshold, TIME's window search) and Looks (a
// group-sequential check of a score against a threshold, TIME's gap and
// trim checks); each is one file, with its maths. A nil Stop in a Test
// means Fixed.
//
// Stopping is decided in draw order: draws are evaluated in batches for
// throughput, but a test that stops at draw k uses draws 0..k−1 only, and
// the batches depend on the test's own draws alone, never on the number
// of workers. A batch may evaluate a few draws past the stopping point;
// they are counted in TestResult.Evaluated (and in the Engine's
// accounting) but never used.
//
// Notation shared by the rules. L̄ is the baseline mean loss, L̄_k the
// mean perturbed loss of draw k = 1, 2, …, and D_k = L̄_k − L̄. Draw k is
// a hit when
//
//	L̄_k ≤ L̄ + 1e−10,
//
// that is, when perturbing did not make the loss worse (Besag and
// Clifford's "exceedance"); the slack tieTol = 1e−10 absorbs rounding, so
// a perturbation that leaves the predictions unchanged is always a hit.
// H_k is the number of hits among the first k draws and N the cap: the
// test's Permutations, or n! − 1 for an exact test. After k draws the
// score and its standard error are
//
//	Score = (Σ_{i≤k} D_i) / k   (0 when k = 0),
//	SE    = s_k / √k            (0 when k < 2),
//
// s_k the sample standard deviation of D_1..D_k (Welford's update). The
// differences are summed, not the means, so Score is exactly 0 when no
// draw changes the loss.
//
// Exact tests: when the permutation group of the block is small, n! − 1 ≤
// Permutations for n permuted elements (exactDraws), the test uses every
// non-identity permutation once, draw d being the permutation of
// lexicographic rank d + 1 (unrank), so N = n! − 1 and p = (1 + H_N)/n!:
// 1/2, 1/6 and 1/24 at best for n = 2, 3, 4. An exact test asks for all
// its draws at once and never stops early, whatever its rule: its draws
// are an enumeration, not a random sample, so no prefix of them is a
// valid test.
type Stop interface {
	// validate returns an error, to follow the name of the test, for an
	// invalid rule.
	validate() error
	// start returns the rule's state for one test.
	start() stopper
}

// stopper is the state of a stopping rule for one test. The sequence that
// drives it keeps the draws' tally and calls it in draw order.
type stopper interface {
	// batch returns the number of draws the test asks for next, at least
	// 1 (the sequence then bounds it by the draws left and maxBatch).
	batch(t *tally) int
	// add is called after every draw the tally has counted, and reports
	// whether the test stops there. Its answer is ignored for an exact
	// test and at the cap, which end the test anyway.
	add(t *tally) bool
	// pValue returns the test's p-value: stopped says that the rule ended
	// it before its cap.
	pValue(t *tally, stopped bool) float64
}

// tally is what a test's draws have shown so far, in draw order.
type tally struct {
	max   int     // N: the draws of a test that does not stop early
	exact bool    // the draws enumerate the group
	base  float64 // L̄, the baseline mean loss

	used   int     // draws used
	issued int     // draws evaluated (≥ used)
	hits   int     // H: used draws not worse than the baseline
	sum    float64 // Σ D_k
	mean   float64 // running mean of the D_k (Welford)
	m2     float64 // Σ squared deviations from the mean (Welford)
}

// add counts a draw whose mean perturbed loss is m.
func (t *tally) add(m float64) {
	diff := m - t.base
	t.used++
	t.sum += diff
	delta := diff - t.mean
	t.mean += delta / float64(t.used)
	t.m2 += delta * (diff - t.mean)
	if m <= t.base+tieTol {
		t.hits++
	}
}

// sd returns the sample standard deviation of the differences (0 with
// fewer than 2 draws).
func (t *tally) sd() float64 {
	if t.used < 2 {
		return 0
	}
	return math.Sqrt(t.m2 / float64(t.used-1))
}

// se returns the standard error of the score (0 with fewer than 2 draws).
func (t *tally) se() float64 {
	if t.used < 2 {
		return 0
	}
	return math.Sqrt(t.m2 / float64(t.used-1) / float64(t.used))
}

// pValue returns the empirical p-value of the draws used, (1 + H)/(1 +
// k), the rule of a test that runs to its cap (Ojala and Garriga): the
// "1 +" counts the data itself among the equally likely arrangements, so
// p ≥ 1/(1 + N), and a test with no draw has p = 1.
func (t *tally) pValue() float64 { return float64(1+t.hits) / float64(1+t.used) }

// sequence drives one test: it feeds the test's draws, in draw order, to
// its tally and its stopping rule, and knows nothing of the model or the
// data (Engine.Run gives it one number per draw, the mean perturbed loss).
type sequence struct {
	tally
	fresh   int // the draws evaluated for this test alone (TestResult.New)
	rule    stopper
	done    bool // no further draw is used
	stopped bool // the rule ended the test before its cap
}

// newSequence returns the sequence of a test with stopping rule stop
// (validated; nil is Fixed), cap max (N ≥ 0) and, if exact, an
// enumeration, against the baseline mean loss base.
func newSequence(stop Stop, max int, exact bool, base float64) sequence {
	if stop == nil {
		stop = Fixed{}
	}
	return sequence{tally: tally{max: max, exact: exact, base: base}, rule: stop.start(), done: max == 0}
}

// next returns the number of draws of the test's next batch: all that
// remain for an exact test, else what its rule asks for, at most the
// draws left before the cap and at most maxBatch; at least 1 unless the
// test is done.
func (s *sequence) next() int {
	rem := s.max - s.issued
	c := rem
	if !s.exact {
		c = s.rule.batch(&s.tally)
	}
	return min(c, rem, maxBatch)
}

// take records a batch of evaluated draws, the mean perturbed losses of
// each in draw order (stride per draw, the test's at offset at), and uses
// them until the test is done.
func (s *sequence) take(means []float64, stride, at int) {
	n := len(means) / stride
	s.issued += n
	for d := range n {
		s.add(means[d*stride+at])
		if s.done {
			return
		}
	}
}

// add uses the test's next draw, whose mean perturbed loss is m, and
// applies the stopping rule.
func (s *sequence) add(m float64) {
	s.tally.add(m)
	stop := s.rule.add(&s.tally)
	if s.used == s.max {
		s.done = true
		return
	}
	if s.exact {
		return
	}
	s.stopped = stop
	s.done = stop
}

// result summarises the draws used.
func (s *sequence) result() TestResult {
	res := TestResult{Draws: s.used, Evaluated: s.issued, New: s.fresh, Max: s.max, Stopped: s.stopped, PValue: 1}
	if s.used > 0 {
		// Summing the differences (not the means) makes the score exactly
		// 0 when no draw changes the loss.
		res.Score = s.sum / float64(s.used)
	}
	res.SE = s.se()
	res.PValue = s.rule.pValue(&s.tally, s.stopped)
	return res
}

// tieTol is the slack of the empirical p-value: a draw whose mean loss
// exceeds the baseline by no more than this counts as "not worse", so
// perturbations that leave the predictions unchanged give p = 1 despite
// rounding.
const tieTol = 1e-10

// maxBatch is the largest number of draws of one test evaluated in one
// batch. It bounds the memory of Run independently of Permutations.
const maxBatch = 256

// finite reports whether v is a finite value ≥ 0, the range of a
// threshold or a number of standard errors.
func finite(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }
