package dataio

import (
	"fmt"
	"math"
	"slices"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/errmsg"
)

// Reading a dataset
//
// A dataset is read from up to four files: the data tensor, the targets,
// the feature names and an observation mask (Files). Each file's format
// is chosen from its extension by the reader table (readers.go). The data
// may have missing values: NaN in a .npy data file, in a long CSV file a
// cell without a line or with an empty, NA or NaN value (ReadDataCSV); an
// observation mask, a .npy file of the data's shape holding booleans or
// 0/1 (ReadMaskNPY), marks unobserved cells, into which ApplyMask writes
// NaN. Targets are never missing, but for the outputs of a model with
// several outputs that have none (outputs.go). ReadFiles reads and checks all of it
// with tempora.Dataset.Observe; its errors about the data, targets, names
// or mask wrap a *tempora.DataError (what is wrong, and where) in the names
// of the files.

// Files names the files of a dataset and how to read them (ReadFiles).
type Files struct {
	// Data holds the M × D × L data tensor: .npy, or long-format .csv or
	// .txt (ReadDataNPY, ReadDataCSV). It may have missing values.
	Data string
	// Targets holds the M targets: .npy, or .csv or .txt with one value
	// per line. Targets may not be missing. With Outputs, it holds their
	// targets (below).
	Targets string
	// Names, if not empty, holds the feature names: a .json array of
	// strings (ReadFeatureNamesJSON), or one name per line
	// (ReadFeatureNames) in a file of any other extension.
	Names string
	// Mask, if not empty, is a .npy observation mask of the data's shape
	// (ReadMaskNPY), applied to the data (ApplyMask).
	Mask string
	// Outputs, if not nil, describes a model with several outputs per
	// instance (tempora.Outputs), whose targets Targets holds (outputs.go):
	// one class label per instance for classes, K values per instance
	// otherwise. For horizons and steps K may be 0, and is then the
	// targets file's; otherwise it must be. Names come from OutputNames,
	// or else from the targets file, unless Outputs has them; Anchors are
	// Outputs'. The dataset gets a copy. nil: one output, as before.
	Outputs *tempora.Outputs
	// OutputNames, if not empty, holds the output names, in the formats of
	// Names (ReadOutputNames).
	OutputNames string
	// Task and Alignment are the dataset's.
	Task      tempora.Task
	Alignment tempora.Alignment
	// Warn, if not nil, is told of input that is read as it is but is
	// likely not what its writer meant (one sentence, naming the files):
	// a mask that marks a NaN observed, labels that are all one class.
	Warn func(string)
}

// warn tells f.Warn, if any, of a warning.
func (f Files) warn(format string, args ...any) {
	if f.Warn != nil {
		f.Warn(fmt.Sprintf(format, args...))
	}
}

// ReadFiles reads a dataset that may have missing values from files,
// choosing each file's format from its extension, and checks it with
// Dataset.Observe (at least one instance). It returns the dataset and its
// observation, or an error naming the file and, where it applies, the
// instance, feature or cell: the number of targets or of names does not
// match the data, a classification target is not 0 or 1, a target is
// missing or infinite, a data value is infinite, the mask does not fit,
// an instance has nothing observed or a feature is never observed.
func ReadFiles(f Files) (*tempora.Dataset, *tempora.Observation, error) {
	x, names, err := readData(f)
	if err != nil {
		return nil, nil, err
	}
	y, outs, err := f.readTargets(x.M)
	if err != nil {
		return nil, nil, err
	}
	if (f.Task == tempora.Classification || (outs != nil && outs.Kind == tempora.Classes)) && len(y) > 1 && !slices.ContainsFunc(y, func(v float64) bool { return v != y[0] }) {
		f.warn("every label in %s is %v: the labels are all one class", f.Targets, y[0])
	}
	ds := &tempora.Dataset{X: x, Y: y, Task: f.Task, FeatureNames: names, Alignment: f.Alignment, Outputs: outs}
	obs, err := ds.Observe(1)
	if err != nil {
		return nil, nil, errmsg.Wrap(err, "dataio: %s, %s", f.dataFiles(), f.Targets)
	}
	return ds, obs, nil
}

// readTargets reads the targets of f for m instances, and the outputs of
// the dataset (nil for one output).
func (f Files) readTargets(m int) ([]float64, *tempora.Outputs, error) {
	if f.Outputs != nil && f.Outputs.Kind != tempora.Classes {
		return f.readOutputTargets(m)
	}
	read, err := targetsReader(f.Targets)
	if err != nil {
		return nil, nil, err
	}
	y, err := read(f.Targets)
	if err != nil {
		return nil, nil, err
	}
	if len(y) != m {
		return nil, nil, tempora.NewDataError(tempora.KindTargets,
			fmt.Errorf("dataio: %s has %d targets but %s has %d instances", f.Targets, len(y), f.Data, m)).WithCount(len(y))
	}
	if f.Outputs == nil {
		return y, nil, nil
	}
	o := *f.Outputs // classes: K is given, the labels do not say it
	if f.OutputNames != "" {
		if o.Names, err = ReadOutputNames(f.OutputNames); err != nil {
			return nil, nil, err
		}
	}
	return y, &o, nil
}

