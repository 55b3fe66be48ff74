package builtins

import (
	"context"
	"slices"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// TestLocalMethods checks the built-in methods with per-instance
// attributions: the table declares them (OCC, TimeSHAP, LIME), and each
// one's ExplainLocal gives Explain's explanation and attributions that do
// not depend on the worker count.
func TestLocalMethods(t *testing.T) {
	tab := table(t)
	if got, want := tab.LocalNames(), []string{"LIME", "OCC", "TimeSHAP"}; !slices.Equal(got, want) {
		t.Fatalf("LocalNames = %v, want %v", got, want)
	}
	x := tempora.NewTensor(12, 2, 5)
	for k := range x.Data {
		x.Data[k] = float64((k*7)%11) / 11
	}
	data := &tempora.Dataset{X: x, Y: make([]float64, 12), Task: tempora.Regression}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			dst[i] = 2*x.At(i, 0, 3) - x.At(i, 1, 1)*x.At(i, 0, 4)
		}
		return nil
	})
	params := map[string]map[string]string{"LIME": {"samples": "100"}, "TimeSHAP": {"coalitions": "60"}}
	for _, name := range tab.LocalNames() {
		m, _ := tab.Lookup(name)
		vals, err := m.Values(params[name], false)
		if err != nil {
			t.Fatal(err)
		}
		var first *tempora.Tensor
		for _, workers := range []int{1, 3} {
			ex, err := m.Explainer(method.Config{Seed: 5, Workers: workers, Data: data, Values: vals})
			if err != nil {
				t.Fatal(err)
			}
			e, local, err := method.MeasureLocal(context.Background(), ex.(method.LocalExplainer), model, data)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			plain, err := method.Measure(context.Background(), ex, model, data)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(e.Cells, plain.Cells) {
				t.Errorf("%s: ExplainLocal's cells differ from Explain's", name)
			}
			if first == nil {
				first = local
			} else if !slices.Equal(first.Data, local.Data) {
				t.Errorf("%s: attributions differ between 1 and %d workers", name, workers)
			}
		}
	}
}
