package explain

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// Probe is a score-only rule for a test that only compares its score
// with a threshold θ (TIME's window search asks whether |Score| ≤ θ).
// After each draw k ≥ MinDraws the half-width is
//
//	w_k = t_{k−1}(Φ(Z)) · s_k/√k   (0 when k = 1),
//
// t_ν(q) the q-quantile of Student's t law with ν degrees of freedom and Φ
// the standard normal CDF (for Z = 2, the coverage of ±2 SE of a normal
// mean, 95.45%); the probe stops once [Score − w_k, Score + w_k] lies
// within [−θ, θ] or entirely outside it (above θ or below −θ). It also
// stops, unsettled, once it is futile (after k ≥ probeFutileMin draws,
// with N the cap): when dist + 2·s_k·√(1/k − 1/N) < t_{N−1}(Φ(Z))·s_k/√N,
// dist the distance from Score to the nearer of ±θ, the interval at the
// cap would still straddle the threshold after a move of 2 SD of the
// score's remaining change; it then ends unsure, as at its cap
// (docs/decisions.md, decision 22). A probe's p-value is NaN: a rule that
// looks at the score gives no valid p-value.
//
// Batches: a probe asks for MinDraws − I draws until it has MinDraws (I
// the draws issued), then for 1 draw at a time until it has probeSingle
// = 8 (most probes settle within a few draws), then for c = ⌊I/2⌋, unless
// the draws at which w_k would shrink to the gap g = ||Score| − θ|,
// ⌈(t·s/g)²⌉, are fewer than I + c, in which case it asks for the
// difference (at least 1).
type Probe struct {
	// Threshold is θ, a finite value ≥ 0.
	Threshold float64
	// MinDraws is the probe's smallest number of draws; 0 means
	// DefaultProbeMinDraws.
	MinDraws int
	// Z sets the coverage of the interval, that of ±Z standard errors of
	// a normal mean; 0 means DefaultProbeZ.
	Z float64
}

// Defaults of the probe stopping rule.
const (
	// DefaultProbeMinDraws is the smallest number of draws of a probe, the
	// fewest that estimate a standard deviation.
	DefaultProbeMinDraws = 2
	// DefaultProbeZ sets the coverage of a probe's interval to that of ±2
	// standard errors of a normal mean, 95.45%.
	DefaultProbeZ = 2.0
)

// Probe scheduling (docs/decisions.md, decision 22): a probe takes its
// first probeSingle draws one at a time; it may stop as futile after
// probeFutileMin draws, when the score would have to move probeFutileZ
// standard deviations of its remaining change to settle by the cap.
const (
	probeSingle    = 8
	probeFutileMin = 10
	probeFutileZ   = 2.0
)

func (p Probe) validate() error {
	switch {
	case !finite(p.Threshold):
		return fmt.Errorf("has probe threshold %v, need a finite value ≥ 0", p.Threshold)
	case p.MinDraws < 0:
		return fmt.Errorf("has probe minimum %d draws, need at least 0", p.MinDraws)
	case !finite(p.Z):
		return fmt.Errorf("has probe z %v, need a finite value ≥ 0", p.Z)
	}
	return nil
}

func (p Probe) start() stopper {
	if p.MinDraws == 0 {
		p.MinDraws = DefaultProbeMinDraws
	}
	if p.Z == 0 {
		p.Z = DefaultProbeZ
	}
	return p
}

func (p Probe) batch(t *tally) int {
	if t.issued < p.MinDraws {
		return p.MinDraws - t.issued
	}
	if t.issued < probeSingle {
		return 1
	}
	c := max(1, t.issued/2)
	if gap := math.Abs(math.Abs(t.mean) - p.Threshold); gap > 0 && t.used > 1 {
		need := math.Ceil(math.Pow(tQuantile(p.Z, t.used-1)*t.sd()/gap, 2))
		if need < float64(t.issued+c) {
			c = max(1, int(need)-t.issued)
		}
	}
	return c
}

func (p Probe) add(t *tally) bool {
	return t.used >= p.MinDraws && (p.settled(t) || p.futile(t))
}

func (Probe) pValue(*tally, bool) float64 { return math.NaN() }

func (Probe) scoreOnly() {}

// settled reports whether the interval Score ± t·SE, with the coverage of
// ±Z standard errors (t the Student-t quantile with used − 1 degrees of
// freedom), lies within [−θ, θ] or entirely outside it: the comparison of
// |Score| with the threshold θ is then settled.
func (p Probe) settled(t *tally) bool {
	half := 0.0
	if t.used > 1 {
		half = tQuantile(p.Z, t.used-1) * t.se()
	}
	lo, hi, thr := t.mean-half, t.mean+half, p.Threshold
	return (lo >= -thr && hi <= thr) || lo > thr || hi < -thr
}

// futile reports whether a probe, after at least probeFutileMin draws, is
// very unlikely to settle by its cap (docs/decisions.md, decision 22): the
// interval it would have at the cap, t_{N−1}·s/√N about the score, would
// still contain the nearer of ±θ even if the score moved probeFutileZ
// standard deviations of its remaining change, s·√(1/k − 1/N), away from
// it. The probe then ends unsure, as it would at its cap.
func (p Probe) futile(t *tally) bool {
	k, n := t.used, t.max
	if k < probeFutileMin || k >= n {
		return false
	}
	sd := t.sd()
	if sd == 0 {
		return false
	}
	thr := p.Threshold
	dist := min(math.Abs(t.mean-thr), math.Abs(t.mean+thr))
	halfCap := tQuantile(p.Z, n-1) * sd / math.Sqrt(float64(n))
	move := probeFutileZ * sd * math.Sqrt(1/float64(k)-1/float64(n))
	return dist+move < halfCap
}

// tQuantile returns the quantile of Student's t law with df degrees of
// freedom at the probability Φ(z) of the standard normal law: the
// half-width, in standard errors, of the interval whose coverage is that
// of ±z standard errors for normal data (99.73% for z = 3). The probe
// rule asks for it after every draw, with the same z and a growing df, so
// values are kept (an inverse incomplete beta each otherwise).
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
