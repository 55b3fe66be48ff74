package explain

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// sequence is the p-value rule of one permutation test: it takes the
// test's draws in draw order, decides when the test stops and computes its
// score and p-value. It knows nothing of the model or the data: Engine.Run
// feeds it one number per draw, the mean perturbed loss.
//
// Notation. L̄ is the baseline mean loss, L̄_k the mean perturbed loss of
// draw k = 1, 2, …, and D_k = L̄_k − L̄. Draw k is a hit when
//
//	L̄_k ≤ L̄ + 1e−10,
//
// that is, when the perturbed data is at least as extreme as the data
// itself (perturbing did not make the loss worse; Besag and Clifford's
// "exceedance"); the slack tieTol = 1e−10 absorbs rounding, so a
// perturbation that leaves the predictions unchanged is always a hit. H_k
// is the number of hits among the first k draws. N is the cap (max): the
// test's Permutations, or n! − 1 for an exact test (below).
//
// Score and standard error, after k draws (k = Draws):
//
//	Score = (Σ_{i≤k} D_i) / k   (0 when k = 0),
//	SE    = s_k / √k            (0 when k < 2),
//
// s_k the sample standard deviation of D_1..D_k (Welford's update). The
// differences are summed, not the means, so Score is exactly 0 when no
// draw changes the loss.
//
// Fixed P (Stop{}): the test uses all N draws and
//
//	p = (1 + H_N) / (1 + N),
//
// the empirical p-value of Ojala and Garriga. The "1 +" counts the data
// itself among the equally likely arrangements, so p ≥ 1/(1 + N): the
// floor 1/(P + 1), 1/51 at the paper's P = 50. A test with N = 0 draws
// (the ordering of a window of one timestep) has p = 1.
//
// Sequential (Stop{Hits: h}, h ≥ 1; Besag and Clifford 1991): after each
// draw k, in draw order,
//
//   - if k = N the test ends at its cap with p = (1 + H_N)/(1 + N), as a
//     fixed test; this holds even when the h-th hit is draw N, which gives
//     (1 + h)/(1 + N), slightly above Besag and Clifford's h/N, so still
//     valid;
//   - else if H_k = h the test stops (Stopped) with p = h/k.
//
// So p takes the values h/k for k = h, …, N − 1 and (1 + j)/(1 + N) for
// j = 0, …, h; its floor is still 1/(1 + N), reached by a test that runs to
// its cap with no hit. Under the null hypothesis (the draws and the data
// exchangeable) with a continuous statistic, the baseline's quantile U is
// uniform and each draw is a hit with probability U, independently; over U,
//
//	P(p = h/k)         = h/(k(k+1))   for h ≤ k ≤ N − 1,
//	P(p = (1+j)/(1+N)) = 1/(N+1)      for 0 ≤ j < h,
//	P(p = (1+h)/(1+N)) = h/(N(N+1)),
//
// so P(p ≤ u) ≤ u for every u (tested in pvalue_test.go), with equality at
// the atoms (1+j)/(1+N), j < h, and h/k ≥ (1+h)/(1+N); at the stopped
// atoms h/k < (1+h)/(1+N) it falls short by h/(N(N+1)), and at (1+h)/(1+N)
// it is h/k₀, k₀ = ⌈h(N+1)/(1+h)⌉: the price of the cap rule above.
// Benjamini–Hochberg keeps its guarantee. A null test stops after about h·(1 + ln(N/h)) draws on
// average; only a test that ends up significant runs to its cap.
//
// Exact tests: when the permutation group of the block is small, n! − 1 ≤
// Permutations for n permuted elements (exactDraws), the test uses every
// non-identity permutation once, draw d being the permutation of
// lexicographic rank d + 1 (unrank), so N = n! − 1 and p = (1 + H_N)/n!:
// 1/2, 1/6 and 1/24 at best for n = 2, 3, 4. An exact test ignores Hits
// and never stops early: its draws are an enumeration, not a random
// sample, so no prefix of them is a valid test.
//
// Anytime (Stop{Anytime: true, Alpha: α, Family: f}; TIME's default,
// docs/decisions.md, decision 16): p = 1/max_{j≤k} M_j with M the mixture
// likelihood ratio of anytimeLogM, valid at any stopping time by Ville's
// inequality; the test never stops by itself, but Engine.Run settles the
// tests of each family between batches (settle), stopping a test once its
// BH decision at level α is that of BH on the p-values at the caps. Its
// first batch is 4 draws, later ones 2 growing by an eighth.
//
// Probes (Stop{Probe: true, Threshold: θ}): a score-only rule for TIME's
// window search, which only asks whether |Score| ≤ θ. After each draw k ≥
// MinDraws (default 2; Z default 2) the half-width is
//
//	w_k = t_{k−1}(Φ(Z)) · s_k/√k   (0 when k = 1),
//
// t_ν(q) the q-quantile of Student's t law with ν degrees of freedom and Φ
// the standard normal CDF (for Z = 2, the coverage of ±2 SE of a normal
// mean, 95.45%); the probe stops once [Score − w_k, Score + w_k] lies
// within [−θ, θ] or entirely outside it (above θ or below −θ). It also
// stops, unsettled, once it is futile (after k ≥ probeFutileMin = 10
// draws, with N the cap): when dist + 2·s_k·√(1/k − 1/N) < t_{N−1}(Φ(Z))·
// s_k/√N, dist the distance from Score to the nearer of ±θ, the interval
// at the cap would still straddle the threshold after a move of 2 SD of
// the score's remaining change; it then ends unsure, as at its cap
// (docs/decisions.md, decision 22). A probe's p-value is NaN: a rule that
// looks at the score gives no valid p-value.
//
// Group-sequential checks (Stop{Looks: K, Threshold: θ}; TIME's gap and
// trim checks): the test looks at its score after ⌈j·N/K⌉ draws, j = 1,
// …, K, and stops at look j once the interval Score ± t·SE with the
// coverage of ±c·√(K/j) SE (O'Brien and Fleming's shape, c = LookZ) lies
// entirely at or below θ or entirely above it. K = 3, c = 2.04 has the
// one-sided error at the threshold of a single look at ±2 SE.
//
// Batches (next): the engine evaluates draws in batches, and each test
// asks for as many next draws as its rule may need, computed from its own
// draws only (never from the number of workers), at most maxBatch = 256
// and at most the draws left before the cap. A fixed or exact test asks
// for all its remaining draws. A sequential test with H hits after I
// issued draws asks for c = min(max(e, h − H), max(I, h − H)) with e =
// ⌈(h − H)·I/H⌉ (the draws the missing hits need at the observed hit
// rate) if H > 0, else e = max(I, h − H): at least the missing hits, and
// at most doubling the draws so far. A probe asks for MinDraws − I draws
// until it has MinDraws, then for 1 draw at a time until it has
// probeSingle = 8 (most probes settle within a few draws), then for
// c = ⌊I/2⌋, unless the draws at which w_k would shrink to the gap
// g = ||Score| − θ|, ⌈(t·s/g)²⌉, are fewer than I + c, in which case it
// asks for the difference (at least 1). A group-sequential check asks for
// the draws up to its next look. Draws evaluated past the stopping point
// count in Evaluated but are never used.
//
// Caps (chosen by TIME, see TIME.Permutations): a family of m tests at FDR
// level α gets N = MinPermutations(m, α) = ⌈m/α⌉ − 1, the smallest cap
// with 1/(N + 1) ≤ α/m, so that one test alone can pass BH; and h =
// SequentialStop(α, N).Hits = min(StopHits, ⌊α·N⌋ + 1), after which hits a
// test can no longer reach p ≤ α. An ordering test of a window short
// enough that its exact test could just reach α/m is enumerated even
// beyond the cap (TIME.orderingDraws). TIME.Fixed selects Stop{} and N =
// Permutations (50 by default) for every test.
type sequence struct {
	stop Stop // the stopping rule, probe defaults filled in
	// logM is the running maximum of log M_k, the anytime test's mixture
	// likelihood ratio (Stop.Anytime; see anytimeLogM).
	logM  float64
	max   int     // N: the draws of a test that does not stop early
	exact bool    // the draws enumerate the group: never stop early
	base  float64 // L̄, the baseline mean loss

	used    int     // draws used, in draw order
	issued  int     // draws evaluated (≥ used)
	hits    int     // H: used draws not worse than the baseline
	sum     float64 // Σ D_k, in draw order
	mean    float64 // running mean of the D_k (Welford)
	m2      float64 // Σ squared deviations from the mean (Welford)
	done    bool    // no further draw is used
	stopped bool    // the stopping rule ended the test before its cap
}

