package experiments_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/experiments"
	"github.com/tempora-dev/tempora/method"
)

// Occlusion is a new explanation method to compare: the score of cell
// (j, t) is the mean absolute change of the predictions when that cell is
// set to zero in every instance.
type Occlusion struct{}

func (Occlusion) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	if err := data.Validate(1); err != nil {
		return nil, err
	}
	x := data.X.Clone()
	base := make([]float64, x.M)
	if err := m.Predict(base, x); err != nil {
		return nil, err
	}
	pred := make([]float64, x.M)
	saved := make([]float64, x.M)
	e := tempora.NewExplanation("occlusion", data)
	for j := range x.D {
		for t := range x.L {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for i := range x.M {
				saved[i] = x.At(i, j, t)
				x.Set(i, j, t, 0)
			}
			if err := m.Predict(pred, x); err != nil {
				return nil, err
			}
			var s float64
			for i := range x.M {
				s += math.Abs(pred[i] - base[i])
				x.Set(i, j, t, saved[i])
			}
			e.Cells[j*x.L+t] = s / float64(x.M)
		}
	}
	// Feature scores by the benchmark's rule; the framework counts the model
	// calls (method.Measure), so the explainer need not.
	method.FeatureScores(e)
	return e, nil
}

// This example benchmarks a new method against TIME on a small sweep: it
// registers the method, runs the grid suite with both, and prints each
// record's feature power. The same Options with Suite "table1" (and no
// Grid) would add it to the paper's baseline comparison.
func ExampleRun() {
	out, err := os.MkdirTemp("", "tempora-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)

	occ := method.Method{
		Name: "occlusion",
		Doc:  "zero occlusion: mean |change of prediction| when a cell is set to 0",
		// New receives the derived seed, the worker count, the data and the
		// parameter values; Occlusion needs none of them. Mode is TopN (the
		// zero value): scored like the paper's baselines.
		New: func(method.Config) (tempora.Explainer, error) { return Occlusion{}, nil },
	}
	err = experiments.Run(context.Background(), experiments.Options{
		Suite:   "grid",
		Grid:    "instances=200;features=4;timesteps=8",
		Models:  2,
		Methods: []string{"TIME", "occlusion"},
		Extra:   []method.Method{occ},
		Out:     out,
	})
	if err != nil {
		log.Fatal(err)
	}
	recs, err := experiments.ReadRecords(out)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		p, _ := r.Get("feature-power")
		fmt.Printf("model %d %-9s feature power %.2f\n", r.Model, r.Method, p)
	}
	// Output:
	// model 0 TIME      feature power 1.00
	// model 0 occlusion feature power 0.50
	// model 1 TIME      feature power 1.00
	// model 1 occlusion feature power 1.00
}
