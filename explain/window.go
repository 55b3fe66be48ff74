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
		out[i] = located{window: s.window(), startRange: s.startRange, endRange: s.endRange(), startKept: s.startKept, endKept: s.kept()}
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
// disjoint windows (maxWindows ≤ 1 leaves every window whole), so that
// every window reported surely carries more than θ of the importance and
// every region left out of the window [a, b] surely carries less
// (docs/decisions.md, decision 18). Three stages, each one batch:
//
//  1. Every timestep a ≤ t ≤ b is probed alone (an across-instance
//     permutation of the node at t, key "gap/t", stopping early as the
//     window search's probes do), except an end at the sequence's end
//     (its trim would be the prefix or suffix the search found important)
//     and an end that the search's bracketing probes already show to be
//     surely important (located.startKept, endKept).
//  2. The maximal runs of timesteps surely unimportant are the candidate
//     regions to leave out (an unsure timestep stays in): the runs of
//     a < t < b are the candidate gaps, and the run from a (from b) a
//     candidate trim of that end, unless it covers the window. Each is
//     probed as a whole (key "gap/s-e") and left out only if it is surely
//     unimportant: the upper end of its interval, Score + t·SE, is at
//     most θ·|overall|. Under the one-sided rule with early stops the
//     check looks at its interval three times, at O'Brien and Fleming's
//     boundary (Stop.Looks: ±3.53, ±2.50 and ±2.04 SE after a third, two
//     thirds and all of its perms draws), whose error at the threshold is
//     that of one look at ±2 SE; otherwise it makes one look, at its cap
//     (TestGapCalibration: 1.75% false splits at the null boundary,
//     nominal at most 2.3%; docs/decisions.md, decision 22). Of
//     the gaps kept, the longest maxWindows − 1 split the window (the
//     earlier on ties); kept trims are always applied.
//  3. When this leaves several pieces, each is probed as a whole (key
//     "piece/s-e", stopping early as the window search's probes do) and
//     reported only if it is surely important: Score − t·SE above
//     θ·|overall|, the rule of the window search's probes. A piece that
//     is not (an isolated timestep of small weight that the
//     single-timestep probes could not rule out) is left out with the
//     gaps around it; if no piece is sure, the one with the highest score
//     is kept.
//
// The windows of node i are returned in time order. An end inherited from
// the window search keeps its range; an end at a gap or trim is fixed by
// sure probes, except that its range widens by one timestep inwards when
// its own timestep's probe was unsure.
func splitWindows(ctx context.Context, eng *Engine, nodes []*node, found []located, l, maxWindows int, theta float64, rule WindowRule, perms int, probe bool, across Perturbation, count *tempora.DrawCount) ([][]located, int64, error) {
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
	// check is the stopping rule of a gap or trim check: under the
	// one-sided rule with early stops, O'Brien and Fleming's boundary at
	// three looks (Stop.Looks), whose error at the threshold is that of
	// one look at ±2 SE; otherwise one look, at the cap.
	check := func(thr float64) Stop {
		if probe && rule == OneSided {
			return Stop{Looks: DefaultLooks, Threshold: thr}
		}
		return Stop{}
	}
	interval := func(r TestResult) (score, half float64) {
		if r.Draws > 1 {
			half = tQuantile(DefaultProbeZ, r.Draws-1) * r.SE
		}
		score = r.Score
		if rule == PaperRule {
			score = math.Abs(score)
		}
		return score, half
	}
	key := func(kind string, w tempora.Window) string {
		return kind + "/" + strconv.Itoa(w.Start) + "-" + strconv.Itoa(w.End)
	}

	// Stage 1: every timestep alone, but an end at the sequence's end:
	// the trim there would be the prefix (suffix) that the window search
	// found important.
	// The search's bracketing probes may already show that an end
	// timestep surely carries more than the threshold (located.startKept).
	lo := func(f located) int {
		if f.window.Start == 0 || f.startKept {
			return f.window.Start + 1
		}
		return f.window.Start
	}
	hi := func(f located) int {
		if f.window.End == l-1 || f.endKept {
			return f.window.End - 1
		}
		return f.window.End
	}
	thr := make([]float64, len(nodes))
	var tests []Test
	for i, n := range nodes {
		thr[i] = theta * math.Abs(n.res.Score)
		for t := lo(found[i]); t <= hi(found[i]); t++ {
			tests = append(tests, n.test("gap/"+strconv.Itoa(t), tempora.Window{Start: t, End: t}, across, perms, stop(thr[i])))
		}
	}
	res, err := run(tests)
	if err != nil {
		return nil, 0, err
	}
	status := make([][]int, len(nodes))
	for i := range nodes {
		w := found[i].window
		s := &search{thr: thr[i], rule: rule}
		status[i] = make([]int, w.Len())
		status[i][0], status[i][w.Len()-1] = surelyImportant, surelyImportant
		for t := lo(found[i]); t <= hi(found[i]); t++ {
			k := t - w.Start
			important, sure := s.judge(res[0])
			res = res[1:]
			switch {
			case important:
				status[i][k] = surelyImportant
			case sure:
				status[i][k] = surelyUnimportant
			default:
				status[i][k] = unsure
			}
		}
	}

	// Stage 2: the candidate gaps and trims, each verified as a whole.
	type cand struct {
		node int
		gap  tempora.Window
	}
	var cands []cand
	tests = tests[:0]
	for i, n := range nodes {
		w := found[i].window
		sure := func(t int) bool { return status[i][t-w.Start] == surelyUnimportant }
		add := func(g tempora.Window) {
			cands = append(cands, cand{i, g})
			// The verifying probe looks at its interval at three
			// boundaries whose joint error is that of one look, not
			// once per draw, whose repeated chances to fall below the
			// threshold would inflate false gaps several-fold.
			tests = append(tests, n.test(key("gap", g), g, across, perms, check(thr[i])))
		}
		// The trims: the runs from each end, unless one covers the window.
		if sure(w.Start) {
			e := w.Start
			for e < w.End && sure(e+1) {
				e++
			}
			if e < w.End {
				add(tempora.Window{Start: w.Start, End: e})
			}
		}
		if sure(w.End) {
			s := w.End
			for s > w.Start && sure(s-1) {
				s--
			}
			if s > w.Start {
				add(tempora.Window{Start: s, End: w.End})
			}
		}
		// The gaps: the runs strictly inside the window.
		for t := w.Start + 1; t < w.End; {
			if !sure(t) {
				t++
				continue
			}
			e := t
			for e+1 < w.End && sure(e+1) {
				e++
			}
			add(tempora.Window{Start: t, End: e})
			t = e + 1
		}
	}
	res, err = run(tests)
	if err != nil {
		return nil, 0, err
	}
	gaps := make([][]tempora.Window, len(nodes))
	trimLo, trimHi := make([]int, len(nodes)), make([]int, len(nodes))
	for i := range nodes {
		trimLo[i], trimHi[i] = found[i].window.Start, found[i].window.End
	}
	for k, c := range cands {
		score, half := interval(res[k])
		if st := tests[k].Stop; st.Looks > 1 && res[k].Draws > 1 {
			half = tQuantile(LookBoundary(st, res[k].Max, res[k].Draws), res[k].Draws-1) * res[k].SE
		}
		if score+half > thr[c.node] {
			continue
		}
		w := found[c.node].window
		switch {
		case c.gap.Start == w.Start:
			trimLo[c.node] = c.gap.End + 1
		case c.gap.End == w.End:
			trimHi[c.node] = c.gap.Start - 1
		default:
			gaps[c.node] = append(gaps[c.node], c.gap)
		}
	}
	pieces := make([][]tempora.Window, len(nodes))
	for i := range nodes {
		// A gap that a trim reaches is part of the trim.
		var g []tempora.Window
		for _, gap := range gaps[i] {
			if gap.Start > trimLo[i] && gap.End < trimHi[i] {
				g = append(g, gap)
			}
		}
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
		start := trimLo[i]
		for _, gap := range g {
			pieces[i] = append(pieces[i], tempora.Window{Start: start, End: gap.Start - 1})
			start = gap.End + 1
		}
		pieces[i] = append(pieces[i], tempora.Window{Start: start, End: trimHi[i]})
	}

	// Stage 3: with several pieces, each must surely carry more than θ.
	tests = tests[:0]
	for i, n := range nodes {
		if len(pieces[i]) < 2 {
			continue
		}
		for _, p := range pieces[i] {
			tests = append(tests, n.test(key("piece", p), p, across, perms, stop(thr[i])))
		}
	}
	res, err = run(tests)
	if err != nil {
		return nil, 0, err
	}
	for i := range nodes {
		ps := pieces[i]
		if len(ps) >= 2 {
			mine := res[:len(ps)]
			res = res[len(ps):]
			var kept []tempora.Window
			best := 0
			for k, p := range ps {
				score, half := interval(mine[k])
				if score-half > thr[i] {
					kept = append(kept, p)
				}
				if mine[k].Score > mine[best].Score {
					best = k
				}
			}
			if len(kept) == 0 {
				kept = []tempora.Window{ps[best]}
			}
			ps = kept
		}
		w := found[i].window
		st := func(t int) int { return status[i][t-w.Start] }
		var ws []located
		for _, p := range ps {
			sr, er := found[i].startRange, found[i].endRange
			if p.Start != w.Start {
				sr = tempora.Window{Start: p.Start, End: p.Start}
				if st(p.Start) != surelyImportant && p.Start < p.End {
					sr.End++
				}
			}
			if p.End != w.End {
				er = tempora.Window{Start: p.End, End: p.End}
				if st(p.End) != surelyImportant && p.End > p.Start {
					er.Start--
				}
			}
			ws = append(ws, located{window: p, startRange: sr, endRange: er})
		}
		out[i] = ws
	}
	return out, probes, nil
}
