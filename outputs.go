package tempora

import (
	"fmt"
	"math"
	"strconv"
)

// OutputKind says what the outputs of a model with several outputs per
// instance are (Outputs).
type OutputKind int

const (
	// Classes: the model returns the probabilities of K ≥ 3 classes (they
	// sum to 1), and the targets are labels 0..K−1, one per instance.
	// The whole model's loss is the categorical cross-entropy −ln p_y;
	// class k's is the binary cross-entropy of p_k against 1{y = k}. It
	// needs Task Classification.
	Classes OutputKind = iota + 1
	// Horizons: the model forecasts K values ahead of the sequence, output
	// k for input timestep L + k (one step after the last, then further)
	// unless Outputs.Anchors says otherwise; the targets are K values per
	// instance (NaN: none). Each output's loss is the task's (squared
	// error, or binary cross-entropy of 0/1 targets).
	Horizons
	// Steps: a sequence-to-sequence model returns one value per output
	// step, output s at input timestep s unless Outputs.Anchors says
	// otherwise; the targets are K values per instance, NaN where an
	// output step does not exist (sequences of different lengths). Each
	// output's loss is the task's.
	Steps
)

// String returns "classes", "horizons" or "steps".
func (k OutputKind) String() string {
	switch k {
	case Classes:
		return "classes"
	case Horizons:
		return "horizons"
	case Steps:
		return "steps"
	}
	return "OutputKind(" + strconv.Itoa(int(k)) + ")"
}

