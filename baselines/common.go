package baselines

import (
	"errors"
	"fmt"

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

// countingModel is a method.Meter (call and instance counts, predictions
// checked with tempora.CheckPredictions) whose errors read as the model's:
// "baselines: model: …".
type countingModel struct {
	method.Meter
}

func newCountingModel(m tempora.Model, task tempora.Task) *countingModel {
	return &countingModel{method.Meter{Model: m, Task: task}}
}

func (c *countingModel) Predict(dst []float64, x *tempora.Tensor) error {
	if err := c.Meter.Predict(dst, x); err != nil {
		return fmt.Errorf("baselines: model: %w", err)
	}
	return nil
}

// account fills the model-call fields of a.
func (c *countingModel) account(a *tempora.Accounting) {
	a.ModelCalls = c.Calls()
	a.InstanceEvals = c.Evals()
}

// summarise sets every feature's Score from its cells by the benchmark's
// rule (method.FeatureScores: the mean |cell| over the non-zero cells) and
// marks it tested.
func summarise(e *tempora.Explanation) { method.FeatureScores(e) }

// requireComplete is method.RequireComplete for a baseline: nil for valid
// complete data, "baselines: <name>: …" for invalid data, and the uniform
// refusal of data with missing values, "baselines: <name> needs complete
// data, …", with why the method cannot take them.
func requireComplete(name string, data *tempora.Dataset, minInstances int, why string) error {
	err := method.RequireComplete(name, data, minInstances, why)
	var inc *method.IncompleteError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &inc):
		return fmt.Errorf("baselines: %w", err)
	}
	return fmt.Errorf("baselines: %s: %w", name, err)
}
