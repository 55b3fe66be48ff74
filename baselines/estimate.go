package baselines

import (
	"math"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// The cost estimates of the baselines (method.Estimator): instance
// evaluations from the data's shape and the configuration, without a model
// call. Each checks the configuration and the data with its method's own
// validation (resolve or setup), so it returns 0 (no estimate) exactly for
// what the method rejects before calling the model.

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
	s, err := c.resolve(data)
	if err != nil {
		return 0, false
	}
	return evalCount(float64(s.n), float64(s.samples)), true
}

// EstimateEvals implements method.Estimator: exactly the M instances once
// unoccluded and once per (feature, occlusion window), however the calls
// pack or chunk them.
func (c Occlusion) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	u, err := c.resolve(data)
	if err != nil {
		return 0, false
	}
	x := data.X
	return evalCount(float64(x.M), float64(1+x.D*len(u.wins))), true
}

// EstimateEvals implements method.Estimator: an upper bound, for each
// explained instance, of its pruning rows (2L, none with Recent set) and
// its coalitions (the automatic or given number for the most players an
// instance can have), plus the instance and the baseline.
func (c TimeSHAP) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	s, err := c.setup(data)
	if err != nil {
		return 0, false
	}
	prune := 0
	if s.recent == 0 && s.l > 1 {
		prune = 2 * s.l
	}
	perInstance := prune + kernelSamples(s.maxPlayer, s.samples) + 2
	return evalCount(float64(s.n), float64(perInstance)), false
}

// EstimateEvals implements method.Estimator: an upper bound, the baseline
// pass and every cell's test run to its cap (the draws of a fixed test,
// which it makes unless the instances have fewer orderings; sequential
// tests of unimportant cells stop after a few draws).
func (c PERM) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	if _, err := data.Observe(2); err != nil {
		return 0, false
	}
	if _, err := selectOutput("PERM", c.Output, data); err != nil {
		return 0, false
	}
	_, perms, _, _, err := c.resolve(data.X)
	if err != nil {
		return 0, false
	}
	x := data.X
	return evalCount(float64(x.M), 1+float64(x.D)*float64(x.L)*float64(perms)), false
}