// newSequence returns the rule of a test with stopping rule stop (already
// validated), cap max (N ≥ 0) and, if exact, an enumeration, against the
// baseline mean loss base.
func newSequence(stop Stop, max int, exact bool, base float64) sequence {
	if stop.Looks > 1 && stop.LookZ == 0 {
		stop.LookZ = DefaultLookZ
	}
	if stop.Probe {
		if stop.MinDraws == 0 {
			stop.MinDraws = DefaultProbeMinDraws
		}
		if stop.Z == 0 {
			stop.Z = DefaultProbeZ
		}
	}
	return sequence{stop: stop, max: max, exact: exact, base: base, done: max == 0}
}

// next returns the number of draws of the test's next batch (see Batches
// above); at least 1 unless the test is done.
func (s *sequence) next() int {
	rem := s.max - s.issued
	c := rem
	st := s.stop
	switch {
	case s.exact:
	case st.Hits > 0:
		// At least the missing hits are needed; at the observed hit rate,
		// about need·k/hits draws; the batch at most doubles the draws.
		need := st.Hits - s.hits
		est := max(s.issued, need)
		if s.hits > 0 {
			est = (need*s.issued + s.hits - 1) / s.hits
		}
		c = min(max(est, need), max(s.issued, need))
	case st.Anytime:
		// The family decides between batches: a first batch of
		// anytimeMinBatch (a test whose every draw ties settles after
		// it), then batches of 2 growing by an eighth, so that a test
		// runs at most an eighth (or 2 draws) past the point at which
		// it settles. The decisions do not depend on the batches (they
		// are those at the caps, see settle); only the draws do.
		c = max(2, s.issued/8)
		if s.issued == 0 {
			c = anytimeMinBatch
		}
	case st.Looks > 1:
		// Up to the next look.
		c = s.nextLook() - s.issued
	case st.Probe:
		if s.issued < st.MinDraws {
			c = st.MinDraws - s.issued
			break
		}
		// One draw at a time at first (most probes settle within a few
		// draws, and a draw past the stopping point is wasted), then
		// growing by half, or the draws at which the interval would
		// shrink to the distance between |score| and the threshold when
		// fewer.
		if s.issued < probeSingle {
			c = 1
			break
		}
		c = max(1, s.issued/2)
		if gap := math.Abs(math.Abs(s.mean) - st.Threshold); gap > 0 && s.used > 1 {
			sd := math.Sqrt(s.m2 / float64(s.used-1))
			need := math.Ceil(math.Pow(tQuantile(st.Z, s.used-1)*sd/gap, 2))
			if need < float64(s.issued+c) {
				c = max(1, int(need)-s.issued)
			}
		}
	}
	return min(c, rem, maxBatch)
}

