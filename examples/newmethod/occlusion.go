package main

import (
	"context"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// Occlusion is mean occlusion: each feature-timestep cell in turn is replaced by its mean
// over the instances; its score is the increase in mean loss (a feature's, from its cells).
type Occlusion struct{ Workers int }

// Method is Occlusion's entry in the method table.
var Method = method.Method{
	Name: "occlusion",
	Doc:  "mean occlusion: increase in mean loss when a cell is replaced by its mean over instances",
	New: func(c method.Config) (tempora.Explainer, error) {
		return Occlusion{Workers: c.Workers}, nil
	},
}

func (o Occlusion) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	// A method for complete data refuses missing values with the one
	// refusal, so that benchmarks can tell it from a failure.
	if err := method.RequireComplete("occlusion", data, 1, "it replaces each cell by its mean over instances"); err != nil {
		return nil, err
	}
	x, loss := data.X, tempora.LossFor(data.Task)
	meanLoss := func(xs *tempora.Tensor) (float64, error) {
		pred, l := make([]float64, xs.M), make([]float64, xs.M)
		if err := m.Predict(pred, xs); err != nil {
			return 0, err
		}
		loss(l, data.Y, pred)
		var s float64
		for _, v := range l {
			s += v / float64(xs.M)
		}
		return s, nil
	}
	base, err := meanLoss(x)
	if err != nil {
		return nil, err
	}
	e := tempora.NewExplanation(Method.Name, data)
	err = method.Parallel(ctx, o.Workers, x.D*x.L, func(_, k int) error {
		c, j, t := x.Clone(), k/x.L, k%x.L
		var mean float64
		for i := range x.M {
			mean += x.At(i, j, t) / float64(x.M)
		}
		for i := range x.M {
			c.Set(i, j, t, mean)
		}
		l, err := meanLoss(c)
		e.Cells[k] = l - base
		return err
	})
	method.FeatureScores(e)
	return e, err
}
