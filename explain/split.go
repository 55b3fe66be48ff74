package explain

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"

	"github.com/tempora-dev/tempora"
)

// The split of a window (TIME.Windows > 1; docs/decisions.md, decision
// 18): splitWindows splits the window of every node into at most
// TIME.Windows disjoint windows, so that every window reported surely
// carries more than θ of the importance and every region left out of the
// window [a, b] surely carries less. Three stages, each one batch:
//
//  1. probeTimesteps: the timesteps a ≤ t ≤ b are probed alone (an
//     across-instance probe of the node at t, key "gap/t", stopping early
//     as the window search's probes do), except an end at the sequence's
//     end (its trim would be the prefix or suffix the search found
//     important) and an end that the search's bracketing probes already
//     show to be surely important (located.startKept, endKept). They are
//     probed in two rounds (docs/decisions.md, decision 27): the anchors
//     (firstRound: within MinGap of an end, and every MinGap-th timestep),
//     then the timesteps between two consecutive anchors of which one is
//     surely unimportant (fillRound); the others could change no
//     candidate region below, and the explanation is that of probing
//     every timestep.
//  2. verifyGaps: the maximal runs of timesteps surely unimportant are the
//     candidate regions to leave out (an unsure timestep stays in): the
//     runs of a < t < b are the candidate gaps, and the run from a (from
//     b) a candidate trim of that end, unless it covers the window; a gap
//     must be at least MinGap timesteps long, and a shorter run within
//     MinGap of an end makes, with the timesteps beyond it, a candidate
//     trim. Each
//     is checked as a whole (key "gap/s-e") and left out only if it is
//     surely unimportant: the upper end of its interval, |Score| + t·SE, is
//     at most θ·|overall|. Under the verified rule with the sequential
//     tests the check looks at its interval three times, at O'Brien and
//     Fleming's boundary (Looks: ±3.53, ±2.50 and ±2.04 SE after a third,
//     two thirds and all of its draws), whose error at the threshold is
//     that of one look at ±2 SE; otherwise it makes one look, at its cap
//     (TestGapCalibration: 1.75% false splits at the null boundary,
//     nominal at most 2.3%; docs/decisions.md, decision 22). Of the gaps
//     kept, the longest TIME.Windows − 1 split the window (cutPieces; the
//     earlier on ties); kept trims are always applied.
//  3. confirmPieces: when this leaves several pieces, each is probed as a
//     whole (key "piece/s-e", stopping early as the window search's
//     probes do) and reported only if it is surely important: |Score| −
//     t·SE above θ·|overall|. A piece
//     that is not (an isolated timestep of small weight that the
//     single-timestep probes could not rule out) is left out with the
//     gaps around it; if no piece is sure, the one with the largest
//     |Score| is kept.
//
// An end inherited from the window search keeps its range; an end at a
// gap or trim is fixed by sure probes, except that its range widens by one
// timestep inwards when its own timestep's probe was unsure.

// Timestep statuses of the split.
const (
	surelyImportant = iota
	unsure
	surelyUnimportant
)

// splitWindows splits the window found for every node (see above) and
// returns the windows of node i in time order; TIME.Windows ≤ 1 leaves
// every window whole.
func (r *timeRun) splitWindows(ctx context.Context, nodes []unit, found []located) ([][]located, error) {
	out := make([][]located, len(nodes))
	for i := range nodes {
		out[i] = []located{found[i]}
	}
	if r.cfg.Windows <= 1 {
		return out, nil
	}
	status, err := r.probeTimesteps(ctx, nodes, found)
	if err != nil {
		return nil, err
	}
	pieces, err := r.verifyGaps(ctx, nodes, found, status)
	if err != nil {
		return nil, err
	}
	pieces, err = r.confirmPieces(ctx, nodes, pieces)
	if err != nil {
		return nil, err
	}
	for i := range nodes {
		out[i] = piecesLocated(found[i], status[i], pieces[i])
	}
	return out, nil
}

// probedSpan returns the timesteps of window f that stage 1 probes: all
// but an end at the sequence's end and an end the search already showed
// surely important.
func (r *timeRun) probedSpan(f located) (lo, hi int) {
	lo, hi = f.window.Start, f.window.End
	if lo == 0 || f.startKept {
		lo++
	}
	if hi == r.whole.End || f.endKept {
		hi--
	}
	return lo, hi
}