// ParseOutputKind parses "classes", "horizons" or "steps".
func ParseOutputKind(s string) (OutputKind, error) {
	for _, k := range []OutputKind{Classes, Horizons, Steps} {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("tempora: unknown output kind %q (want classes, horizons or steps)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (k OutputKind) MarshalText() ([]byte, error) {
	if k < Classes || k > Steps {
		return nil, fmt.Errorf("tempora: invalid output kind %d", int(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *OutputKind) UnmarshalText(b []byte) error {
	v, err := ParseOutputKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Outputs describes a model that returns K numbers per instance: the
// probabilities of K classes, K horizons of a forecast or one value per
// output step. A Dataset with nil Outputs has one output per instance
// (the probability of class 1, or a real value), and every result for
// such data is what it was before models with several outputs existed.
type Outputs struct {
	// Kind is what the outputs are.
	Kind OutputKind
	// K is the number of outputs per instance: at least 3 for Classes (2
	// classes are one output, the probability of class 1), at least 1
	// otherwise.
	K int
	// Names, if not nil, names each output ("cat", "h+6", …); nil means
	// "0", "1", ….
	Names []string
	// Anchors, if not nil, gives each output's position on the input's
	// time axis (an input timestep, or beyond the last for a forecast):
	// windows in relative time are lags from it (Lag). nil means the
	// kind's default: output s at timestep s for Steps, output k at L + k
	// for Horizons. Classes have no anchor.
	Anchors []int
}

// Len returns the number of outputs per instance: 1 for nil Outputs.
func (o *Outputs) Len() int {
	if o == nil {
		return 1
	}
	return o.K
}

// Name returns the name of output k.
func (o *Outputs) Name(k int) string {
	if o != nil && o.Names != nil {
		return o.Names[k]
	}
	return strconv.Itoa(k)
}

// Anchor returns output k's position on the time axis of inputs of L
// timesteps, and false for outputs without one (classes, or one output).
func (o *Outputs) Anchor(k, l int) (int, bool) {
	switch {
	case o == nil || o.Kind == Classes:
		return 0, false
	case o.Anchors != nil:
		return o.Anchors[k], true
	case o.Kind == Horizons:
		return l + k, true
	}
	return k, true
}

// Lag returns window w of the inputs in lag coordinates relative to
// output k (inputs of L timesteps): the lags a − End … a − Start from the
// output's anchor a, so lag 0 is the anchor's own timestep and a negative
// lag lies after it. It returns false for outputs without an anchor.
func (o *Outputs) Lag(w Window, k, l int) (Window, bool) {
	a, ok := o.Anchor(k, l)
	if !ok {
		return Window{}, false
	}
	return Window{Start: a - w.End, End: a - w.Start}, true
}

// TargetWidth returns the number of targets per instance: 1 for one
// output or for Classes (a label), K otherwise.
func (o *Outputs) TargetWidth() int {
	if o == nil || o.Kind == Classes {
		return 1
	}
	return o.K
}

// validate checks o for a task and inputs of L timesteps.
func (o *Outputs) validate(task Task, l int) error {
	switch o.Kind {
	case Classes:
		if task != Classification {
			return fmt.Errorf("tempora: outputs are classes, which needs task classification, not %v", task)
		}
		if o.K < 3 {
			return fmt.Errorf("tempora: %d classes: two classes are one output (the probability of class 1), so classes need K ≥ 3", o.K)
		}
		if o.Anchors != nil {
			return fmt.Errorf("tempora: class outputs have no anchors on the time axis")
		}
	case Horizons, Steps:
		if o.K < 1 {
			return fmt.Errorf("tempora: %d %v outputs, want at least 1", o.K, o.Kind)
		}
	default:
		return fmt.Errorf("tempora: invalid output kind %d", int(o.Kind))
	}
	if o.Names != nil {
		if len(o.Names) != o.K {
			return fmt.Errorf("tempora: %d output names for %d outputs", len(o.Names), o.K)
		}
		seen := make(map[string]int, o.K)
		for k, n := range o.Names {
			if n == "" {
				return fmt.Errorf("tempora: output %d has an empty name", k)
			}
			if j, ok := seen[n]; ok {
				return fmt.Errorf("tempora: outputs %d and %d share the name %q", j, k, n)
			}
			seen[n] = k
		}
	}
	if o.Anchors != nil && len(o.Anchors) != o.K {
		return fmt.Errorf("tempora: %d output anchors for %d outputs", len(o.Anchors), o.K)
	}
	return nil
}

// validateTargets checks the targets of a dataset with several outputs
// (o not nil): M labels in 0..K−1 for classes, M·K values otherwise, each
// 0 or 1 for classification or NaN (no target), with at least one target
// per instance and per output.
func (o *Outputs) validateTargets(y []float64, m int, task Task) error {
	if o.Kind == Classes {
		if len(y) != m {
			return fmt.Errorf("tempora: %d targets for %d instances (one class label each)", len(y), m)
		}
		for i, v := range y {
			if !(v >= 0 && v < float64(o.K) && v == math.Trunc(v)) {
				return fmt.Errorf("tempora: class label of instance %d is %v, want an integer in [0, %d]", i, v, o.K-1)
			}
		}
		return nil
	}
	if len(y) != m*o.K {
		return fmt.Errorf("tempora: %d targets for %d instances × %d outputs", len(y), m, o.K)
	}
	perOutput := make([]int, o.K)
	for i := range m {
		n := 0
		for k, v := range y[i*o.K : (i+1)*o.K] {
			switch {
			case math.IsNaN(v):
				continue
			case math.IsInf(v, 0):
				return fmt.Errorf("tempora: target of instance %d, output %s is %v", i, o.Name(k), v)
			case task == Classification && v != 0 && v != 1:
				return fmt.Errorf("tempora: classification target of instance %d, output %s is %v, want 0 or 1", i, o.Name(k), v)
			}
			n++
			perOutput[k]++
		}
		if n == 0 {
			return fmt.Errorf("tempora: instance %d has no target (every output NaN)", i)
		}
	}
	for k, n := range perOutput {
		if n == 0 {
			return fmt.Errorf("tempora: output %s has no target in any instance", o.Name(k))
		}
	}
	return nil
}

// checkPredictions checks M·K predictions of o, those of instances first,
// first+1, …: finite, probabilities in [0, 1] for classification, and for
// classes summing to 1 within classSumTolerance per instance.
func (o *Outputs) checkPredictions(task Task, pred []float64, first int) error {
	k := o.K
	for r := 0; r*k < len(pred); r++ {
		row, i := pred[r*k:(r+1)*k], first+r
		sum := 0.0
		for c, p := range row {
			if math.IsNaN(p) || math.IsInf(p, 0) {
				return fmt.Errorf("tempora: predicted %v for instance %d, output %s", p, i, o.Name(c))
			}
			if task == Classification && (p < 0 || p > 1) {
				return fmt.Errorf("tempora: predicted %v for instance %d, output %s, want a probability in [0, 1] for classification", p, i, o.Name(c))
			}
			sum += p
		}
		if o.Kind == Classes && math.Abs(sum-1) > classSumTolerance {
			return fmt.Errorf("tempora: the class probabilities predicted for instance %d sum to %v, want 1", i, sum)
		}
	}
	return nil
}

// classSumTolerance is how far the class probabilities of one instance
// may sum from 1: float32 softmax outputs of a few dozen classes sum to 1
// within about 1e−6.
const classSumTolerance = 1e-4