// take records a batch of evaluated draws, the mean perturbed loss of each
// in draw order, and uses them until the test is done.
func (s *sequence) take(means []float64) {
	s.issued += len(means)
	for _, m := range means {
		s.add(m)
		if s.done {
			return
		}
	}
}

// add uses the test's next draw, whose mean perturbed loss is m, and
// applies the stopping rule.
func (s *sequence) add(m float64) {
	diff := m - s.base
	s.used++
	s.sum += diff
	delta := diff - s.mean
	s.mean += delta / float64(s.used)
	s.m2 += delta * (diff - s.mean)
	if m <= s.base+tieTol {
		s.hits++
	}
	if s.stop.Anytime {
		s.logM = max(s.logM, anytimeLogM(s.used, s.hits, s.max))
	}
	if s.used == s.max {
		s.done = true
		return
	}
	if s.exact {
		return
	}
	st := s.stop
	switch {
	case st.Hits > 0:
		s.stopped = s.hits >= st.Hits
	case st.Probe && s.used >= st.MinDraws:
		s.stopped = s.settled(st.Z) || s.futile()
	case st.Looks > 1 && s.atLook():
		s.stopped = s.crossed()
	}
	s.done = s.stopped
}

// settled reports whether the interval Score ± t·SE, with the coverage of
// ±z standard errors (t the Student-t quantile with used − 1 degrees of
// freedom), lies within [−θ, θ] or entirely outside it: the comparison of
// |Score| with the threshold θ is then settled.
func (s *sequence) settled(z float64) bool {
	half := 0.0
	if s.used > 1 {
		half = tQuantile(z, s.used-1) * math.Sqrt(s.m2/float64(s.used-1)/float64(s.used))
	}
	lo, hi, thr := s.mean-half, s.mean+half, s.stop.Threshold
	return (lo >= -thr && hi <= thr) || lo > thr || hi < -thr
}