// probeTimesteps is stage 1: it probes the timesteps of every window
// alone, in two rounds, and returns the status of every timestep of
// window i (index t − a), surely important unless probed. The first round
// probes the anchors of firstRound; the second the timesteps between two
// consecutive anchors of which one is surely unimportant (fillRound). A
// timestep left unprobed would change no candidate region: see
// fillRound.
func (r *timeRun) probeTimesteps(ctx context.Context, nodes []unit, found []located) ([][]int, error) {
	status := make([][]int, len(nodes))
	first := make([][]int, len(nodes))
	for i := range nodes {
		status[i] = make([]int, found[i].window.Len()) // surelyImportant
		lo, hi := r.probedSpan(found[i])
		first[i] = firstRound(found[i].window, lo, hi)
	}
	if err := r.probeAlone(ctx, nodes, found, first, status); err != nil {
		return nil, err
	}
	second := make([][]int, len(nodes))
	for i := range nodes {
		second[i] = fillRound(found[i].window, first[i], status[i])
	}
	if err := r.probeAlone(ctx, nodes, found, second, status); err != nil {
		return nil, err
	}
	return status, nil
}

// probeEveryTimestep makes firstRound return every timestep of the span
// (tests compare the two rounds with it).
var probeEveryTimestep = false

// firstRound returns the anchors of stage 1 in window w whose probed span
// is [lo, hi]: the timesteps of the span within MinGap of either end and
// every MinGap-th timestep from the start, so that two consecutive
// anchors (w's ends counted, probed or not) are at most MinGap apart.
func firstRound(w tempora.Window, lo, hi int) []int {
	var out []int
	for t := lo; t <= hi; t++ {
		if probeEveryTimestep || t-w.Start <= MinGap || w.End-t <= MinGap || (t-w.Start)%MinGap == 0 {
			out = append(out, t)
		}
	}
	return out
}

// fillRound returns the timesteps of window w that stage 1's second round
// probes: those between two consecutive anchors (the probed anchors and
// w's ends) of which at least one is surely unimportant (status, by t −
// a). The rest, between two anchors p < q neither surely unimportant,
// would change no candidate region whatever their probes said: q − p ≤
// MinGap, so a run of surely unimportant timesteps among them is shorter
// than MinGap, bounded by p and q, and starts more than MinGap after a and
// ends more than MinGap before b (every timestep within MinGap of an end
// is an anchor), so it is neither a gap nor part of a trim (candidates).
// Nor does it bound a region left out (piecesLocated): such a region is a
// run of surely unimportant timesteps, and the timestep next to one lies
// between anchors of which one is surely unimportant, or is an anchor.
func fillRound(w tempora.Window, anchors []int, status []int) []int {
	st := func(t int) int { return status[t-w.Start] }
	pts := append([]int{w.Start}, anchors...)
	pts = append(pts, w.End)
	var out []int
	for k := 1; k < len(pts); k++ {
		p, q := pts[k-1], pts[k]
		if q-p <= 1 || (st(p) != surelyUnimportant && st(q) != surelyUnimportant) {
			continue
		}
		for t := p + 1; t < q; t++ {
			out = append(out, t)
		}
	}
	return out
}

// probeAlone probes the timesteps ts[i] of window i alone (key "gap/t")
// and records their statuses.
func (r *timeRun) probeAlone(ctx context.Context, nodes []unit, found []located, ts [][]int, status [][]int) error {
	var tests []Test
	for i, n := range nodes {
		for _, t := range ts[i] {
			tests = append(tests, r.probe(n, "gap/"+strconv.Itoa(t), tempora.Window{Start: t, End: t}))
		}
	}
	res, err := r.runProbes(ctx, tests)
	if err != nil {
		return err
	}
	for i, n := range nodes {
		s := &search{thr: r.threshold(n)}
		for _, t := range ts[i] {
			important, sure := s.judge(res[0])
			res = res[1:]
			switch {
			case important:
				status[i][t-found[i].window.Start] = surelyImportant
			case sure:
				status[i][t-found[i].window.Start] = surelyUnimportant
			default:
				status[i][t-found[i].window.Start] = unsure
			}
		}
	}
	return nil
}

