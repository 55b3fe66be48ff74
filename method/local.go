package method

import (
	"context"
	"fmt"
	"math"

	"github.com/tempora-dev/tempora"
)

// LocalExplainer is an explainer with per-instance attributions, the
// capability a method declares with Method.Local (OCC, TimeSHAP and LIME
// among the built-in methods). The command line writes the attributions
// ("tempora explain -attributions") and the benchmark scores them against
// each instance's truth.
type LocalExplainer interface {
	tempora.Explainer
	// ExplainLocal explains data as Explain does (the same explanation)
	// and returns with it the attributions of data's first n instances
	// (1 ≤ n ≤ M, each explainer its own n): n × D × L for a model with
	// one output or an explanation of one output (Explanation.Output),
	// else, for all K outputs of a model with several, a tensor of n·K
	// rows, row i·K + k instance i's attributions to output k.
	ExplainLocal(ctx context.Context, model tempora.Model, data *tempora.Dataset) (*tempora.Explanation, *tempora.Tensor, error)
}

// checkLocal returns an error unless ex is a LocalExplainer exactly when
// m declares Local.
func (m *Method) checkLocal(ex tempora.Explainer) error {
	_, isLocal := ex.(LocalExplainer)
	switch {
	case m.Local && !isLocal:
		return fmt.Errorf("method: %s declares Local, but its explainer %T has no ExplainLocal", m.Name, ex)
	case !m.Local && isLocal:
		return fmt.Errorf("method: %s: its explainer %T gives per-instance attributions (ExplainLocal), but the method does not declare it (set Method.Local)", m.Name, ex)
	}
	return nil
}

// MeasureLocal is Measure for a LocalExplainer: it runs ex.ExplainLocal on
// model and data behind a Meter and returns the explanation, checked and
// with its accounting as Measure fills it, and the per-instance
// attributions, checked by CheckAttributions.
func MeasureLocal(ctx context.Context, ex LocalExplainer, model tempora.Model, data *tempora.Dataset) (*tempora.Explanation, *tempora.Tensor, error) {
	var local *tempora.Tensor
	e, err := measure(data, model, func(m *Meter) (*tempora.Explanation, error) {
		e, l, err := ex.ExplainLocal(ctx, m, data)
		local = l
		return e, err
	})
	if err != nil {
		return nil, nil, err
	}
	if err := CheckAttributions(e, local, data); err != nil {
		return nil, nil, err
	}
	return e, local, nil
}

// ExplainedOutputs returns the number of outputs e explains of data's
// model, the K of its attributions: one when e explains one output
// (Explanation.Output) or the model has one, else all of data's outputs.
func ExplainedOutputs(e *tempora.Explanation, data *tempora.Dataset) int {
	if e.Output != "" {
		return 1
	}
	return data.K()
}

// CheckAttributions returns an error unless local holds per-instance
// attributions of e's explanation of data as LocalExplainer describes
// them: n·K rows of data's D × L cells for 1 ≤ n ≤ M (K from
// ExplainedOutputs), every value finite.
func CheckAttributions(e *tempora.Explanation, local *tempora.Tensor, data *tempora.Dataset) error {
	name := e.Method
	if local == nil {
		return fmt.Errorf("method: %s gave no per-instance attributions", name)
	}
	k, x := ExplainedOutputs(e, data), data.X
	if local.D != x.D || local.L != x.L || local.M < k || local.M%k != 0 || local.M/k > x.M || len(local.Data) != local.M*local.D*local.L {
		return fmt.Errorf("method: %s gave %d × %d × %d attributions of %d outputs for %d × %d × %d data",
			name, local.M, local.D, local.L, k, x.M, x.D, x.L)
	}
	for i, v := range local.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("method: %s: attribution %d is %v", name, i, v)
		}
	}
	return nil
}
