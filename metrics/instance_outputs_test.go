package metrics

import (
	"reflect"
	"testing"

	"github.com/tempora-dev/tempora/record"
)

// TestOutputInstanceMetrics checks the per-instance metrics of several
// outputs: over all (instance, output) pairs under InstanceMetrics's
// names, then each output's under OutputMetricName; one output of a
// model alone under its index; and, for one output of a model with one,
// InstanceMetrics's metrics unchanged.
func TestOutputInstanceMetrics(t *testing.T) {
	// Two instances × two outputs × one feature × three timesteps. Output
	// 0 reads timestep 0 and its attributions rank it first; output 1
	// reads timestep 2 and its attributions rank it last.
	truth := []bool{
		true, false, false, false, false, true, // instance 0: outputs 0, 1
		true, false, false, false, false, true, // instance 1
	}
	attr := []float64{
		3, 1, 1, 2, 2, 1,
		3, 1, 1, 2, 2, 1,
	}
	ms, err := OutputInstanceMetrics(truth, attr, 2, 2, 1, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Cell level: AUROC 1 for output 0, 0 for output 1; AP 1 and 1/3.
	// Feature level: one feature, one class: left out.
	want := []record.Metric{
		{Name: "instance-timestep-auroc", Value: 0.5}, {Name: "instance-timestep-auprc", Value: 2.0 / 3},
		{Name: "instance-timestep-auroc[0]", Value: 1}, {Name: "instance-timestep-auprc[0]", Value: 1},
		{Name: "instance-timestep-auroc[1]", Value: 0}, {Name: "instance-timestep-auprc[1]", Value: 1.0 / 3},
	}
	if !reflect.DeepEqual(ms, want) {
		t.Errorf("metrics %v, want %v", ms, want)
	}
	// Output 1 of a model with several, alone.
	one := []bool{false, false, true, false, false, true}
	oneAttr := []float64{2, 2, 1, 2, 2, 1}
	ms, err = OutputInstanceMetrics(one, oneAttr, 2, 1, 1, 3, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ms, want[4:]) {
		t.Errorf("output 1 alone: %v, want %v", ms, want[4:])
	}
	// One output of a model with one: InstanceMetrics's.
	ms, err = OutputInstanceMetrics(one, oneAttr, 2, 1, 1, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := InstanceMetrics(one, oneAttr, 2, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ms, a.Metrics()) {
		t.Errorf("one output: %v, want %v", ms, a.Metrics())
	}
	for _, bad := range []struct {
		n, k    int
		outputs []int
	}{{2, 3, nil}, {2, 2, []int{0}}, {2, 0, nil}} {
		if _, err := OutputInstanceMetrics(truth, attr, bad.n, bad.k, 1, 3, bad.outputs); err == nil {
			t.Errorf("n %d, k %d, outputs %v: no error", bad.n, bad.k, bad.outputs)
		}
	}
}
