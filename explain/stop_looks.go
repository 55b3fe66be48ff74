package explain

import (
	"fmt"
	"math"
)

// Looks is a score-only one-sided test with a group-sequential boundary
// (TIME's gap and trim checks, docs/decisions.md, decision 22): the test
// compares the size of its score, |Score|, with Threshold at K equally
// spaced looks, after ⌈j·N/K⌉ draws (j = 1, …, K; N the cap), and stops
// at look j once the interval Score ± t·SE with the coverage of
// ±c·√(K/j) standard errors (Boundary; c = Z, O'Brien and Fleming's
// shape) lies within [−Threshold, Threshold] or entirely outside it. K = 3, c = 2.04 has the one-sided
// error at the threshold of a single look at ±2 SE. Its p-value is NaN.
// It asks for the draws up to its next look.
type Looks struct {
	// K is the number of looks, at least 1 (1: a single look, at the cap).
	K int
	// Threshold is the threshold, a finite value ≥ 0.
	Threshold float64
	// Z is c, in standard errors; 0 means DefaultLookZ.
	Z float64
}

// DefaultLooks and DefaultLookZ are the looks and the boundary constant of
// TIME's gap and trim checks: O'Brien and Fleming's boundary 3.53, 2.50
// and 2.04 SE at 1/3, 2/3 and all of the draws, whose one-sided error for
// a normal mean at the threshold is that of a single look at 2 SE, 1 −
// Φ(2) = 2.28% (2.277% by 4·10⁶ simulated Brownian paths, SE 0.008%).
const (
	DefaultLooks = 3
	DefaultLookZ = 2.04
)

func (l Looks) validate() error {
	switch {
	case l.K < 1:
		return fmt.Errorf("has %d looks, need at least 1", l.K)
	case !finite(l.Threshold):
		return fmt.Errorf("has threshold %v, need a finite value ≥ 0", l.Threshold)
	case !finite(l.Z):
		return fmt.Errorf("has look z %v, need a finite value ≥ 0", l.Z)
	}
	return nil
}

func (l Looks) start() stopper {
	if l.Z == 0 {
		l.Z = DefaultLookZ
	}
	return l
}

func (l Looks) batch(t *tally) int { return l.nextLook(t) - t.issued }

func (l Looks) add(t *tally) bool { return l.atLook(t) && l.crossed(t) }

func (Looks) pValue(*tally, bool) float64 { return math.NaN() }

func (Looks) scoreOnly() {}

// nextLook returns the draws at the next look: the smallest ⌈j·N/K⌉, j =
// 1, …, K, above the draws used.
func (l Looks) nextLook(t *tally) int {
	for j := 1; j < l.K; j++ {
		if at := (j*t.max + l.K - 1) / l.K; at > t.used {
			return at
		}
	}
	return t.max
}

// atLook reports whether the draws used are at an interim look.
func (l Looks) atLook(t *tally) bool {
	for j := 1; j < l.K; j++ {
		if (j*t.max+l.K-1)/l.K == t.used {
			return true
		}
	}
	return false
}

// crossed reports whether the test, at a look, has crossed its boundary:
// its interval lies within [−θ, θ], or entirely above θ or below −θ.
func (l Looks) crossed(t *tally) bool {
	if t.used < 2 {
		return false
	}
	half := tQuantile(l.Boundary(t.max, t.used), t.used-1) * t.se()
	lo, hi, thr := t.mean-half, t.mean+half, l.Threshold
	return (lo >= -thr && hi <= thr) || lo > thr || hi < -thr
}

// Boundary returns the boundary, in standard errors, of a test with cap n
// after draws draws: c·√(K/j) at look j (the first whose ⌈j·n/K⌉ is at
// least draws; K at the cap), c = Z (DefaultLookZ when 0).
func (l Looks) Boundary(n, draws int) float64 {
	c := l.Z
	if c == 0 {
		c = DefaultLookZ
	}
	j := 1
	for j < l.K && (j*n+l.K-1)/l.K < draws {
		j++
	}
	return c * math.Sqrt(float64(l.K)/float64(j))
}
