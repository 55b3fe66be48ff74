package tempora

import (
	"errors"
	"fmt"
	"math"
)

// DataErrorKind says what a DataError finds wrong. Its values are the
// "kind" of the command line's JSON error object (docs/errors.md), so a
// program reading that object decides on the kind, never on the message's
// wording.
type DataErrorKind string

// The kinds of DataError. Each names the fields of the error it sets; the
// others are −1 (Instance, Feature, Timestep), 0 (Count, Lengths) or
// absent (Value).
const (
	// KindShape: the data tensor's shape is empty or does not match the
	// values it holds, or the data has fewer instances than the caller
	// needs.
	KindShape DataErrorKind = "shape"
	// KindInfinite: a data value is ±Inf (a missing value is NaN):
	// Instance, Feature, Timestep and Value of the first one, Count of
	// them all.
	KindInfinite DataErrorKind = "infinite"
	// KindMissing: a data value is NaN (missing) where the caller needs
	// complete data: Instance, Feature, Timestep of the first one, and
	// Count of them where counted (method.RequireComplete); no location
	// when the data's only gaps are sequences shorter than the others.
	KindMissing DataErrorKind = "missing"
	// KindUnobservedInstance: an instance has no observed value
	// (Instance).
	KindUnobservedInstance DataErrorKind = "unobserved-instance"
	// KindUnobservedFeature: a feature is observed in no instance at no
	// timestep (Feature).
	KindUnobservedFeature DataErrorKind = "unobserved-feature"
	// KindAlignment: the sequences visibly share the other end of the time
	// axis than the dataset's Alignment says (Dataset.Observe;
	// docs/decisions.md, decision 19): Alignment is the one declared,
	// Count the instances that end early (Alignment AlignEnd) or start
	// late (AlignStart), Lengths the shortest and longest sequence under
	// the other alignment.
	KindAlignment DataErrorKind = "alignment"
	// KindTargets: there is not one target per instance (Count: the
	// targets there are).
	KindTargets DataErrorKind = "targets"
	// KindTarget: a target is not finite, or for classification not 0 or
	// 1: Instance and Value of the first one, and for a target that is not
	// finite, Count of those.
	KindTarget DataErrorKind = "target"
	// KindFeatureNames: the feature names are not one per feature (Count:
	// the names there are), or a name is empty, repeated or cannot be
	// read back (Feature: the name's position, the later one of a
	// repeated name).
	KindFeatureNames DataErrorKind = "feature-names"
	// KindMask: an observation mask does not have the data's shape, or
	// holds a value other than 0 and 1 (Instance, Feature, Timestep and
	// Value of the first one).
	KindMask DataErrorKind = "mask"
	// KindPrediction: the model predicted a value that is not finite or,
	// for classification, not a probability (Value). Row is the
	// prediction's position in the batch checked (CheckPredictions);
	// Instance is the dataset's instance only where the caller knows the
	// batch's rows are the dataset's instances in order
	// (LocatePrediction; TIME's evaluations), else −1: in a batch of
	// samples or perturbations the position names no instance of the
	// data.
	KindPrediction DataErrorKind = "prediction"
)

// DataErrorKinds returns every kind of DataError, in the order of
// docs/errors.md.
func DataErrorKinds() []DataErrorKind {
	return []DataErrorKind{KindShape, KindInfinite, KindMissing, KindUnobservedInstance, KindUnobservedFeature,
		KindAlignment, KindTargets, KindTarget, KindFeatureNames, KindMask, KindPrediction}
}

// DataError is an error found in a dataset's data, targets, feature names
// or observation mask, or in a model's predictions for it, with what is
// wrong (Kind) and where: the instance, feature and timestep of the data
// tensor at fault (indices along its axes; the timestep in aligned time),
// −1 where the error has no such coordinate. Dataset.Validate,
// Dataset.Observe, Tensor.Validate, CheckPredictions and package dataio's
// readers return their errors as a *DataError (wrapped, by dataio, in the
// names of the files): errors.As finds it. Its message is Err's, the same
// text as before errors were typed.
type DataError struct {
	Kind                        DataErrorKind
	Instance, Feature, Timestep int
	// Value is the value at fault, when HasValue.
	Value    float64
	HasValue bool
	// Count, Lengths and Row: see the kinds.
	Count   int
	Lengths [2]int
	Row     int
	// Alignment is the dataset's (KindAlignment).
	Alignment Alignment
	// Err is the error as a message.
	Err error
}

// NewDataError returns a DataError of the given kind with message err, at
// no location.
func NewDataError(kind DataErrorKind, err error) *DataError {
	return &DataError{Kind: kind, Instance: -1, Feature: -1, Timestep: -1, Row: -1, Err: err}
}

// LocatePrediction says that the predictions whose check failed with err
// were those of the dataset's instances first, first+1, … in order: a
// KindPrediction DataError in err's chain gets Instance first+Row. It
// returns err (nil for nil); any other error is left as it is.
func LocatePrediction(err error, first int) error {
	var de *DataError
	if errors.As(err, &de) && de.Kind == KindPrediction && de.Row >= 0 && de.Instance < 0 {
		de.Instance = first + de.Row
	}
	return err
}

// dataErrorf is NewDataError with a formatted message.
func dataErrorf(kind DataErrorKind, format string, args ...any) *DataError {
	return NewDataError(kind, fmt.Errorf(format, args...))
}

// At sets the location of e (−1 for a coordinate that does not apply) and
// returns e.
func (e *DataError) At(instance, feature, timestep int) *DataError {
	e.Instance, e.Feature, e.Timestep = instance, feature, timestep
	return e
}

// WithValue sets the value at fault and returns e.
func (e *DataError) WithValue(v float64) *DataError {
	e.Value, e.HasValue = v, true
	return e
}

// WithCount sets Count and returns e.
func (e *DataError) WithCount(n int) *DataError {
	e.Count = n
	return e
}

func (e *DataError) Error() string { return e.Err.Error() }
func (e *DataError) Unwrap() error { return e.Err }

// CountInf returns the number of infinite values in s: the Count of a
// KindInfinite error, for a reader that has found the first one (it reads
// all of s, on the error's path only).
func CountInf(s []float64) int {
	n := 0
	for _, v := range s {
		if math.IsInf(v, 0) {
			n++
		}
	}
	return n
}
