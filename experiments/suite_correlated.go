package experiments

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/synth"
)

// The correlated suite (issue 21; docs/decisions.md, decision 15): the
// correlated world of synth.Correlated, where feature B follows feature A
// with correlation ρ and the target depends on A only, swept over ρ and
// both black boxes (reads A only; spreads its weight over A and B), with
// TIME's marginal and conditional tests, every method scored against both
// truths. A setting's parameters are
//
//	rho=ρ / box=A|spread / truth=model|data / conditional=false|true
//
// truth=model scores against the features the black box reads,
// truth=data against the features informative given the others (A only);
// conditional is TIME's parameter (the other methods ignore it, so their
// records under conditional=true repeat those under false). The settings
// of one (ρ, box) analyse the same problems.

// correlatedRhos are the correlations the suite sweeps.
var correlatedRhos = []string{"0", "0.5", "0.9", "0.99"}

// correlatedMethods are the suite's default methods: TIME and the cheap
// baselines that run TIME's machinery (PERM) or impute marginally (SAGE-m).
var correlatedMethods = []string{"TIME", "TIME-n", "PERM", "PERM-f", "SAGE-m"}

func correlatedSettings(quick bool, _ string) ([]Setting, error) {
	var out []Setting
	for _, rho := range correlatedRhos {
		r, err := strconv.ParseFloat(rho, 64)
		if err != nil {
			return nil, err
		}
		for _, box := range []string{"A", "spread"} {
			for _, truth := range []string{"model", "data"} {
				for _, cond := range []string{"false", "true"} {
					s := Setting{
						Params: []record.Param{{Key: "rho", Value: rho}, {Key: "box", Value: box},
							{Key: "truth", Value: truth}, {Key: "conditional", Value: cond}},
						Problem: ProblemSpec{World: "correlated", Rho: r, Spread: box == "spread", Truth: truth},
						Method:  []record.Param{{Key: "conditional", Value: cond}},
						Quick:   quick,
					}
					s.problemKey = "rho=" + rho + "/box=" + box
					out = append(out, s)
				}
			}
		}
	}
	return out, nil
}

// correlatedProblem draws the correlated world of spec, with the truth the
// spec names as Truth and the data-centric one as DataTruth.
func correlatedProblem(_ context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
	p, err := synth.Correlated(synth.CorrelatedConfig{Instances: spec.Instances, Timesteps: spec.Timesteps, Rho: spec.Rho, Spread: spec.Spread}, seed)
	if err != nil {
		return nil, err
	}
	return &Problem{Data: p.Data, Model: p.Model, Truth: TruthOf(p.ModelTruth), dataTruth: TruthOf(p.DataTruth)}, nil
}

// truthFor returns prob with the truth that spec scores against: the
// data-centric one for Truth "data", else prob itself.
func truthFor(prob *Problem, spec ProblemSpec) (*Problem, error) {
	switch spec.Truth {
	case "", "model":
		return prob, nil
	case "data":
		if prob.dataTruth == nil {
			return nil, fmt.Errorf("experiments: problem has no data-centric truth")
		}
		q := *prob
		q.Truth = prob.dataTruth
		return &q, nil
	}
	return nil, fmt.Errorf("experiments: unknown truth %q (want model or data)", spec.Truth)
}
