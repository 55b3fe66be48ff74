package baselines

import (
	"fmt"
	"sync/atomic"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// checkWorkers returns an error for a negative worker count.
func checkWorkers(name string, w int) error {
	if w < 0 {
		return fmt.Errorf("baselines: %s Workers is %d, want 0 (GOMAXPROCS) or more", name, w)
	}
	return nil
}

// countingModel wraps a model, counts its calls and instance evaluations,
// and checks every batch of predictions with tempora.CheckPredictions so a
// broken model is reported rather than explained. It is safe for
// concurrent use if the wrapped model is.
type countingModel struct {
	m     tempora.Model
	task  tempora.Task
	calls atomic.Int64
	evals atomic.Int64
}

func (c *countingModel) Predict(dst []float64, x *tempora.Tensor) error {
	c.calls.Add(1)
	c.evals.Add(int64(x.M))
	if err := c.m.Predict(dst, x); err != nil {
		return fmt.Errorf("baselines: model: %w", err)
	}
	if err := tempora.CheckPredictions(c.task, dst); err != nil {
		return fmt.Errorf("baselines: %w", err)
	}
	return nil
}

// account fills the model-call fields of a.
func (c *countingModel) account(a *tempora.Accounting) {
	a.ModelCalls = c.calls.Load()
	a.InstanceEvals = c.evals.Load()
}

// summarise sets every feature's Score from its cells by the benchmark's
// rule (method.FeatureScores: the mean |cell| over the non-zero cells) and
// marks it tested.
func summarise(e *tempora.Explanation) { method.FeatureScores(e) }
