package method_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// Perturb scores cell (j, t) by the mean absolute change of the
// predictions when the cell is shifted by Delta in every instance, one
// parallel work item per cell.
type Perturb struct {
	Delta   float64
	Workers int
}

func (p Perturb) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	// Shifting a missing (NaN) cell has no meaning: refuse incomplete data
	// with the one refusal.
	if err := method.RequireComplete("perturb", data, 1, "it shifts every cell"); err != nil {
		return nil, err
	}
	x := data.X
	base := make([]float64, x.M)
	if err := m.Predict(base, x); err != nil {
		return nil, err
	}
	e := tempora.NewExplanation("perturb", data)
	err := method.Parallel(ctx, p.Workers, x.D*x.L, func(_, k int) error {
		c := x.Clone()
		for i := range x.M {
			c.Set(i, k/x.L, k%x.L, c.At(i, k/x.L, k%x.L)+p.Delta)
		}
		pred := make([]float64, x.M)
		if err := m.Predict(pred, c); err != nil {
			return err
		}
		for i := range pred {
			e.Cells[k] += math.Abs(pred[i]-base[i]) / float64(x.M)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	method.FeatureScores(e) // feature scores from the cells, the benchmark's rule
	return e, nil
}

// The table entry: name, description, one typed parameter, constructor.
var perturb = method.Method{
	Name:   "perturb",
	Doc:    "mean |change of prediction| when a cell is shifted by delta",
	Params: []method.Param{{Name: "delta", Doc: "shift of a cell", Default: 1.0, Range: "(0, inf)"}},
	New: func(c method.Config) (tempora.Explainer, error) {
		return Perturb{Delta: c.Values.Float("delta"), Workers: c.Workers}, nil
	},
}

// This example defines a method and runs it the way the command line and
// the benchmark do: parameter values from text, then Measure, which counts
// the model calls.
func Example() {
	x := tempora.NewTensor(3, 2, 2) // 3 instances × 2 features × 2 timesteps
	for i := range x.M {
		x.Set(i, 0, 1, float64(i))
	}
	data := &tempora.Dataset{X: x, Y: []float64{0, 2, 4}, Task: tempora.Regression}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			dst[i] = 2 * x.At(i, 0, 1) // uses feature 0 at timestep 1 only
		}
		return nil
	})

	vals, err := perturb.Values(map[string]string{"delta": "0.5"}, false)
	if err != nil {
		log.Fatal(err)
	}
	ex, err := perturb.Explainer(method.Config{Seed: 1, Workers: 2, Data: data, Values: vals})
	if err != nil {
		log.Fatal(err)
	}
	e, err := method.Measure(context.Background(), ex, model, data)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(vals.Describe())
	fmt.Println("cells:", e.Cells)
	fmt.Println("feature scores:", e.Features[0].Score, e.Features[1].Score)
	fmt.Println("model calls:", e.Accounting.ModelCalls)
	// Output:
	// delta=0.5
	// cells: [0 1 0 0]
	// feature scores: 1 0
	// model calls: 5
}