// futile reports whether a probe, after at least probeFutileMin draws, is
// very unlikely to settle by its cap (docs/decisions.md, decision 22): the
// interval it would have at the cap, t_{N−1}·s/√N about the score, would
// still contain the nearer of ±θ even if the score moved probeFutileZ
// standard deviations of its remaining change, s·√(1/k − 1/N), away from
// it. The probe then ends unsure, as it would at its cap.
func (s *sequence) futile() bool {
	k, n := s.used, s.max
	if k < probeFutileMin || k >= n {
		return false
	}
	sd := math.Sqrt(s.m2 / float64(k-1))
	if sd == 0 {
		return false
	}
	thr := s.stop.Threshold
	dist := min(math.Abs(s.mean-thr), math.Abs(s.mean+thr))
	halfCap := tQuantile(s.stop.Z, n-1) * sd / math.Sqrt(float64(n))
	move := probeFutileZ * sd * math.Sqrt(1/float64(k)-1/float64(n))
	return dist+move < halfCap
}

// nextLook returns the draws at the next look of a test with Looks = K > 1
// and cap N: the smallest ⌈j·N/K⌉, j = 1, …, K, above the draws used.
func (s *sequence) nextLook() int {
	k := s.stop.Looks
	for j := 1; j < k; j++ {
		if at := (j*s.max + k - 1) / k; at > s.used {
			return at
		}
	}
	return s.max
}

// atLook reports whether the draws used are at an interim look.
func (s *sequence) atLook() bool {
	k := s.stop.Looks
	for j := 1; j < k; j++ {
		if (j*s.max+k-1)/k == s.used {
			return true
		}
	}
	return false
}

// crossed reports whether a test with Looks, at a look, has crossed its
// boundary (LookBoundary): its interval lies entirely at or below the
// threshold, or entirely above it.
func (s *sequence) crossed() bool {
	if s.used < 2 {
		return false
	}
	half := tQuantile(LookBoundary(s.stop, s.max, s.used), s.used-1) * math.Sqrt(s.m2/float64(s.used-1)/float64(s.used))
	return s.mean+half <= s.stop.Threshold || s.mean-half > s.stop.Threshold
}

// LookBoundary returns the boundary, in standard errors, of a test with
// Looks = K > 1 (Stop.Looks) and cap n after draws draws: c·√(K/j) at
// look j (the first whose ⌈j·n/K⌉ is at least draws; K at the cap), c =
// LookZ (O'Brien and Fleming's shape). For Looks ≤ 1 it returns Z, or
// DefaultProbeZ when Z is 0.
func LookBoundary(s Stop, n, draws int) float64 {
	if s.Looks <= 1 {
		if s.Z == 0 {
			return DefaultProbeZ
		}
		return s.Z
	}
	c := s.LookZ
	if c == 0 {
		c = DefaultLookZ
	}
	j := 1
	for j < s.Looks && (j*n+s.Looks-1)/s.Looks < draws {
		j++
	}
	return c * math.Sqrt(float64(s.Looks)/float64(j))
}

