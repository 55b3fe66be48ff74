package builtins

import (
	"context"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// outputsProblem returns 30 instances of 3 features × 4 timesteps and a
// model of two horizons, "near" (feature 0's mean) and "far" (feature 1's),
// with its outputs as targets.
func outputsProblem() (*tempora.Dataset, tempora.Model) {
	x := tempora.NewTensor(30, 3, 4)
	rng := tempora.NewRand(1, "builtins-outputs")
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			for c := range 2 {
				var s float64
				for t := range x.L {
					s += x.At(i, c, t)
				}
				dst[i*2+c] = s / float64(x.L)
			}
		}
		return nil
	})
	y := make([]float64, 60)
	_ = model.Predict(y, x)
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression,
		Outputs: &tempora.Outputs{Kind: tempora.Horizons, K: 2, Names: []string{"near", "far"}}}, model
}

// TestOutputParameter checks the output parameter of every method that
// has one: by name or index it explains that output alone and says so,
// empty it explains the whole model with each output's cells, and an
// output the model does not have is an error of the constructor.
func TestOutputParameter(t *testing.T) {
	data, model := outputsProblem()
	params := map[string]string{"samples": "200", "max-permutations": "64", "instances-explained": "5", "permutations": "20", "background": "8"}
	for _, m := range table(t).Methods() {
		if m.Param("output") == nil {
			continue
		}
		for _, tc := range []struct{ value, want string }{{"", ""}, {"far", "far"}, {"0", "near"}} {
			given := map[string]string{"output": tc.value}
			for k, v := range params {
				if m.Param(k) != nil {
					given[k] = v
				}
			}
			v, err := m.Values(given, true)
			if err != nil {
				t.Fatal(err)
			}
			ex, err := m.Explainer(method.Config{Seed: 1, Workers: 2, Data: data, Values: v})
			if err != nil {
				t.Fatal(err)
			}
			e, err := method.Measure(context.Background(), ex, model, data)
			if err != nil {
				t.Fatalf("%s -output %q: %v", m.Name, tc.value, err)
			}
			if e.Output != tc.want || (e.Outputs != nil) != (tc.want == "") {
				t.Errorf("%s -output %q: explains %q with per-output results %v, want %q", m.Name, tc.value, e.Output, e.Outputs != nil, tc.want)
			}
		}
		v, err := m.Values(map[string]string{"output": "middle"}, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Explainer(method.Config{Data: data, Values: v}); err == nil || !strings.Contains(err.Error(), `no output "middle"`) {
			t.Errorf("%s -output middle: %v, want an error naming the output", m.Name, err)
		}
	}
}
