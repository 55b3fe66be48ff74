package baselines

import (
	"math"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/method"
)

// The cost estimates of the baselines (method.Estimator): instance
// evaluations from the data's shape and the configuration, without a model
// call. Each returns 0 (no estimate) for a configuration Explain rejects.

var (
	_ method.Estimator = LIME{}
	_ method.Estimator = Occlusion{}
	_ method.Estimator = TimeSHAP{}
	_ method.Estimator = PERM{}
)

// evalCount returns the product of the factors as an int64, saturating at
// math.MaxInt64 (an absurd configuration must give a huge estimate, not an
// overflow).
func evalCount(factors ...float64) int64 {
	p := 1.0
	for _, f := range factors {
		p *= f
	}
	if p >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(p)
}

// EstimateEvals implements method.Estimator: exactly Samples rows for each
// explained instance (one model call per instance).
func (c LIME) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	x := data.X
	samples, n := c.Samples, x.M
	if samples == 0 {
		samples = DefaultLIMESamples
	}
	if c.Instances > 0 && c.Instances <= x.M {
		n = c.Instances
	}
	if samples < 2 || c.Instances < 0 || c.Instances > x.M {
		return 0, false
	}
	return evalCount(float64(n), float64(samples)), true
}

// EstimateEvals implements method.Estimator: exactly the M instances once
// unoccluded and once per (feature, occlusion window).
func (c Occlusion) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	x := data.X
	w, s := c.Width, c.Stride
	if w == 0 {
		w = DefaultOcclusionWidth
	}
	if s == 0 {
		s = DefaultOcclusionStride
	}
	if w < 0 || w > x.L || s < 0 || s > w {
		return 0, false
	}
	return evalCount(float64(x.M), float64(1+x.D*len(occlusionWindows(x.L, w, s)))), true
}

// EstimateEvals implements method.Estimator: an upper bound, for each
// explained instance, of its pruning rows (2L) and its coalitions (the
// automatic or given number for the largest possible number of players,
// plus the instance and the baseline).
func (c TimeSHAP) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	x := data.X
	n := c.Instances
	switch {
	case n < 0 || n > x.M || c.Samples < 0 || c.Recent < 0 || c.Recent > x.L:
		return 0, false
	case n == 0:
		n = min(DefaultTimeSHAPInstances, x.M)
	}
	k := x.L
	if c.Recent > 0 {
		k = c.Recent
	}
	var players int
	switch c.Level {
	case CellLevel:
		players = x.D*k + 1
	case EventLevel:
		players = k + 1
	case FeatureLevel:
		players = x.D + 1
	default:
		return 0, false
	}
	perInstance := 2*x.L + kernelSamples(players, c.Samples) + 2
	return evalCount(float64(n), float64(perInstance)), false
}

// EstimateEvals implements method.Estimator: an upper bound, the baseline
// pass and every cell's test run to its cap (the draws of a fixed test;
// sequential tests of unimportant cells stop after a few draws).
func (c PERM) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	x := data.X
	perms, alpha := c.Permutations, c.Alpha
	if alpha == 0 {
		alpha = DefaultPERMAlpha
	}
	switch {
	case perms < 0 || !(alpha > 0 && alpha <= 1):
		return 0, false
	case perms == 0 && c.Fixed:
		perms = DefaultPERMPermutations
	case perms == 0:
		perms = explain.MinPermutations(x.D*x.L, alpha)
	}
	return evalCount(float64(x.M), 1+float64(x.D)*float64(x.L)*float64(perms)), false
}