// readOutputTargets reads the targets of horizons or steps, K per
// instance, for m instances.
func (f Files) readOutputTargets(m int) ([]float64, *tempora.Outputs, error) {
	o := *f.Outputs
	var given []string
	if f.OutputNames != "" {
		var err error
		if given, err = ReadOutputNames(f.OutputNames); err != nil {
			return nil, nil, err
		}
	} else if o.Names != nil {
		given = o.Names
	}
	read, err := outputTargetsReader(f.Targets)
	if err != nil {
		return nil, nil, err
	}
	y, k, fileNames, err := read(f.Targets, given)
	if err != nil {
		return nil, nil, err
	}
	if len(y) != m*k {
		return nil, nil, tempora.NewDataError(tempora.KindTargets,
			fmt.Errorf("dataio: %s has targets of %d instances but %s has %d instances", f.Targets, len(y)/k, f.Data, m)).WithCount(len(y) / k)
	}
	if o.K != 0 && o.K != k {
		return nil, nil, tempora.NewDataError(tempora.KindTargets,
			fmt.Errorf("dataio: %s has %d targets per instance, for %d %v outputs", f.Targets, k, o.K, o.Kind))
	}
	o.K = k
	if fileNames != nil { // the names given, or else the file's
		o.Names = fileNames
	}
	return y, &o, nil
}

// dataFiles names the data file, and the mask if any, in messages.
func (f Files) dataFiles() string {
	if f.Mask != "" {
		return f.Data + " (mask " + f.Mask + ")"
	}
	return f.Data
}

// ReadData reads the data of f (its Data, Names and Mask files) without
// targets, for a caller that only describes it, and returns the tensor,
// which may have missing values, with the feature names (nil for none)
// and its observation under f.Alignment. Errors are those of ReadFiles
// but for the targets.
func ReadData(f Files) (*tempora.Tensor, []string, *tempora.Observation, error) {
	x, names, err := readData(f)
	if err != nil {
		return nil, nil, nil, err
	}
	// Observe checks the targets too: give it finite ones.
	ds := &tempora.Dataset{X: x, Y: make([]float64, x.M), FeatureNames: names, Alignment: f.Alignment}
	obs, err := ds.Observe(1)
	if err != nil {
		return nil, nil, nil, errmsg.Wrap(err, "dataio: %s", f.dataFiles())
	}
	return x, names, obs, nil
}

// readData reads the data, names and mask files of f.
func readData(f Files) (*tempora.Tensor, []string, error) {
	var names []string
	if f.Names != "" {
		read, err := namesReader(f.Names, "feature names")
		if err != nil {
			return nil, nil, err
		}
		if names, err = read(f.Names, featureList); err != nil {
			return nil, nil, err
		}
	}
	read, err := dataReader(f.Data)
	if err != nil {
		return nil, nil, err
	}
	x, names, err := read(f.Data, names)
	if err != nil {
		return nil, nil, err
	}
	if names != nil && len(names) != x.D {
		return nil, nil, tempora.NewDataError(tempora.KindFeatureNames,
			fmt.Errorf("dataio: %s has %d feature names but %s has %d features", f.Names, len(names), f.Data, x.D)).WithCount(len(names))
	}
	if f.Mask != "" {
		read, err := maskReader(f.Mask)
		if err != nil {
			return nil, nil, err
		}
		mask, err := read(f.Mask, x.M, x.D, x.L)
		if err != nil {
			return nil, nil, err
		}
		f.warnObservedNaN(x, mask)
		ApplyMask(x, mask)
	}
	return x, names, nil
}

// warnObservedNaN warns of the cells mask marks observed where x holds
// NaN: they are missing whatever the mask says.
func (f Files) warnObservedNaN(x *tempora.Tensor, mask []bool) {
	n, first := 0, -1
	for k, ok := range mask {
		if ok && math.IsNaN(x.Data[k]) {
			if n == 0 {
				first = k
			}
			n++
		}
	}
	if n > 0 {
		i, r := first/(x.D*x.L), first%(x.D*x.L)
		f.warn("%s marks %d %s observed where %s holds NaN (the first at instance %d, feature %d, timestep %d): they are missing", f.Mask, n, map[bool]string{true: "cell", false: "cells"}[n == 1], f.Data, i, r/x.L, r%x.L)
	}
}
