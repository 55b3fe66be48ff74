package explain

import (
	"context"
	"math"
	"strconv"

	"github.com/tempora-dev/tempora"
)

// WindowRule selects how TIME's window search judges a probe and what TIME
// reports for an important feature whose window is not significant.
type WindowRule int

const (
	// Verified, the default, judges a probe (the prefix or suffix that a
	// window leaves out) by the size of its effect, as the paper does:
	// the region belongs in the window when |Score| > θ·|overall score|.
	// Permuting a region the model reads can lower the loss of a finite
	// test set as well as raise it (a signed effect), and either way the
	// model reads it. A probe is sure when its interval, |Score| ± t·SE
	// (t the Student-t quantile of DefaultProbeZ), lies on one side of
	// θ·|overall|. With several windows (TIME.Windows > 1), a region is
	// left out of a window only when it is verified: a check of the
	// region as a whole finds it surely below the threshold (split.go),
	// so a region within noise of the threshold stays in. An important
	// feature whose window is not significant gets no timestep cells:
	// TIME claims the feature, not where it acts.
	Verified WindowRule = iota
	// PaperRule is the rule of the paper (Sood and Craven): a probe is
	// important when |Score| > θ·|overall score|, a candidate gap is
	// checked with one look at its cap, and an important feature whose
	// window is not significant gets its overall score at every
	// timestep.
	PaperRule
)

// String returns "verified" or "paper".
func (r WindowRule) String() string {
	switch r {
	case Verified:
		return "verified"
	case PaperRule:
		return "paper"
	}
	return "WindowRule(" + strconv.Itoa(int(r)) + ")"
}

