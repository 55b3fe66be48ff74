package tempora

import (
	"fmt"
	"math"
)

// Model is a black-box temporal model: it maps each instance of a data tensor
// to one prediction (a real value for regression, the probability of class 1
// for binary classification).
//
// Predict writes x.M predictions into dst, which has length x.M. It must not
// modify x and must not retain x or dst after returning. Explainers call
// Predict concurrently from several goroutines with different tensors;
// implementations that cannot be used concurrently must serialise calls
// themselves. An error aborts the explanation that made the call.
type Model interface {
	Predict(dst []float64, x *Tensor) error
}

// ModelFunc adapts a function to the Model interface.
type ModelFunc func(dst []float64, x *Tensor) error

// Predict calls f(dst, x).
func (f ModelFunc) Predict(dst []float64, x *Tensor) error { return f(dst, x) }

// Task is the kind of prediction a model makes.
type Task int

const (
	// Regression models predict real values; the default loss is quadratic.
	Regression Task = iota
	// Classification models predict the probability of class 1 of a binary
	// label; the default loss is binary cross-entropy.
	Classification
)

// String returns "regression" or "classification".
func (t Task) String() string {
	switch t {
	case Regression:
		return "regression"
	case Classification:
		return "classification"
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// ParseTask parses "regression" or "classification".
func ParseTask(s string) (Task, error) {
	switch s {
	case "regression":
		return Regression, nil
	case "classification":
		return Classification, nil
	}
	return 0, fmt.Errorf("tempora: unknown task %q (want regression or classification)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (t Task) MarshalText() ([]byte, error) {
	if t != Regression && t != Classification {
		return nil, fmt.Errorf("tempora: invalid task %d", int(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Task) UnmarshalText(b []byte) error {
	v, err := ParseTask(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// Dataset is what an explainer analyses: a data tensor, one target per
// instance, the task, and optional feature names.
type Dataset struct {
	X *Tensor
	// Y holds the targets: labels 0/1 for classification, real values for
	// regression.
	Y    []float64
	Task Task
	// FeatureNames, if non-nil, has one name per feature; nil means "0",
	// "1", ….
	FeatureNames []string
	// Alignment says which end of the time axis sequences of different
	// lengths share (see Observation); the zero value is AlignStart. It
	// matters only for data with missing values (NaN).
	Alignment Alignment
	// Outputs, if not nil, says that the model returns several numbers
	// per instance (class probabilities, horizons, output steps) and how
	// Y holds their targets (Outputs.TargetWidth per instance); nil means
	// one output: one target per instance, as above.
	Outputs *Outputs
}

// K returns the number of outputs the model returns per instance: 1
// without Outputs.
func (d *Dataset) K() int { return d.Outputs.Len() }

// CheckPredictions returns an error if a prediction of the dataset's
// model, x.M·K values for x.M instances, instance-major, is not finite,
// not a probability for classification, or (for classes) if an
// instance's class probabilities do not sum to 1. With one output it is
// CheckPredictions(d.Task, pred).
func (d *Dataset) CheckPredictions(pred []float64) error {
	return CheckOutputs(d.Task, d.Outputs, pred)
}

// CheckOutputs is CheckPredictions for a model with outputs o (nil: one
// output): pred holds K predictions per instance.
func CheckOutputs(task Task, o *Outputs, pred []float64) error {
	return checkOutputs(task, o, pred, -1)
}

// CheckOutputsAt is CheckOutputs for the predictions of the dataset's
// instances first, first+1, … in order (a block of its rows): the error
// names the dataset's instance, in its message and, for one output, as
// the DataError's Instance (as LocatePrediction does).
func CheckOutputsAt(task Task, o *Outputs, pred []float64, first int) error {
	return checkOutputs(task, o, pred, max(0, first))
}

// checkOutputs is CheckOutputs with the predictions' first instance of
// the dataset, or −1 when they name none.
func checkOutputs(task Task, o *Outputs, pred []float64, first int) error {
	if o == nil {
		return checkPredictions(task, pred, first)
	}
	return o.checkPredictions(task, pred, max(0, first))
}

// Name returns the name of feature j.
func (d *Dataset) Name(j int) string {
	if d.FeatureNames != nil {
		return d.FeatureNames[j]
	}
	return fmt.Sprint(j)
}

// Validate checks a dataset with complete data: the data tensor (shape,
// finite values: a NaN is a missing value, which the caller does not
// accept), the targets (one per instance, finite, 0/1 for
// classification), the task and the feature names (one per feature,
// distinct, non-empty). minInstances is the smallest M the caller can work
// with. Callers that accept missing values use Observe instead. An error
// about the data, targets or names is a *DataError saying what is wrong and
// where.
func (d *Dataset) Validate(minInstances int) error {
	if d == nil {
		return fmt.Errorf("tempora: nil dataset")
	}
	if err := d.X.Validate(); err != nil {
		return err
	}
	return d.validateRest(minInstances)
}

// Observe checks a dataset that may have missing values (NaN) as Validate
// checks a complete one, and returns where its data is observed. It
// returns an error for ±Inf, an invalid alignment, an instance with no
// observed value, a feature that is never observed and sequences that
// share the other end of the time axis than d.Alignment says, naming the
// instance or feature; as Validate's, an error about the dataset is a
// *DataError.
func (d *Dataset) Observe(minInstances int) (*Observation, error) {
	if d == nil {
		return nil, fmt.Errorf("tempora: nil dataset")
	}
	x := d.X
	if err := x.validateShape(); err != nil {
		return nil, err
	}
	if err := d.validateRest(minInstances); err != nil {
		return nil, err
	}
	return observe(x, d.Alignment, d.describeFeature)
}

// describeFeature names feature j in messages: its index, and its name
// when the dataset has names.
func (d *Dataset) describeFeature(j int) string {
	if d.FeatureNames != nil && j < len(d.FeatureNames) {
		return fmt.Sprintf("%d (%q)", j, d.FeatureNames[j])
	}
	return fmt.Sprint(j)
}

// validateRest checks everything but the data values.
func (d *Dataset) validateRest(minInstances int) error {
	if d.X.M < minInstances {
		return dataErrorf(KindShape, "tempora: %d instances, need at least %d", d.X.M, minInstances)
	}
	if d.Outputs != nil {
		if err := d.Outputs.validate(d.Task, d.X.L); err != nil {
			return err
		}
		if err := d.Outputs.validateTargets(d.Y, d.X.M, d.Task); err != nil {
			return err
		}
	} else if len(d.Y) != d.X.M {
		return dataErrorf(KindTargets, "tempora: %d targets for %d instances", len(d.Y), d.X.M).WithCount(len(d.Y))
	}
	if d.Task != Regression && d.Task != Classification {
		return fmt.Errorf("tempora: invalid task %d", int(d.Task))
	}
	if d.Alignment != AlignStart && d.Alignment != AlignEnd {
		return fmt.Errorf("tempora: invalid alignment %d", int(d.Alignment))
	}
	for i, y := range d.Y {
		if d.Outputs != nil {
			break // checked by validateTargets
		}
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return dataErrorf(KindTarget, "tempora: target of instance %d is %v", i, y).At(i, -1, -1).WithValue(y).WithCount(countNonFinite(d.Y))
		}
		if d.Task == Classification && y != 0 && y != 1 {
			return dataErrorf(KindTarget, "tempora: classification target of instance %d is %v, want 0 or 1", i, y).At(i, -1, -1).WithValue(y)
		}
	}
	if d.FeatureNames != nil {
		if len(d.FeatureNames) != d.X.D {
			return dataErrorf(KindFeatureNames, "tempora: %d feature names for %d features", len(d.FeatureNames), d.X.D).WithCount(len(d.FeatureNames))
		}
		seen := make(map[string]int, len(d.FeatureNames))
		for j, n := range d.FeatureNames {
			if n == "" {
				return dataErrorf(KindFeatureNames, "tempora: feature %d has an empty name", j).At(-1, j, -1)
			}
			if k, ok := seen[n]; ok {
				return dataErrorf(KindFeatureNames, "tempora: features %d and %d share the name %q", k, j, n).At(-1, j, -1)
			}
			seen[n] = j
		}
	}
	return nil
}

// CheckPredictions returns an error if a prediction is not finite, or, for
// classification, not a probability in [0, 1]. The message ("tempora:
// predicted +Inf for instance 0", the index in pred) reads as a model error
// once a caller wraps it as one ("explain: model: predicted +Inf for
// instance 0"). Explainers call it on the baseline predictions so that a
// broken model is reported, not explained. The error is a *DataError of
// KindPrediction with Row i and no instance: pred may be any batch (of
// samples, of single rows), whose positions name no instance of the data
// unless the caller says so (LocatePrediction).
func CheckPredictions(task Task, pred []float64) error { return checkPredictions(task, pred, -1) }

// checkPredictions is CheckPredictions for predictions of the dataset's
// instances first, first+1, … (first −1: of no known instance).
func checkPredictions(task Task, pred []float64, first int) error {
	for i, p := range pred {
		bad := math.IsNaN(p) || math.IsInf(p, 0)
		if !bad && (task != Classification || (p >= 0 && p <= 1)) {
			continue
		}
		want := ""
		if !bad {
			want = ", want a probability in [0, 1] for classification"
		}
		e := predictionErrorf(i, p, "tempora: predicted %v for instance %d%s", p, max(0, first)+i, want)
		if first >= 0 {
			e.Instance = first + i
		}
		return e
	}
	return nil
}

// predictionErrorf is the KindPrediction error of prediction p at row i.
func predictionErrorf(i int, p float64, format string, args ...any) *DataError {
	e := dataErrorf(KindPrediction, format, args...).WithValue(p)
	e.Row = i
	return e
}

// countNonFinite returns the number of values of s that are NaN or ±Inf
// (only on an error's path: it reads all of s).
func countNonFinite(s []float64) int {
	n := 0
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			n++
		}
	}
	return n
}
