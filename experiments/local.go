package experiments

import (
	"context"
	"fmt"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/metrics"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/resident"
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

// attribute runs ex on model and data, with method.MeasureLocal for a
// method.LocalExplainer (OCC, TimeSHAP and LIME, and any researcher's
// method that declares Local), with method.MeasureHeld otherwise (held,
// the model's held-data capability or nil, goes to a method that takes
// it), and returns
// the explanation with the per-instance attributions of a LocalExplainer
// (n × D × L for the first n instances, or for every output of a model
// with K outputs n × K × D × L as a tensor of n·K rows; see
// method.LocalExplainer); local is nil for any other explainer.
func attribute(ctx context.Context, ex tempora.Explainer, model tempora.Model, held resident.Model, data *tempora.Dataset) (*tempora.Explanation, *tempora.Tensor, error) {
	if lx, ok := ex.(method.LocalExplainer); ok {
		return method.MeasureLocal(ctx, lx, model, data)
	}
	e, err := method.MeasureHeld(ctx, ex, model, held, data)
	return e, nil, err
}

// instanceTruther is a model with one output whose per-instance truth is
// known: the cells that move each instance's output (synth.Model).
type instanceTruther interface {
	InstanceTruth(dst []bool, x *tempora.Tensor) error
}

// InstanceOutputTruther is what a model with several outputs needs for
// per-instance metrics (the local suite, "tempora evaluate
// -attributions"): its per-instance truth per output.
type InstanceOutputTruther interface {
	// InstanceOutputTruth writes into dst, of x.M × K × D × L entries
	// (entry ((i·K + k)·D + j)·L + t, K the model's outputs), whether
	// feature j at timestep t moves output k of instance i of x; a missing
	// cell (NaN) is never true. It returns an error for x of another shape
	// than the model's or a dst of another length.
	InstanceOutputTruth(dst []bool, x *tempora.Tensor) error
}

// hasInstanceTruth reports whether model has a per-instance truth for
// data: InstanceTruth for one output, InstanceOutputTruth for several.
func hasInstanceTruth(model tempora.Model, data *tempora.Dataset) bool {
	if data.K() > 1 {
		_, ok := model.(InstanceOutputTruther)
		return ok
	}
	_, ok := model.(instanceTruther)
	return ok
}

// instanceTruth returns the per-instance truth of the first n instances of
// data under model: n × D × L (synth.Model.InstanceTruth), or for a model
// with K outputs n × K × D × L (InstanceOutputTruth); an error for a model
// without one.
func instanceTruth(model tempora.Model, data *tempora.Dataset, n int) ([]bool, error) {
	if !hasInstanceTruth(model, data) {
		if data.K() > 1 {
			return nil, fmt.Errorf("experiments: per-instance truth of a model with %d outputs needs a model with InstanceOutputTruth, not %T", data.K(), model)
		}
		return nil, fmt.Errorf("experiments: per-instance truth needs a synthetic model, not %T", model)
	}
	if n < 0 || n > data.X.M {
		return nil, fmt.Errorf("experiments: per-instance truth of %d of %d instances", n, data.X.M)
	}
	x := data.X.Rows(0, n)
	truth := make([]bool, n*data.K()*x.D*x.L)
	if data.K() > 1 {
		return truth, model.(InstanceOutputTruther).InstanceOutputTruth(truth, x)
	}
	if err := model.(instanceTruther).InstanceTruth(truth, x); err != nil {
		return nil, err
	}
	return truth, nil
}

// instanceScores returns the per-instance metrics
// (metrics.OutputInstanceMetrics) of the explanation e of data's model
// with per-instance attributions local (n × D × L, the first n instances;
// n × K × D × L as n·K rows for every output of a model with K outputs)
// against the per-instance truth of data under model. With local nil the
// global cell scores are every instance's attribution, over all instances
// of data (each output's cells, Explanation.Outputs, for every output of
// a model with several): a global method scored as a local one. An
// explanation of one output of several (Explanation.Output) is scored
// against that output's truth, under its per-output metric names.
func instanceScores(model tempora.Model, data *tempora.Dataset, e *tempora.Explanation, local *tempora.Tensor) ([]record.Metric, error) {
	outputs, err := explainedOutput(data, e)
	if err != nil {
		return nil, err
	}
	if local != nil {
		return localScores(model, data, local, outputs)
	}
	x := data.X
	p := x.D * x.L
	cells := [][]float64{e.Cells}
	if data.K() > 1 && outputs == nil {
		if e.Outputs == nil || len(e.Outputs.Outputs) != data.K() {
			return nil, fmt.Errorf("experiments: %s explains the whole model of %d outputs without each output's cells", e.Method, data.K())
		}
		cells = cells[:0]
		for _, o := range e.Outputs.Outputs {
			cells = append(cells, o.Cells)
		}
	}
	k := len(cells)
	local = tempora.NewTensor(x.M*k, x.D, x.L)
	for o, c := range cells {
		if len(c) != p {
			return nil, fmt.Errorf("experiments: %d cell scores for %d features × %d timesteps", len(c), x.D, x.L)
		}
		for i := range x.M {
			copy(local.Data[(i*k+o)*p:], c)
		}
	}
	return localScores(model, data, local, outputs)
}

// localScores returns the per-instance metrics
// (metrics.OutputInstanceMetrics) of attributions local of the first n
// instances of data against their per-instance truth under model: local
// holds n × K × D × L as n·K rows for all K outputs of data's model
// (outputs nil), or n × D × L for the one output outputs[0] of several.
func localScores(model tempora.Model, data *tempora.Dataset, local *tempora.Tensor, outputs []int) ([]record.Metric, error) {
	x := data.X
	p, k := x.D*x.L, data.K()
	if outputs != nil {
		k = len(outputs)
	}
	if local.D != x.D || local.L != x.L || local.M%k != 0 || local.M/k > x.M {
		return nil, fmt.Errorf("experiments: %d × %d × %d attributions of %d outputs for %d × %d × %d data", local.M, local.D, local.L, k, x.M, x.D, x.L)
	}
	n := local.M / k
	truth, err := instanceTruth(model, data, n)
	if err != nil {
		return nil, err
	}
	if outputs != nil { // one output of several: its truth alone
		kk := data.K()
		own := make([]bool, n*p)
		for i := range n {
			copy(own[i*p:(i+1)*p], truth[(i*kk+outputs[0])*p:(i*kk+outputs[0]+1)*p])
		}
		truth = own
	}
	return metrics.OutputInstanceMetrics(truth, local.Data, n, k, x.D, x.L, outputs)
}

// explainedOutput returns, for an explanation e of one output of data's
// several (Explanation.Output), that output's index, and nil for an
// explanation of the whole model.
func explainedOutput(data *tempora.Dataset, e *tempora.Explanation) ([]int, error) {
	if e.Output == "" || data.K() == 1 {
		return nil, nil
	}
	for o := range data.K() {
		if data.Outputs.Name(o) == e.Output {
			return []int{o}, nil
		}
	}
	return nil, fmt.Errorf("experiments: %s explains output %q, which the model does not have", e.Method, e.Output)
}