// result summarises the draws used.
func (s *sequence) result() TestResult {
	res := TestResult{Draws: s.used, Evaluated: s.issued, Max: s.max, Stopped: s.stopped, PValue: 1}
	if s.used > 0 {
		// Summing the differences (not the means) makes the score exactly
		// 0 when no draw changes the loss.
		res.Score = s.sum / float64(s.used)
		res.PValue = float64(1+s.hits) / float64(1+s.used)
	}
	if s.used > 1 {
		res.SE = math.Sqrt(s.m2 / float64(s.used-1) / float64(s.used))
	}
	switch {
	case s.stop.Probe, s.stop.Looks > 1:
		res.PValue = math.NaN()
	case s.stop.Anytime && !s.exact:
		res.PValue = s.upper()
	case s.stopped:
		res.PValue = float64(s.hits) / float64(s.used)
	}
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

// Probe scheduling (docs/decisions.md, decision 22): a probe takes its
// first probeSingle draws one at a time; it may stop as futile after
// probeFutileMin draws, when the score would have to move probeFutileZ
// standard deviations of its remaining change to settle by the cap.
const (
	probeSingle    = 8
	probeFutileMin = 10
	probeFutileZ   = 2.0
)

// Stop is a sequential stopping rule. The zero value never stops a test
// early. At most one of Hits and Probe may be set.
//
// Stopping is decided in draw order: draws are evaluated in batches for
// throughput, but a test that stops at draw k uses draws 0..k−1 only, and
// the batches depend on the test's own draws alone, never on the number of
// workers. A batch may evaluate a few draws past the stopping point; they
// are counted in TestResult.Evaluated (and in the Engine's accounting) but
// never used.
type Stop struct {
	// Hits, when positive, is h of the sequential Monte Carlo p-value of
	// Besag and Clifford (1991): the test stops at the first draw k at
	// which h draws have been not worse than the baseline (a "hit": mean
	// perturbed loss ≤ baseline mean loss + 1e−10), and its p-value is
	// h/k. A test that reaches Permutations draws with fewer hits has the
	// usual p-value (1 + hits)/(1 + Permutations). Under the null
	// hypothesis both are valid p-values: P(p ≤ u) ≤ u at every u.
	Hits int
	// Probe selects a score-only rule for a test that only compares its
	// score with Threshold (TIME's window search): after at least MinDraws
	// draws, the test stops once the interval score ± Z·SE (SE the
	// standard error of the mean of the draws) lies within [−Threshold,
	// Threshold] or entirely outside it, so that the comparison
	// |score| ≤ Threshold is settled. A probe's PValue is NaN: a stopping
	// rule that looks at the score does not give a valid p-value.
	Probe bool
	// Threshold is the probe's threshold, at least 0.
	Threshold float64
	// MinDraws is the probe's smallest number of draws; 0 means
	// DefaultProbeMinDraws.
	MinDraws int
	// Z is the half-width of the probe's interval in standard errors; 0
	// means DefaultProbeZ.
	Z float64
	// Looks, when above 1, selects a score-only one-sided test with a
	// group-sequential boundary: the test compares its score with
	// Threshold at Looks = K equally spaced looks, after ⌈j·N/K⌉ draws
	// (j = 1, …, K; N the cap), and stops at look j once the interval
	// Score ± t·SE with the coverage of ±c·√(K/j) standard errors
	// (LookBoundary; c = LookZ) lies entirely at or below Threshold or
	// entirely above it. Its PValue is NaN. TIME's gap and trim checks use
	// it (docs/decisions.md, decision 22).
	Looks int
	// LookZ is c of Looks, in standard errors; 0 means DefaultLookZ.
	LookZ float64
	// Anytime selects the anytime-valid p-value and the family stopping
	// rule (docs/decisions.md, decision 16): the test's p-value is
	// 1/max_{k≤Draws} M_k, M the mixture likelihood ratio of anytimeLogM,
	// and the test stops as soon as its Benjamini–Hochberg decision at
	// level Alpha, within the tests of the same Run with the same Family
	// that are also Anytime, is the one BH would make if every test of the
	// family ran to its cap (see settle). An exact test of the family never
	// stops early, but its bounds take part in the family's decisions.
	Anytime bool
	// Alpha is the BH level of an Anytime test's family, in (0, 1).
	Alpha float64
	// Family names an Anytime test's family within one Run.
	Family string
}

// Defaults of the probe stopping rule.
const (
	// DefaultProbeMinDraws is the smallest number of draws of a probe, the
	// fewest that estimate a standard deviation.
	DefaultProbeMinDraws = 2
	// DefaultProbeZ sets the coverage of a probe's interval to that of ±2
	// standard errors of a normal mean, 95.45%.
	DefaultProbeZ = 2.0
	// DefaultLooks and DefaultLookZ are the looks and the boundary
	// constant of TIME's gap and trim checks (Stop.Looks): O'Brien and
	// Fleming's boundary 3.53, 2.50 and 2.04 SE at 1/3, 2/3 and all of
	// the draws, whose one-sided error for a normal mean at the
	// threshold is that of a single look at 2 SE, 1 − Φ(2) = 2.28%
	// (2.277% by 4·10⁶ simulated Brownian paths, SE 0.008%).
	DefaultLooks = 3
	DefaultLookZ = 2.04
)

// validate returns an error, to follow the name of the test, for an
// invalid stopping rule.
func (s Stop) validate() error {
	switch {
	case s.Hits < 0:
		return fmt.Errorf("stops after %d hits, need at least 0", s.Hits)
	case s.Hits > 0 && s.Probe:
		return fmt.Errorf("sets both a hit count and a probe rule")
	case s.Probe && !(s.Threshold >= 0 && !math.IsInf(s.Threshold, 1)):
		return fmt.Errorf("has probe threshold %v, need a finite value ≥ 0", s.Threshold)
	case s.MinDraws < 0:
		return fmt.Errorf("has probe minimum %d draws, need at least 0", s.MinDraws)
	case !(s.Z >= 0 && !math.IsInf(s.Z, 1)):
		return fmt.Errorf("has probe z %v, need a finite value ≥ 0", s.Z)
	case s.Looks < 0:
		return fmt.Errorf("has %d looks, need at least 0", s.Looks)
	case s.Looks > 1 && (s.Hits > 0 || s.Probe || s.Anytime):
		return fmt.Errorf("sets looks with a hit count, a probe or the anytime rule")
	case s.Looks > 1 && !(s.Threshold >= 0 && !math.IsInf(s.Threshold, 1)):
		return fmt.Errorf("has threshold %v, need a finite value ≥ 0", s.Threshold)
	case !(s.LookZ >= 0 && !math.IsInf(s.LookZ, 1)):
		return fmt.Errorf("has look z %v, need a finite value ≥ 0", s.LookZ)
	case s.Anytime && (s.Hits > 0 || s.Probe):
		return fmt.Errorf("sets the anytime rule with a hit count or a probe rule")
	case s.Anytime && !(s.Alpha > 0 && s.Alpha < 1):
		return fmt.Errorf("has anytime family level %v outside (0, 1)", s.Alpha)
	}
	return nil
}

// StopHits is the largest h of a sequential test (SequentialStop).
const StopHits = 10

// MinPermutations returns the smallest number of permutations P at which a
// single test of a family of m tests can pass Benjamini–Hochberg at level
// alpha: the smallest p-value of a permutation test, 1/(P+1), must be at
// most alpha/m, so P = ⌈m/alpha⌉ − 1 (99 for 10 tests at 0.1). With fewer,
// BH rejects nothing unless several tests reach the smallest p-value
// together. It returns at least 1 for m ≥ 1 and alpha in (0, 1).
func MinPermutations(m int, alpha float64) int {
	// The slack keeps ⌈10/0.1⌉ at 100 despite 0.1's rounding.
	return max(1, int(math.Ceil(float64(m)/alpha-1e-9))-1)
}

// SequentialStop returns the stopping rule of a sequential test of at most
// p draws whose p-value will be compared with thresholds of at most alpha
// (every Benjamini–Hochberg threshold of a family at level alpha is at most
// alpha): Stop{Hits: h} with
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
func SequentialStop(alpha float64, p int) Stop {
	return Stop{Hits: min(StopHits, int(math.Floor(alpha*float64(p)+1e-9))+1)}
}

// tQuantile returns the quantile of Student's t law with df degrees of
// freedom at the probability Φ(z) of the standard normal law: the
// half-width, in standard errors, of the interval whose coverage is that of
// ±z standard errors for normal data (99.73% for z = 3).
// The probe rule asks for it after every draw, with the same z and a
// growing df, so values are kept (an inverse incomplete beta each
// otherwise).
func tQuantile(z float64, df int) float64 {
	key := tKey{z, df}
	if q, ok := tQuantiles.Load(key); ok {
		return q.(float64)
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(distuv.UnitNormal.CDF(z))
	tQuantiles.Store(key, q)
	return q
}

type tKey struct {
	z  float64
	df int
}

// tQuantiles caches tQuantile by (z, df); both stay small in practice (the
// probe's z and at most its cap of draws).
var tQuantiles sync.Map

// exactDraws returns n! − 1 and true if n! − 1 ≤ limit, or 0 and false
// otherwise. It does not overflow for any limit.
func exactDraws(n, limit int) (int, bool) {
	if limit == math.MaxInt {
		limit-- // n! ≤ MaxInt is then still decided exactly below
	}
	f, ok := factorial(n, limit+1)
	if !ok {
		return 0, false
	}
	return f - 1, true
}

// factorial returns n! and true if n! ≤ limit, or 0 and false otherwise.
// It never overflows.
func factorial(n, limit int) (int, bool) {
	f := 1
	for k := 2; k <= n; k++ {
		if f > limit/k {
			return 0, false
		}
		f *= k
	}
	if f > limit {
		return 0, false
	}
	return f, true
}

// unrank writes into perm the permutation of 0..len(perm)-1 of lexicographic
// rank r (rank 0 is the identity), using the factorial number system. r must
// be less than len(perm)!.
func unrank(perm []int, r int) {
	n := len(perm)
	for i := range perm {
		perm[i] = i
	}
	f := 1
	for k := 2; k < n; k++ {
		f *= k
	}
	// perm[i:] holds the unused elements in ascending order.
	for i := 0; i < n-1; i++ {
		q := r / f
		r %= f
		// Move element i+q to position i, shifting the rest right.
		v := perm[i+q]
		copy(perm[i+1:i+q+1], perm[i:i+q])
		perm[i] = v
		f /= n - 1 - i
	}
}

// anytimeMinBatch is the first batch of an anytime test and the smallest
// of later ones.
const anytimeMinBatch = 4

// anytimeLogM returns log M_k of an anytime test with h hits in k draws
// and cap n (docs/decisions.md, decision 16):
//
//	M_k = B(h + 1, k − h + b) / (B(1, b) · B(h + 1, k − h + 1)),  b = n,
//
// B the beta function, b = anytimePrior(n) = 3n + 4. Under the null hypothesis the hits of a
// permutation test (draws not worse than the data) are exchangeable with
// the data's own rank: a sequence of k draws with h hits has probability
// B(h + 1, k − h + 1) (Pólya's urn, the hit rate U uniform). The numerator
// is its probability when U has the Beta(1, b) law, of mean 1/(1 + b):
// a test whose hits are rare. M is the ratio of the two, a nonnegative
// martingale of mean 1 under the null, so by Ville's inequality
// P(max_k M_k ≥ 1/u) ≤ u and p = 1/max_k M_k is valid at any stopping
// time, however chosen. Ties counted as hits only lower M (M decreases in
// h at fixed k), so ties keep it valid. M_0 = 1; each miss raises M
// (b > 1) and each hit lowers it. With no hit in k draws M_k =
// (k+1)·b/(k+b): about k + 1 while k ≪ b (as good as the fixed test's
// 1/(k+1)), and (3n + 4)/4 at the cap: the floor of the p-value is
// 4/(3n + 4), so a cap n = ⌈4(m/α − 1)/3⌉ (AnytimePermutations), a third
// above MinPermutations, lets one test of m pass BH. A larger b would
// bring the floor nearer 1/(n+1) but make a single hit cost more.
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

// upper returns the test's current p-value, 1/max M, an upper bound of
// its p-value at the cap (for an exact test, the p-value of the
// enumeration if every remaining draw is a hit).
func (s *sequence) upper() float64 {
	if s.exact {
		return float64(1+s.hits+s.max-s.used) / float64(1+s.max)
	}
	return math.Min(1, math.Exp(-s.logM))
}

// lower returns a lower bound of the test's p-value at its cap: the
// p-value if every remaining draw is a miss (misses raise M, so the
// largest M is then M at the cap).
func (s *sequence) lower() float64 {
	if s.exact {
		return float64(1+s.hits) / float64(1+s.max)
	}
	best := max(s.logM, anytimeLogM(s.max, s.hits, s.max))
	return math.Min(1, math.Exp(-best))
}

// settle applies the family stopping rule to the anytime tests of one
// family at level alpha, between batches: with lo and hi the numbers of
// BH rejections of the upper and of the lower bounds of every test's
// p-value at its cap (BH is monotone, so lo ≤ R* ≤ hi, R* the rejections
// of BH applied to the p-values at the caps p*), an unfinished test is
// settled as rejected when upper ≤ α·lo/m (then p* ≤ α·R*/m) and as not
// rejected when lower > α·hi/m (then p* > α·R*/m), and is then done. A
// finished test keeps the bounds it had when it finished. The
// decisions of BH on the reported p-values are therefore exactly those of
// BH on p*: no error is added to that of the tests run to their caps
// (docs/decisions.md, decision 16). An exact test is never stopped.
func settle(seqs []*sequence, alpha float64) {
	m := len(seqs)
	up := make([]float64, m)
	lo := make([]float64, m)
	for i, s := range seqs {
		up[i], lo[i] = s.upper(), s.lower()
	}
	rLo, rHi := bhCount(up, alpha), bhCount(lo, alpha)
	for i, s := range seqs {
		if s.done || s.exact {
			continue
		}
		// The slack keeps rounding of the bounds (1/M, the thresholds) from
		// settling a test whose bound is at its threshold.
		if up[i] <= alpha*float64(rLo)/float64(m)*(1-settleSlack) || lo[i] > alpha*float64(rHi)/float64(m)*(1+settleSlack) {
			s.done, s.stopped = true, s.used < s.max
		}
	}
}

// settleSlack is the relative slack of settle's comparisons.
const settleSlack = 1e-9

// bhCount returns the number of rejections of Benjamini–Hochberg at level
// alpha (internal/fdr, the rule of TIME's families).
func bhCount(p []float64, alpha float64) int {
	rej, _ := bh(p, alpha)
	n := 0
	for _, r := range rej {
		if r {
			n++
		}
	}
	return n
}

// anytimePrior returns b of anytimeLogM for a test of cap n: 3n + 4.
func anytimePrior(n int) float64 { return 3*float64(n) + 4 }

// AnytimeCap returns the cap of an anytime test that reaches the smallest
// p-value of a fixed test of p draws: the smallest n whose floor
// 4/(3n + 4) is below 1/(p + 1), ⌊4p/3⌋ + 1 (133 for p = 99). The floor is
// strictly below so that rounding in 1/M cannot lift a test with no hit
// above a BH threshold of exactly 1/(p + 1).
func AnytimeCap(p int) int { return 4*p/3 + 1 }

// AnytimePermutations returns the cap of an anytime test in a family of m
// tests at level alpha, AnytimeCap(MinPermutations(m, alpha)): 133 for 10
// tests at 0.1, 13 for one. Like MinPermutations it needs m/alpha to fit
// an int (TIME's cost guard checks it first).
func AnytimePermutations(m int, alpha float64) int {
	return AnytimeCap(MinPermutations(m, alpha))
}
