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
// checked with tempora.CheckOutputs, K per instance) whose errors read as the model's:
// "baselines: model: …". On data with missing values (missing set) they
// add that the model received them as NaN, unimputed.
type countingModel struct {
	method.Meter
	missing bool
}

// newCountingModel returns the counting model of m for data; data's
// missing values, if any, are named in the model's errors.
func newCountingModel(m tempora.Model, data *tempora.Dataset) *countingModel {
	return &countingModel{Meter: method.Meter{Model: m, Task: data.Task, Outputs: data.Outputs}, missing: hasMissing(data.X)}
}

// hasMissing reports whether x holds a NaN.
func hasMissing(x *tempora.Tensor) bool {
	for _, v := range x.Data {
		if tempora.Missing(v) {
			return true
		}
	}
	return false
}

// neverImputes is what the errors of a model given data with missing
// values add.
const neverImputes = "the data has missing values, which the model receives as NaN: tempora never imputes them"

func (c *countingModel) Predict(dst []float64, x *tempora.Tensor) error {
	return c.predictRows(dst, x, nil)
}

// predictRows is Predict for a call whose rows are not the data's
// instances: row(r) says what row r of the call is (for example "instance
// 7 with feature 2's window [3, 4] occluded"), so that a bad prediction
// names the data instance it was made from. A nil row means the rows are
// the data's instances.
func (c *countingModel) predictRows(dst []float64, x *tempora.Tensor, row func(r int) string) error {
	err := c.Meter.Predict(dst, x)
	if err == nil {
		return nil
	}
	if row != nil {
		k := c.Outputs.Len()
		for r := range len(dst) / k {
			if tempora.CheckOutputs(c.Task, c.Outputs, dst[r*k:(r+1)*k]) != nil {
				err = fmt.Errorf("%w (row %d of the call is %s)", err, r, row(r))
				break
			}
		}
	}
	if c.missing {
		return fmt.Errorf("baselines: model: %w; %s", err, neverImputes)
	}
	return fmt.Errorf("baselines: model: %w", err)
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