// candidates returns the candidate regions of window w to leave out, by
// the statuses of its timesteps: the trims (the runs of surely
// unimportant timesteps from each end, unless one covers the window),
// then the gaps (the runs strictly inside).
func candidates(w tempora.Window, status []int) []tempora.Window {
	sure := func(t int) bool { return status[t-w.Start] == surelyUnimportant }
	var out []tempora.Window
	if sure(w.Start) {
		e := w.Start
		for e < w.End && sure(e+1) {
			e++
		}
		if e < w.End {
			out = append(out, tempora.Window{Start: w.Start, End: e})
		}
	}
	if sure(w.End) {
		s := w.End
		for s > w.Start && sure(s-1) {
			s--
		}
		if s > w.Start {
			out = append(out, tempora.Window{Start: s, End: w.End})
		}
	}
	for t := w.Start + 1; t < w.End; {
		if !sure(t) {
			t++
			continue
		}
		e := t
		for e+1 < w.End && sure(e+1) {
			e++
		}
		switch {
		case e-t+1 >= MinGap:
			out = append(out, tempora.Window{Start: t, End: e})
		case t-w.Start < MinGap:
			// A short run near the start: the timesteps before it, with
			// it, are a candidate trim (a noise weight beside a gap).
			out = append(out, tempora.Window{Start: w.Start, End: e})
		case w.End-e < MinGap:
			out = append(out, tempora.Window{Start: t, End: w.End})
		}
		t = e + 1
	}
	return out
}

// MinGap is the fewest timesteps of a gap that splits a window: a run of
// one or two surely unimportant timesteps between read ones is left in
// the window; near an end (fewer than MinGap timesteps from it) the run
// with the timesteps beyond it is instead a candidate trim, left out only
// if it surely carries less than θ as a whole (a noise weight beside a
// gap). Such
// short runs are mostly timesteps whose values vary little across
// instances (a Markov chain holding its state, a category most instances
// share) or the low weights at the centre of a slope, not regions the
// model skips; cutting there loses the timesteps the model reads and the
// window's ordering claim (docs/decisions.md, decision 18).
const MinGap = 3

// check returns the check of node n over region g, a candidate gap or
// trim: under the verified rule it stops as the tests' mode stops checks
// (Looks, or Fixed under FixedTests), whose repeated looks at the
// threshold keep the error of one look; under the paper's rule it makes
// one look, at its cap.
func (r *timeRun) check(n unit, g tempora.Window) Test {
	var stop Stop = Fixed{}
	if r.cfg.WindowRule == Verified {
		stop = r.cfg.mode().checkStop(r.threshold(n))
	}
	return n.test(regionKey("gap", g), g, r.cfg.across(), r.cfg.probeCap(), stop)
}

// verifyGaps is stage 2: it checks every candidate region of every
// window as a whole and returns the pieces of window i left once the
// surely unimportant trims and the longest gaps are left out.
func (r *timeRun) verifyGaps(ctx context.Context, nodes []unit, found []located, status [][]int) ([][]tempora.Window, error) {
	type cand struct {
		node int
		gap  tempora.Window
	}
	var cands []cand
	var tests []Test
	for i, n := range nodes {
		for _, g := range candidates(found[i].window, status[i]) {
			cands = append(cands, cand{i, g})
			tests = append(tests, r.check(n, g))
		}
	}
	res, err := r.runProbes(ctx, tests)
	if err != nil {
		return nil, err
	}
	gaps := make([][]tempora.Window, len(nodes))
	kept := make([]tempora.Window, len(nodes)) // the window after its trims
	for i := range nodes {
		kept[i] = found[i].window
	}
	for k, c := range cands {
		score, half := r.interval(res[k], tests[k].Stop)
		if score+half > r.threshold(nodes[c.node]) {
			continue
		}
		w := found[c.node].window
		switch {
		case c.gap.Start == w.Start:
			kept[c.node].Start = max(kept[c.node].Start, c.gap.End+1)
		case c.gap.End == w.End:
			kept[c.node].End = min(kept[c.node].End, c.gap.Start-1)
		default:
			gaps[c.node] = append(gaps[c.node], c.gap)
		}
	}
	pieces := make([][]tempora.Window, len(nodes))
	for i := range nodes {
		pieces[i] = cutPieces(kept[i], gaps[i], r.cfg.Windows)
	}
	return pieces, nil
}

