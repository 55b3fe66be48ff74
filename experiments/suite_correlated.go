package experiments

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/record/report"
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

// correlatedAxes are the suite's axes: the world's ρ and black box, the
// truth scored against and TIME's parameter conditional.
var correlatedAxes = []axis{
	worldAxis("rho", correlatedRhos, func(w *correlatedWorld, v string) (err error) { w.Rho, err = strconv.ParseFloat(v, 64); return err }),
	worldAxis("box", []string{"A", "spread"}, func(w *correlatedWorld, v string) error {
		if v != "A" && v != "spread" {
			return fmt.Errorf("want A or spread")
		}
		w.Spread = v == "spread"
		return nil
	}),
	viewAxis("truth", []string{"model", "data"}, func(v string) (view, error) {
		switch v {
		case "model":
			return nil, nil
		case "data":
			return dataTruth{}, nil
		}
		return nil, fmt.Errorf("experiments: unknown truth %q (want model or data)", v)
	}),
	methodAxis("conditional", "conditional", "false", "true"),
}

var correlatedSuite = &Suite{
	Name: "correlated", Doc: "marginal against conditional TIME on correlated features (B follows A with correlation ρ; the target depends on A), both black boxes, scored against both truths",
	Models: 20, QuickModels: 3, Methods: correlatedMethods,
	// Time: measured (costs.json); quick: 15 s measured
	// (results/reference/correlated).
	QuickTime: "about 15 s",
	Report:    correlatedReport(), Paper: true,
	settings: correlatedSettings,
}

// correlatedReport draws, for each black box, the feature power and FDR
// against ρ of TIME's marginal and conditional tests and of the baselines
// PERM-f and SAGE-m (from the marginal settings, since they ignore the
// parameter conditional), scored against the model-centric truth (left)
// and the data-centric one (right). TIME-n and PERM, in the suite's table,
// are left out of the figures for legibility.
func correlatedReport() report.Suite {
	var r report.Suite
	marginal := []record.Param{{Key: "conditional", Value: "false"}}
	truth := func(v string) []record.Param { return []record.Param{{Key: "truth", Value: v}} }
	for _, box := range []string{"spread", "A"} {
		r.Sweeps = append(r.Sweeps, report.Sweep{
			Name: "correlated-box-" + box, Heading: "correlated, black box " + box + ": marginal against conditional TIME versus rho",
			X: "rho", Where: []record.Param{{Key: "box", Value: box}},
			Lines: []report.Line{
				{Label: "TIME marginal", Method: "TIME", Where: marginal},
				{Label: "TIME conditional", Method: "TIME", Where: []record.Param{{Key: "conditional", Value: "true"}}},
				{Label: "PERM-f", Method: "PERM-f", Where: marginal},
				{Label: "SAGE-m", Method: "SAGE-m", Where: marginal},
			},
			Columns: []report.Column{
				{Title: "model-centric truth (read)", Where: truth("model"), Power: "feature-power", FDR: "feature-fdr"},
				{Title: "data-centric truth (informative)", Where: truth("data"), Power: "feature-power", FDR: "feature-fdr"},
			},
		})
	}
	return r
}

func correlatedSettings(quick bool, _ string) ([]Setting, error) {
	return sweep(Setting{Problem: ProblemSpec{World: correlatedWorld{}}, Quick: quick}, correlatedAxes)
}

// correlatedWorld is synth.Correlated's world, with correlation Rho and
// the spreading black box when Spread (the spec's Instances and Timesteps,
// zero for its defaults; its other fields are ignored).
type correlatedWorld struct {
	Rho    float64
	Spread bool
}

func (correlatedWorld) Name() string { return "correlated" }

// Generate draws the correlated world of spec, with the model-centric truth
// as Truth and the data-centric one as dataTruth.
func (w correlatedWorld) Generate(_ context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
	p, err := synth.Correlated(synth.CorrelatedConfig{Instances: spec.Instances, Timesteps: spec.Timesteps, Rho: w.Rho, Spread: w.Spread}, seed)
	if err != nil {
		return nil, err
	}
	return &Problem{Data: p.Data, Model: p.Model, Truth: truthOf(p.ModelTruth), dataTruth: truthOf(p.DataTruth)}, nil
}

// dataTruth is the view that scores a problem against its data-centric
// truth (setting truth=data).
type dataTruth struct{}

func (dataTruth) apply(prob *Problem) (*Problem, error) {
	if prob.dataTruth == nil {
		return nil, fmt.Errorf("experiments: problem has no data-centric truth")
	}
	q := *prob
	q.Truth = prob.dataTruth
	return &q, nil
}

func (dataTruth) unsaved() string {
	return "scores against a data-centric truth that has no saved form"
}