// ParseWindowRule returns the rule named s ("verified" or "paper").
func ParseWindowRule(s string) (WindowRule, error) {
	for _, r := range []WindowRule{Verified, PaperRule} {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, errWindowRule(s)
}

type errWindowRule string

func (e errWindowRule) Error() string {
	return "explain: unknown window rule " + strconv.Quote(string(e)) + " (want verified or paper)"
}

// search is the state of one node's window search. A prefix of length c
// covers timesteps 0..c-1; a suffix starting at s covers s..L-1. A probe is
// an across-instance permutation test of the node over the prefix or suffix
// with the configured number of permutations; whether it is "important"
// (the region belongs in the window) is decided by the rule: see
// WindowRule.
//
// Prefix phase: lo is the longest prefix known unimportant (0, the empty
// prefix, to begin with), hi the shortest known important (L, the whole
// sequence, is treated as important so that the window keeps at least one
// timestep). Bisection probes mid = ⌊(lo+hi)/2⌋ until hi = lo+1; the window
// starts at lo.
//
// Suffix phase: hi is the earliest suffix start known unimportant (L, the
// empty suffix, to begin with), lo the latest known important (the window
// start, treated as important). Bisection ends at hi = lo+1; the window ends
// at hi-1.
//
// Uncertainty of the ends: besides the decision, every probe is classed
// as sure (its interval Score ± t·SE lies entirely on one side of the
// threshold) or unsure. sureLo/sureHi track the bracket of the prefix
// phase by sure probes only: sureLo the longest prefix surely unimportant,
// sureHi the shortest surely important; the start then lies in
// [sureLo, sureHi−1] whatever the unsure probes would have said, assuming
// prefix importance grows with the prefix. Likewise for the end.
type search struct {
	n      unit
	l      int
	thr    float64
	suffix bool
	lo, hi int
	start  int

	sureLo, sureHi int
	startRange     tempora.Window

	// in and out are the intervals (score, half-width) of the probes that
	// bracket the current phase's end: in the shortest region found
	// important (the prefix [0, hi−1] or the suffix [lo, L−1]), out the
	// longest found unimportant (the prefix [0, lo−1] or the suffix
	// [hi, L−1]); hasIn and hasOut say whether a probe set them (the
	// empty region has score 0 exactly). startKept records, when the
	// prefix phase ends, whether the start timestep surely carries more
	// than the threshold by their difference.
	in, out       [2]float64
	hasIn, hasOut bool
	startKept     bool
}

// kept reports whether the phase's bracketing probes show that the end
// timestep between them surely carries more than the threshold: the lower
// end of the including region's interval exceeds the upper end of the
// excluded one's by more than the threshold. Permutation importance is
// additive over disjoint regions for a model additive over timesteps, so
// the end timestep's own probe would then be surely important too; for
// other models the check only skips a trim, leaving the end where the
// search put it.
func (s *search) kept() bool {
	if !s.hasIn {
		return false
	}
	out := 0.0
	if s.hasOut {
		out = s.out[0] + s.out[1]
	}
	return s.in[0]-s.in[1]-out > s.thr
}

func (s *search) done() bool { return s.suffix && s.hi-s.lo <= 1 }

// probe returns the next probe's window and its key kind.
func (s *search) probe() (tempora.Window, string) {
	mid := (s.lo + s.hi) / 2
	if !s.suffix {
		return tempora.Window{Start: 0, End: mid - 1}, "prefix/" + strconv.Itoa(mid)
	}
	return tempora.Window{Start: mid, End: s.l - 1}, "suffix/" + strconv.Itoa(mid)
}

// judge returns whether a probe's result makes its region important, the
// size of its effect above the threshold, and whether its interval is
// entirely on one side of the threshold (the same under both rules).
func (s *search) judge(r TestResult) (important, sure bool) {
	half := 0.0
	if r.Draws > 1 {
		half = tQuantile(DefaultProbeZ, r.Draws-1) * r.SE
	}
	a := math.Abs(r.Score)
	return a > s.thr, a-half > s.thr || a+half <= s.thr
}

// update records the probe's result and advances the bisection.
func (s *search) update(r TestResult) {
	mid := (s.lo + s.hi) / 2
	important, sure := s.judge(r)
	half := 0.0
	if r.Draws > 1 {
		half = tQuantile(DefaultProbeZ, r.Draws-1) * r.SE
	}
	if important {
		s.in, s.hasIn = [2]float64{r.Score, half}, true
	} else {
		s.out, s.hasOut = [2]float64{r.Score, half}, true
	}
	switch {
	case !s.suffix && !important:
		s.lo = mid
		if sure {
			s.sureLo = max(s.sureLo, mid)
		}
	case !s.suffix:
		s.hi = mid
		if sure {
			s.sureHi = min(s.sureHi, mid)
		}
	case !important:
		s.hi = mid
		if sure {
			s.sureHi = min(s.sureHi, mid)
		}
	default:
		s.lo = mid
		if sure {
			s.sureLo = max(s.sureLo, mid)
		}
	}
	s.advance()
}

// advance moves from a finished prefix phase to the suffix phase.
func (s *search) advance() {
	if !s.suffix && s.hi-s.lo <= 1 {
		s.start = s.lo
		s.startRange = tempora.Window{Start: s.sureLo, End: s.sureHi - 1}
		s.startKept = s.kept()
		s.hasIn, s.hasOut = false, false
		s.suffix = true
		s.lo, s.hi = s.start, s.l
		s.sureLo, s.sureHi = s.start, s.l
	}
}

func (s *search) window() tempora.Window { return tempora.Window{Start: s.start, End: s.hi - 1} }

// endRange returns the range of the window's end bracketed by sure probes.
func (s *search) endRange() tempora.Window {
	return tempora.Window{Start: s.sureLo, End: s.sureHi - 1}
}

// located is the outcome of one node's window search: the window and the
// ranges its start and end lie in by the probes that were sure.
type located struct {
	window, startRange, endRange tempora.Window
	// startKept and endKept say that the search's own probes show the
	// start (end) timestep surely carries more than the threshold, so
	// that splitWindows need not probe it.
	startKept, endKept bool
}

// locateWindows finds the windows of every important node: the window
// search (searchWindows), moved into the span of the node's observed
// values on data with missing values (clipToSpans), then split at gaps
// and trimmed (splitWindows, split.go). It returns the windows of node i
// in time order.
func (r *timeRun) locateWindows(ctx context.Context, nodes []unit) ([][]located, error) {
	found, err := r.searchWindows(ctx, nodes)
	if err != nil {
		return nil, err
	}
	r.clipToSpans(nodes, found)
	return r.splitWindows(ctx, nodes, found)
}

// searchWindows finds the window of every node, running the current probe
// of every unfinished search in one batch per round. Each probe makes at
// most probeCap draws and stops as the tests' mode says (Probe: as soon
// as its interval settles the comparison with the threshold). It returns
// the windows in node order.
func (r *timeRun) searchWindows(ctx context.Context, nodes []unit) ([]located, error) {
	searches := make([]*search, len(nodes))
	for i, n := range nodes {
		s := &search{n: n, l: r.whole.Len(), thr: r.threshold(n), lo: 0, hi: r.whole.Len(), sureLo: 0, sureHi: r.whole.Len()}
		s.advance()
		searches[i] = s
	}
	for {
		var active []*search
		var tests []Test
		for _, s := range searches {
			if s.done() {
				continue
			}
			w, kind := s.probe()
			active = append(active, s)
			tests = append(tests, r.probe(s.n, kind, w))
		}
		if len(tests) == 0 {
			break
		}
		res, err := r.runProbes(ctx, tests)
		if err != nil {
			return nil, err
		}
		for i, s := range active {
			s.update(res[i])
		}
	}
	out := make([]located, len(nodes))
	for i, s := range searches {
		out[i] = located{window: s.window(), startRange: s.startRange, endRange: s.endRange(), startKept: s.startKept, endKept: s.kept()}
	}
	return out, nil
}

// threshold returns the window search's threshold of node n, θ·|overall
// score|.
func (r *timeRun) threshold(n unit) float64 { return r.theta * math.Abs(n.res.Score) }

// probe returns the probe test of node n over window w, with stream key
// kind: an across-instance test, capped at probeCap, that stops as the
// tests' mode stops probes (Probe, or Fixed under FixedTests).
func (r *timeRun) probe(n unit, kind string, w tempora.Window) Test {
	return n.test(kind, w, r.cfg.across(), r.cfg.probeCap(), r.cfg.mode().probeStop(r.threshold(n)))
}

// runProbes runs the probes and checks of the window search and split,
// counting them as window-search draws and probes.
func (r *timeRun) runProbes(ctx context.Context, tests []Test) ([]TestResult, error) {
	if len(tests) == 0 {
		return nil, nil
	}
	res, err := r.eng.Run(ctx, tests)
	if err != nil {
		return nil, err
	}
	r.probes += int64(len(tests))
	addDraws(r.counts, drawSearch, res...)
	return res, nil
}
