package builtins

import (
	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/method"
)

// QuickTimeSHAPInstances is TimeSHAP's number of explained instances at
// quick scale (min(baselines.DefaultTimeSHAPInstances, M) otherwise).
const QuickTimeSHAPInstances = 20

// TimeSHAP's parameters.
var (
	tsLevel = method.Spec[string]{Name: "level",
		Doc:     "players: cell (each recent feature-timestep cell), event (each recent timestep) or feature (each feature over the recent timesteps)",
		Default: baselines.CellLevel.String()}
	tsRecent = method.Spec[int]{Name: "recent",
		Doc:     "recent timesteps played individually, older ones forming one player (0: pruning by tolerance)",
		Default: 0, Range: "[0, inf)"}
	tsTolerance = method.Spec[float64]{Name: "pruning-tolerance",
		Doc:     "pruning: the older timesteps become one player once their |Shapley value| is at most this (model output units)",
		Default: baselines.DefaultTimeSHAPTolerance, Range: "(0, inf)"}
	tsCoalitions = method.Spec[int]{Name: "coalitions",
		Doc:     "KernelSHAP coalitions per explained instance (0: 2·players + 2048)",
		Default: 0, Range: "[0, inf)"}
	tsInstances = method.Spec[int]{Name: "instances-explained",
		Doc:     "explain only the first N instances (0: min(100, instances))",
		Default: 0, Quick: new(QuickTimeSHAPInstances), Range: "[0, inf)"}
	tsBaseline = baselineSpec("absent", baselines.EventBaseline)
)

// timeSHAPMethod is TimeSHAP, KernelSHAP over temporal coalitions
// (baselines.TimeSHAP); on data with missing values its players are each
// sequence's observed cells (docs/decisions.md, decision 21).
func timeSHAPMethod() method.Method {
	return method.Method{
		Name:   "TimeSHAP",
		Local:  true,
		Doc:    "KernelSHAP over temporal coalitions of observed cells, mean |attribution| per cell",
		Params: method.Params(tsLevel, tsRecent, tsTolerance, tsCoalitions, tsInstances, tsBaseline, outputParam),
		New: func(c method.Config) (tempora.Explainer, error) {
			level, err := baselines.ParseTimeSHAPLevel(tsLevel.Get(c.Values))
			if err != nil {
				return nil, err
			}
			b, err := baselines.ParseBaseline(tsBaseline.Get(c.Values))
			if err != nil {
				return nil, err
			}
			out, err := outputOf(c)
			if err != nil {
				return nil, err
			}
			n := tsInstances.Get(c.Values)
			if c.Data != nil && c.Data.X != nil && n > c.Data.X.M {
				n = c.Data.X.M
			}
			return baselines.TimeSHAP{Level: level, Recent: tsRecent.Get(c.Values), Tolerance: tsTolerance.Get(c.Values),
				Samples: tsCoalitions.Get(c.Values), Instances: n, Baseline: b, Seed: c.Seed, Workers: c.Workers, Output: out}, nil
		},
	}
}
