package tempora

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestDataErrorFields checks the kind and location of every error the
// dataset checks return: what a program reading the command line's JSON
// error object (docs/errors.md) decides on, so that it never reads the
// message.
func TestDataErrorFields(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	valid := func() *Dataset { return validDataset() } // 4 × 2 × 3, classification, names hr, bp
	obs := func(d *Dataset) error { _, err := d.Observe(1); return err }
	val := func(d *Dataset) error { return d.Validate(1) }
	tensor := func(m, d, l int, data []float64) *Tensor { x, _ := TensorFrom(m, d, l, data); return x }
	for _, tc := range []struct {
		name    string
		err     error
		kind    DataErrorKind
		i, j, t int
		value   float64 // NaN: none
		count   int
	}{
		{"empty shape", val(&Dataset{X: &Tensor{M: 0, D: 2, L: 3}}), KindShape, -1, -1, -1, nan, 0},
		{"storage", obs(&Dataset{X: &Tensor{M: 1, D: 2, L: 3, Data: make([]float64, 5)}, Y: []float64{0}}), KindShape, -1, -1, -1, nan, 0},
		{"too few instances", valid().Validate(5), KindShape, -1, -1, -1, nan, 0},
		{"targets", func() error { d := valid(); d.Y = d.Y[:3]; return obs(d) }(), KindTargets, -1, -1, -1, nan, 3},
		{"target not finite", func() error { d := valid(); d.Task = Regression; d.Y[2], d.Y[3] = inf, nan; return val(d) }(), KindTarget, 2, -1, -1, inf, 2},
		{"label", func() error { d := valid(); d.Y[1] = 0.5; return obs(d) }(), KindTarget, 1, -1, -1, 0.5, 0},
		{"name count", func() error { d := valid(); d.FeatureNames = d.FeatureNames[:1]; return obs(d) }(), KindFeatureNames, -1, -1, -1, nan, 1},
		{"empty name", func() error { d := valid(); d.FeatureNames[1] = ""; return val(d) }(), KindFeatureNames, -1, 1, -1, nan, 0},
		{"repeated name", func() error { d := valid(); d.FeatureNames[1] = "hr"; return obs(d) }(), KindFeatureNames, -1, 1, -1, nan, 0},
		{"missing where complete", func() error { d := valid(); d.X.Set(3, 1, 2, nan); return val(d) }(), KindMissing, 3, 1, 2, nan, 0},
		{"infinite, complete", func() error { d := valid(); d.X.Set(2, 0, 1, -inf); d.X.Set(3, 1, 1, inf); return val(d) }(), KindInfinite, 2, 0, 1, -inf, 2},
		{"infinite, observed", func() error { d := valid(); d.X.Set(0, 1, 0, nan); d.X.Set(1, 1, 2, inf); return obs(d) }(), KindInfinite, 1, 1, 2, inf, 1},
		{"unobserved instance", obs(&Dataset{X: tensor(2, 2, 2, []float64{1, 2, nan, nan, nan, nan, nan, nan}), Y: []float64{0, 1}}), KindUnobservedInstance, 1, -1, -1, nan, 0},
		{"unobserved feature", obs(&Dataset{X: tensor(2, 2, 2, []float64{1, 2, nan, nan, 3, 4, nan, nan}), Y: []float64{0, 1}}), KindUnobservedFeature, -1, 1, -1, nan, 0},
		{"prediction", CheckPredictions(Classification, []float64{0.5, 1.5}), KindPrediction, -1, -1, -1, 1.5, 0},
		{"located prediction", LocatePrediction(fmt.Errorf("model: %w", CheckPredictions(Regression, []float64{0, math.Inf(-1)})), 10), KindPrediction, 11, -1, -1, math.Inf(-1), 0},
		{"unlocated other error", LocatePrediction(obs(&Dataset{X: tensor(2, 2, 2, []float64{1, 2, nan, nan, nan, nan, nan, nan}), Y: []float64{0, 1}}), 10), KindUnobservedInstance, 1, -1, -1, nan, 0},
	} {
		var de *DataError
		if !errors.As(tc.err, &de) {
			t.Errorf("%s: %v is not a *DataError", tc.name, tc.err)
			continue
		}
		if de.Kind != tc.kind || de.Instance != tc.i || de.Feature != tc.j || de.Timestep != tc.t || de.Count != tc.count {
			t.Errorf("%s: kind %q at (%d, %d, %d) count %d, want %q at (%d, %d, %d) count %d",
				tc.name, de.Kind, de.Instance, de.Feature, de.Timestep, de.Count, tc.kind, tc.i, tc.j, tc.t, tc.count)
		}
		if wantValue := !math.IsNaN(tc.value); de.HasValue != wantValue && tc.kind != KindMissing || wantValue && de.Value != tc.value {
			t.Errorf("%s: value %v (%v), want %v", tc.name, de.Value, de.HasValue, tc.value)
		}
		if !strings.HasSuffix(tc.err.Error(), de.Error()) {
			t.Errorf("%s: the DataError's message %q does not end the error's %q", tc.name, de.Error(), tc.err)
		}
	}
}

// TestDataErrorAlignment: the alignment error carries the counts its
// message states.
func TestDataErrorAlignment(t *testing.T) {
	nan := math.NaN()
	startPadded := []float64{1, 2, 3, 4, 5, 6, nan, nan, 7, 8, 9, nan} // lengths 4, 2, 3
	for _, tc := range []struct {
		a       Alignment
		data    []float64
		count   int
		lengths [2]int
	}{
		{AlignEnd, startPadded, 2, [2]int{2, 4}},
		{AlignStart, []float64{1, 2, 3, 4, nan, nan, 5, 6, nan, 7, 8, 9}, 2, [2]int{2, 4}},
	} {
		x, _ := TensorFrom(3, 1, 4, tc.data)
		_, err := (&Dataset{X: x, Y: []float64{0, 1, 2}, Alignment: tc.a}).Observe(1)
		var de *DataError
		if !errors.As(err, &de) || de.Kind != KindAlignment || de.Alignment != tc.a || de.Count != tc.count || de.Lengths != tc.lengths {
			t.Errorf("%v: %v (%+v), want count %d lengths %v", tc.a, err, de, tc.count, tc.lengths)
		}
	}
}