// interval returns the size of the score of a probe or check, |Score|,
// and the half-width of its interval: t·SE at
// the coverage of ±DefaultProbeZ SE, or at the boundary of its last look
// for a check with looks.
func (r *timeRun) interval(res TestResult, stop Stop) (score, half float64) {
	if res.Draws > 1 {
		z := DefaultProbeZ
		if l, ok := stop.(Looks); ok {
			z = l.Boundary(res.Max, res.Draws)
		}
		half = tQuantile(z, res.Draws-1) * res.SE
	}
	return math.Abs(res.Score), half
}

// cutPieces returns the pieces of window w (already trimmed) once the
// longest most − 1 of the gaps inside it are left out (the earlier on
// ties); a gap that a trim reached is part of the trim.
func cutPieces(w tempora.Window, gaps []tempora.Window, most int) []tempora.Window {
	var g []tempora.Window
	for _, gap := range gaps {
		if gap.Start > w.Start && gap.End < w.End {
			g = append(g, gap)
		}
	}
	if len(g) > most-1 {
		idx := make([]int, len(g))
		for k := range idx {
			idx[k] = k
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(g[b].Len(), g[a].Len()) })
		idx = idx[:most-1]
		slices.Sort(idx) // time order
		kept := make([]tempora.Window, len(idx))
		for k, i := range idx {
			kept[k] = g[i]
		}
		g = kept
	}
	var pieces []tempora.Window
	start := w.Start
	for _, gap := range g {
		pieces = append(pieces, tempora.Window{Start: start, End: gap.Start - 1})
		start = gap.End + 1
	}
	return append(pieces, tempora.Window{Start: start, End: w.End})
}

// confirmPieces is stage 3: it probes every piece of a window cut in
// several and keeps the pieces surely important, or the best one.
func (r *timeRun) confirmPieces(ctx context.Context, nodes []unit, pieces [][]tempora.Window) ([][]tempora.Window, error) {
	var tests []Test
	for i, n := range nodes {
		if len(pieces[i]) < 2 {
			continue
		}
		for _, p := range pieces[i] {
			tests = append(tests, r.probe(n, regionKey("piece", p), p))
		}
	}
	res, err := r.runProbes(ctx, tests)
	if err != nil {
		return nil, err
	}
	out := make([][]tempora.Window, len(nodes))
	for i, n := range nodes {
		ps := pieces[i]
		out[i] = ps
		if len(ps) < 2 {
			continue
		}
		mine := res[:len(ps)]
		res = res[len(ps):]
		var kept []tempora.Window
		best := 0
		for k, p := range ps {
			if score, half := r.interval(mine[k], nil); score-half > r.threshold(n) {
				kept = append(kept, p)
			}
			if math.Abs(mine[k].Score) > math.Abs(mine[best].Score) {
				best = k
			}
		}
		if len(kept) == 0 {
			kept = []tempora.Window{ps[best]}
		}
		out[i] = kept
	}
	return out, nil
}

// piecesLocated returns the pieces ps of the window found f with the
// ranges of their ends: an end inherited from the search keeps its range;
// an end at a gap or trim is fixed, widened by one timestep inwards when
// its own timestep was not surely important (status, by t − a).
func piecesLocated(f located, status []int, ps []tempora.Window) []located {
	w := f.window
	st := func(t int) int { return status[t-w.Start] }
	var out []located
	for _, p := range ps {
		sr, er := f.startRange, f.endRange
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
		out = append(out, located{window: p, startRange: sr, endRange: er})
	}
	return out
}

// regionKey returns the stream key of a test of kind over region w.
func regionKey(kind string, w tempora.Window) string {
	return kind + "/" + strconv.Itoa(w.Start) + "-" + strconv.Itoa(w.End)
}
