package explain

import (
	"context"
	"math"
	"strconv"

	"github.com/tempora-dev/tempora"
)

// search is the state of one node's window search. A prefix of length c
// covers timesteps 0..c-1; a suffix starting at s covers s..L-1. A probe is
// an across-instance permutation test of the node over the prefix or suffix
// with the configured number of permutations; it is "unimportant" when
// |score| ≤ thr = θ·|overall score|.
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
type search struct {
	n      *node
	l      int
	thr    float64
	suffix bool
	lo, hi int
	start  int
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

// update records the probe's score and advances the bisection.
func (s *search) update(score float64) {
	mid := (s.lo + s.hi) / 2
	unimportant := math.Abs(score) <= s.thr
	switch {
	case !s.suffix && unimportant:
		s.lo = mid
	case !s.suffix:
		s.hi = mid
	case unimportant:
		s.hi = mid
	default:
		s.lo = mid
	}
	s.advance()
}

// advance moves from a finished prefix phase to the suffix phase.
func (s *search) advance() {
	if !s.suffix && s.hi-s.lo <= 1 {
		s.start = s.lo
		s.suffix = true
		s.lo, s.hi = s.start, s.l
	}
}

func (s *search) window() tempora.Window { return tempora.Window{Start: s.start, End: s.hi - 1} }

// searchWindows finds the window of every node, running the current probe
// of every unfinished search in one batch per round. Each probe makes at
// most perms draws; with probe set it stops as soon as its interval settles
// the comparison with the threshold (Stop.Probe). It returns the windows in
// node order and the number of probes made, and adds the probes' draws to
// count.
func searchWindows(ctx context.Context, eng *Engine, nodes []*node, l int, theta float64, perms int, probe bool, across Perturbation, count *tempora.DrawCount) ([]tempora.Window, int64, error) {
	searches := make([]*search, len(nodes))
	for i, n := range nodes {
		s := &search{n: n, l: l, thr: theta * math.Abs(n.res.Score), lo: 0, hi: l}
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
			s.update(res[i].Score)
			count.Tests++
			count.Draws += int64(res[i].Evaluated)
			count.MaxDraws += int64(res[i].Max)
		}
	}
	windows := make([]tempora.Window, len(nodes))
	for i, s := range searches {
		windows[i] = s.window()
	}
	return windows, probes, nil
}
