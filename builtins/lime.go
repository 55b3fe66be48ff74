package builtins

import (
	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/method"
)

// QuickLIMESamples is LIME's number of samples per instance at quick scale
// (the paper's baselines.DefaultLIMESamples otherwise).
const QuickLIMESamples = 1000

// LIME's parameters.
var (
	limeSamples = method.Spec[int]{Name: "samples", Doc: "samples per explained instance",
		Default: baselines.DefaultLIMESamples, Quick: new(QuickLIMESamples), Range: "[2, inf)"}
	limeInstances = method.Spec[int]{Name: "instances-explained", Doc: "explain only the first N instances (0: all)",
		Default: 0, Range: "[0, inf)"}
)

// limeMethod is LIME (baselines.LIME), which refuses data with missing
// values (docs/decisions.md, decision 21).
func limeMethod() method.Method {
	return method.Method{
		Name:   "LIME",
		Local:  true,
		Doc:    "local linear surrogates, mean |weight| per cell over instances; refuses missing values",
		Params: method.Params(limeSamples, limeInstances, outputParam),
		New: func(c method.Config) (tempora.Explainer, error) {
			out, err := outputOf(c)
			if err != nil {
				return nil, err
			}
			return baselines.LIME{Samples: limeSamples.Get(c.Values), Instances: limeInstances.Get(c.Values),
				Seed: c.Seed, Workers: c.Workers, Output: out}, nil
		},
	}
}
