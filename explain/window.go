package explain

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"

	"github.com/tempora-dev/tempora"
)

// WindowRule selects how TIME's window search judges a probe and what TIME
// reports for an important feature whose window is not significant.
type WindowRule int

const (
	// OneSided, the default, judges a probe (the prefix or suffix that a
	// window leaves out) important only when its score exceeds the
	// threshold θ·|overall score| by more than its own sampling error: the
	// lower end of its interval, Score − t·SE (t the Student-t quantile of
	// DefaultProbeZ, the probe's interval), lies above θ·|overall|. A
	// region whose permutation lowers the loss (a negative score) is
	// therefore never important, and a region whose score is within noise
	// of the threshold is left out of the window rather than stretching
	// it. An important feature whose window is not significant gets no
	// timestep cells: TIME claims the feature, not where it acts.
	OneSided WindowRule = iota
	// PaperRule is the rule of the paper (Sood and Craven): a probe is
	// important when |Score| > θ·|overall score|, and an important feature
	// whose window is not significant gets its overall score at every
	// timestep.
	PaperRule
)

// String returns "one-sided" or "paper".
func (r WindowRule) String() string {
	switch r {
	case OneSided:
		return "one-sided"
	case PaperRule:
		return "paper"
	}
	return "WindowRule(" + strconv.Itoa(int(r)) + ")"
}

