package metrics

import (
	"fmt"
	"strconv"

	"github.com/tempora-dev/tempora/record"
)

// OutputMetricName returns the name of metric name for output k (0-based)
// of a model with several outputs: name followed by "[k]", as in
// "instance-timestep-auroc[2]". The name without an output is the metric
// over every output.
func OutputMetricName(name string, k int) string {
	return name + "[" + strconv.Itoa(k) + "]"
}

// OutputInstanceMetrics scores per-instance attributions of a model with
// several outputs against its per-instance truth per output. Both hold n
// instances × k outputs × d features × l timesteps, instance-major (entry
// ((i·k + o)·d + j)·l + t: instance i's attribution of output o to
// feature j at timestep t, and whether output o of instance i reads that
// cell). Each (instance, output) pair is scored as InstanceMetrics scores
// an instance. With outputs nil, the k outputs are all the model's: it
// returns the metrics over every pair, under InstanceAreas.Metrics's
// names (so that for k = 1 they are InstanceMetrics's), then, for k > 1,
// each output's over its instances under OutputMetricName. Otherwise
// outputs gives the index in the model of each of the k outputs (the
// attributions of some outputs only, as of an explanation of one output),
// and it returns those outputs' metrics alone, under their indices. As
// for InstanceMetrics, a metric with no pair whose truth has both
// classes is left out.
func OutputInstanceMetrics(truth []bool, attributions []float64, n, k, d, l int, outputs []int) ([]record.Metric, error) {
	if k < 1 || (outputs != nil && len(outputs) != k) {
		return nil, fmt.Errorf("metrics: %d outputs (%d indices)", k, len(outputs))
	}
	p := d * l
	if n < 0 || d <= 0 || l <= 0 || len(truth) != n*k*p || len(attributions) != n*k*p {
		return nil, fmt.Errorf("metrics: %d truth values and %d attributions for %d instances × %d outputs × %d features × %d timesteps", len(truth), len(attributions), n, k, d, l)
	}
	var ms []record.Metric
	if outputs == nil {
		all, err := InstanceMetrics(truth, attributions, n*k, d, l)
		if err != nil {
			return nil, err
		}
		if ms = all.Metrics(); k == 1 {
			return ms, nil
		}
	}
	tr := make([]bool, n*p)
	at := make([]float64, n*p)
	for o := range k {
		for i := range n {
			copy(tr[i*p:(i+1)*p], truth[(i*k+o)*p:(i*k+o+1)*p])
			copy(at[i*p:(i+1)*p], attributions[(i*k+o)*p:(i*k+o+1)*p])
		}
		a, err := InstanceMetrics(tr, at, n, d, l)
		if err != nil {
			return nil, fmt.Errorf("%w (output %d)", err, o)
		}
		index := o
		if outputs != nil {
			index = outputs[o]
		}
		for _, m := range a.Metrics() {
			ms = append(ms, record.Metric{Name: OutputMetricName(m.Name, index), Value: m.Value})
		}
	}
	return ms, nil
}
