package experiments

import (
	"context"
	"fmt"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/metrics"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/synth"
)

// localMethods are the default methods of the local suite: the methods
// with per-instance attributions (OCC, TimeSHAP, LIME) beside global ones
// (TIME, PERM), which are scored per instance with their global cell
// scores. SAGE, which scores like PERM here, is left out of the default for
// its cost (about 25 s per quick-scale problem); -methods adds it.
var localMethods = []string{"TIME", "LIME", "PERM", "OCC", "TimeSHAP"}

// localProblem is the local suite's problem at paper scale: Table 1's shape
// with every feature aggregated by its window's maximum, so that an
// instance's true cells (the argmax timestep of each relevant feature's
// window) differ from the global truth (the whole windows).
var localProblem = ProblemSpec{Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5,
	Task: tempora.Classification, Noise: "auto", Aggregator: "max"}

// quickLocalInstances is the local suite's number of instances at quick
// scale.
const quickLocalInstances = 200

// localSuite compares per-instance attributions with per-instance truth.
var localSuite = &Suite{
	Name: "local", Doc: "per-instance attributions against per-instance truth (1000×10×20, 5 relevant, every feature a window maximum)",
	Models: 20, QuickModels: 3, Methods: localMethods,
	// Quick: measured on the two-core development machine
	// (results/reference/local/quick).
	Time: "about 20 min (estimated)", QuickTime: "about 40 s",
	settings: func(quick bool, _ string) ([]Setting, error) {
		s := Setting{Params: []record.Param{}, Problem: localProblem, Quick: quick, Local: true}
		if quick {
			s.Problem.Instances = quickLocalInstances
			s.Params = []record.Param{{Key: "instances", Value: fmt.Sprint(quickLocalInstances)}}
		}
		s.problemKey = s.Key()
		return []Setting{s}, nil
	},
}

// attribute runs ex on model and data with method.Measure and returns,
// with the explanation, the per-instance attributions of the explainers
// that give them (baselines.Occlusion, TimeSHAP and LIME: n × D × L for the
// first n instances); local is nil for any other explainer.
func attribute(ctx context.Context, ex tempora.Explainer, model tempora.Model, data *tempora.Dataset) (*tempora.Explanation, *tempora.Tensor, error) {
	if data == nil || data.X == nil {
		return nil, nil, fmt.Errorf("experiments: no data to explain")
	}
	a := &attributor{ex: ex}
	e, err := method.Measure(ctx, a, model, data)
	if err != nil {
		return nil, nil, err
	}
	local := a.local
	if local != nil && (local.D != data.X.D || local.L != data.X.L || local.M > data.X.M || len(local.Data) != local.M*local.D*local.L) {
		return nil, nil, fmt.Errorf("experiments: %s gave %d × %d × %d attributions for %d × %d × %d data",
			e.Method, local.M, local.D, local.L, data.X.M, data.X.D, data.X.L)
	}
	return e, local, nil
}

// attributor is an explainer whose Explain runs its explainer's Attribute
// when it has one (baselines.Occlusion, TimeSHAP, LIME), keeping the
// per-instance attributions in local, and its Explain otherwise.
type attributor struct {
	ex    tempora.Explainer
	local *tempora.Tensor
}

func (a *attributor) Explain(ctx context.Context, model tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	var e *tempora.Explanation
	var err error
	switch x := a.ex.(type) {
	case baselines.Occlusion:
		var r *baselines.OcclusionResult
		if r, err = x.Attribute(ctx, model, data); err == nil {
			e, a.local = r.Explanation, r.Local
		}
	case baselines.TimeSHAP:
		var r *baselines.TimeSHAPResult
		if r, err = x.Attribute(ctx, model, data); err == nil {
			e, a.local = r.Explanation, r.Local
		}
	case baselines.LIME:
		var r *baselines.LIMEResult
		if r, err = x.Attribute(ctx, model, data); err == nil {
			e, a.local = r.Explanation, r.Local
		}
	default:
		e, err = a.ex.Explain(ctx, model, data)
	}
	return e, err
}

// instanceTruth returns the per-instance truth of the first n instances of
// data under a synthetic model (synth.Model.InstanceTruth), n × D × L, or
// an error for any other model.
func instanceTruth(model tempora.Model, data *tempora.Dataset, n int) ([]bool, error) {
	sm, ok := model.(*synth.Model)
	if !ok {
		return nil, fmt.Errorf("experiments: per-instance truth needs a synthetic model, not %T", model)
	}
	if n < 0 || n > data.X.M {
		return nil, fmt.Errorf("experiments: per-instance truth of %d of %d instances", n, data.X.M)
	}
	x := data.X.Rows(0, n)
	truth := make([]bool, n*x.D*x.L)
	if err := sm.InstanceTruth(truth, x); err != nil {
		return nil, err
	}
	return truth, nil
}

// instanceScores returns the per-instance metrics (metrics.InstanceMetrics)
// of per-instance attributions local (n × D × L, the first n instances)
// against the per-instance truth of data under model. With local nil the
// global cell scores are every instance's attribution, over all instances
// of data: a global method scored as a local one.
func instanceScores(model tempora.Model, data *tempora.Dataset, cells []float64, local *tempora.Tensor) ([]record.Metric, error) {
	x := data.X
	if local == nil {
		if len(cells) != x.D*x.L {
			return nil, fmt.Errorf("experiments: %d cell scores for %d features × %d timesteps", len(cells), x.D, x.L)
		}
		local = tempora.NewTensor(x.M, x.D, x.L)
		for i := range x.M {
			copy(local.Data[i*x.D*x.L:], cells)
		}
	}
	truth, err := instanceTruth(model, data, local.M)
	if err != nil {
		return nil, err
	}
	a, err := metrics.InstanceMetrics(truth, local.Data, local.M, x.D, x.L)
	if err != nil {
		return nil, err
	}
	return a.Metrics(), nil
}