// ParseWindowRule returns the rule named s ("one-sided" or "paper").
func ParseWindowRule(s string) (WindowRule, error) {
	for _, r := range []WindowRule{OneSided, PaperRule} {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, errWindowRule(s)
}

type errWindowRule string

func (e errWindowRule) Error() string {
	return "explain: unknown window rule " + strconv.Quote(string(e)) + " (want one-sided or paper)"
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
	n      *node
	l      int
	thr    float64
	rule   WindowRule
	suffix bool
	lo, hi int
	start  int

	sureLo, sureHi int
	startRange     tempora.Window
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

// judge returns whether a probe's result makes its region important under
// the rule, and whether its interval is entirely on one side of the
// threshold.
func (s *search) judge(r TestResult) (important, sure bool) {
	half := 0.0
	if r.Draws > 1 {
		half = tQuantile(DefaultProbeZ, r.Draws-1) * r.SE
	}
	switch s.rule {
	case PaperRule:
		a := math.Abs(r.Score)
		return a > s.thr, a-half > s.thr || a+half <= s.thr
	default:
		important = r.Score-half > s.thr
		return important, important || r.Score+half <= s.thr
	}
}

// update records the probe's result and advances the bisection.
func (s *search) update(r TestResult) {
	mid := (s.lo + s.hi) / 2
	important, sure := s.judge(r)
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
}

// searchWindows finds the window of every node, running the current probe
// of every unfinished search in one batch per round. Each probe makes at
// most perms draws; with probe set it stops as soon as its interval settles
// the comparison with the threshold (Stop.Probe). It returns the windows in
// node order and the number of probes made, and adds the probes' draws to
// count.
func searchWindows(ctx context.Context, eng *Engine, nodes []*node, l int, theta float64, rule WindowRule, perms int, probe bool, across Perturbation, count *tempora.DrawCount) ([]located, int64, error) {
	searches := make([]*search, len(nodes))
	for i, n := range nodes {
		s := &search{n: n, l: l, thr: theta * math.Abs(n.res.Score), rule: rule, lo: 0, hi: l, sureLo: 0, sureHi: l}
		s.advance()
		searches[i] = s
	}
	var probes int64
	for {
		var active []*search
		var tests []Test
		for _, s := range searches {
			if s.done() {
				continue
			}
			w, kind := s.probe()
			active = append(active, s)
			var stop Stop
			if probe {
				stop = Stop{Probe: true, Threshold: s.thr}
			}
			tests = append(tests, s.n.test(kind, w, across, perms, stop))
		}
		if len(tests) == 0 {
			break
		}
		res, err := eng.Run(ctx, tests)
		if err != nil {
			return nil, 0, err
		}
		probes += int64(len(tests))
		for i, s := range active {
			s.update(res[i])
			count.Tests++
			count.Draws += int64(res[i].Evaluated)
			count.MaxDraws += int64(res[i].Max)
		}
	}
	out := make([]located, len(nodes))
	for i, s := range searches {
		out[i] = located{window: s.window(), startRange: s.startRange, endRange: s.endRange()}
	}
	return out, probes, nil
}

// Timestep statuses of the gap search.
const (
	surelyImportant = iota
	unsure
	surelyUnimportant
)

// splitWindows splits the window of every node into at most maxWindows
// disjoint windows by finding the gaps inside it (maxWindows ≤ 1 leaves
// every window whole). For a window [a, b] it probes every interior
// timestep a < t < b alone (an across-instance permutation of the node at
// t, key "gap/t", stopping early as the window search's probes do); the
// maximal runs of timesteps surely unimportant are the candidate gaps (an
// unsure timestep stays in the window), and each candidate is probed as a
// whole (key "gap/s-e", always perms draws: one look) and kept only if it
// is surely unimportant: the upper end of its interval, Score + t·SE, is
// at most θ·|overall| (TestGapCalibration: 1.25% false splits at the null
// boundary, nominal at most 2.3%). A gap is thus left
// out only when the data show it carries less than θ of the importance,
// the window ends only where sure probes put them. When more than
// maxWindows − 1 gaps are kept, the longest are used (the earlier on
// ties). All probes of a stage run in one batch. The windows of node i are
// returned in time order; their end ranges at a gap widen by one timestep
// on each side whose single-timestep probe was unsure.
func splitWindows(ctx context.Context, eng *Engine, nodes []*node, found []located, maxWindows int, theta float64, rule WindowRule, perms int, probe bool, across Perturbation, count *tempora.DrawCount) ([][]located, int64, error) {
	out := make([][]located, len(nodes))
	for i := range nodes {
		out[i] = []located{found[i]}
	}
	if maxWindows <= 1 {
		return out, 0, nil
	}
	var probes int64
	run := func(tests []Test) ([]TestResult, error) {
		if len(tests) == 0 {
			return nil, nil
		}
		res, err := eng.Run(ctx, tests)
		if err != nil {
			return nil, err
		}
		probes += int64(len(tests))
		for _, r := range res {
			count.Tests++
			count.Draws += int64(r.Evaluated)
			count.MaxDraws += int64(r.Max)
		}
		return res, nil
	}
	stop := func(thr float64) Stop {
		if probe {
			return Stop{Probe: true, Threshold: thr}
		}
		return Stop{}
	}
	thr := make([]float64, len(nodes))
	var tests []Test
	for i, n := range nodes {
		thr[i] = theta * math.Abs(n.res.Score)
		w := found[i].window
		for t := w.Start + 1; t < w.End; t++ {
			tests = append(tests, n.test("gap/"+strconv.Itoa(t), tempora.Window{Start: t, End: t}, across, perms, stop(thr[i])))
		}
	}
	res, err := run(tests)
	if err != nil {
		return nil, 0, err
	}
	status := make([][]int, len(nodes))
	type cand struct {
		node int
		gap  tempora.Window
	}
	var cands []cand
	tests = tests[:0]
	for i, n := range nodes {
		w := found[i].window
		s := &search{thr: thr[i], rule: rule}
		status[i] = make([]int, w.Len())
		status[i][0], status[i][w.Len()-1] = surelyImportant, surelyImportant
		for t := w.Start + 1; t < w.End; t++ {
			important, sure := s.judge(res[0])
			res = res[1:]
			switch {
			case important:
				status[i][t-w.Start] = surelyImportant
			case sure:
				status[i][t-w.Start] = surelyUnimportant
			default:
				status[i][t-w.Start] = unsure
			}
		}
		for t := w.Start + 1; t < w.End; {
			if status[i][t-w.Start] != surelyUnimportant {
				t++
				continue
			}
			e := t
			for e+1 < w.End && status[i][e+1-w.Start] == surelyUnimportant {
				e++
			}
			g := tempora.Window{Start: t, End: e}
			cands = append(cands, cand{i, g})
			// The verifying probe runs to its cap: one look at its
			// interval, not one per draw, whose repeated chances to fall
			// below the threshold would inflate false gaps several-fold.
			tests = append(tests, n.test("gap/"+strconv.Itoa(g.Start)+"-"+strconv.Itoa(g.End), g, across, perms, Stop{}))
			t = e + 1
		}
	}
	res, err = run(tests)
	if err != nil {
		return nil, 0, err
	}
	gaps := make([][]tempora.Window, len(nodes))
	for k, c := range cands {
		r := res[k]
		half := 0.0
		if r.Draws > 1 {
			half = tQuantile(DefaultProbeZ, r.Draws-1) * r.SE
		}
		score := r.Score
		if rule == PaperRule {
			score = math.Abs(score)
		}
		if score+half <= thr[c.node] {
			gaps[c.node] = append(gaps[c.node], c.gap)
		}
	}
	for i := range nodes {
		g := gaps[i]
		if len(g) > maxWindows-1 {
			// Keep the longest maxWindows − 1 gaps, earlier first on ties,
			// then restore time order.
			idx := make([]int, len(g))
			for k := range idx {
				idx[k] = k
			}
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(g[b].Len(), g[a].Len()) })
			keep := make([]bool, len(g))
			for _, k := range idx[:maxWindows-1] {
				keep[k] = true
			}
			var kept []tempora.Window
			for k, ok := range keep {
				if ok {
					kept = append(kept, g[k])
				}
			}
			g = kept
		}
		if len(g) == 0 {
			continue
		}
		w := found[i].window
		st := func(t int) int { return status[i][t-w.Start] }
		var ws []located
		start, startRange := w.Start, found[i].startRange
		for _, gap := range g {
			end := gap.Start - 1
			er := tempora.Window{Start: end, End: end}
			if st(end) != surelyImportant && end > start {
				er.Start--
			}
			if st(gap.Start) != surelyUnimportant {
				er.End++
			}
			ws = append(ws, located{window: tempora.Window{Start: start, End: end}, startRange: startRange, endRange: er})
			start = gap.End + 1
			startRange = tempora.Window{Start: start, End: start}
			if st(gap.End) != surelyUnimportant {
				startRange.Start--
			}
			if st(start) != surelyImportant && start < w.End {
				startRange.End++
			}
		}
		ws = append(ws, located{window: tempora.Window{Start: start, End: w.End}, startRange: startRange, endRange: found[i].endRange})
		out[i] = ws
	}
	return out, probes, nil
}
