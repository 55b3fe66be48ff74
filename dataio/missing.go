package dataio

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/errmsg"
	"github.com/tempora-dev/tempora/internal/finite"
)

// Data with missing values
//
// A missing value is NaN (tempora's missing.go): in a .npy data file it is
// a NaN element, in a long CSV file a cell without a line or with an empty,
// NA or NaN value (ReadDataCSV). An observation mask may also be given
// separately, as a .npy file of the data's shape holding booleans or 0/1
// (ReadMaskNPY): ApplyMask writes NaN into the cells it marks unobserved.
// Targets are never missing. ReadFiles reads and checks all of it.

// ReadDataNPY reads an M × D × L data tensor that may have missing values
// (NaN) from a NumPy .npy file, as ReadTensorNPY reads a complete one. It
// returns an error naming the file and the cell for an infinite value.
func ReadDataNPY(path string) (*tempora.Tensor, error) {
	x, err := readTensorNPY(path)
	if err != nil {
		return nil, err
	}
	if x.M <= 0 || x.D <= 0 || x.L <= 0 {
		return nil, fmt.Errorf("dataio: %s: data tensor has empty shape %d×%d×%d", path, x.M, x.D, x.L)
	}
	// Only infinities are errors here (NaN is a missing value); finite.Index
	// skips the blocks that are all finite.
	if k := finite.Index(x.Data, func(v float64) bool { return math.IsInf(v, 0) }); k >= 0 {
		i, r := k/(x.D*x.L), k%(x.D*x.L)
		return nil, fmt.Errorf("dataio: %s: value at instance %d, feature %d, timestep %d is %v (a missing value is NaN; infinities are errors)", path, i, r/x.L, r%x.L, x.Data[k])
	}
	return x, nil
}

// ReadMaskNPY reads an observation mask for an M × D × L data tensor from
// a .npy file: an array of that shape holding booleans or the numbers 0
// and 1 (1, true: observed). It returns an error naming the file for
// another shape and naming the cell for another value.
func ReadMaskNPY(path string, m, d, l int) ([]bool, error) {
	a, err := readNPY(path)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) != 3 || a.Shape[0] != m || a.Shape[1] != d || a.Shape[2] != l {
		return nil, fmt.Errorf("dataio: %s: the mask has shape %v but the data has shape [%d %d %d] (instances, features, timesteps)", path, a.Shape, m, d, l)
	}
	mask := make([]bool, len(a.Data))
	for k, v := range a.Data {
		switch v {
		case 0:
		case 1:
			mask[k] = true
		default:
			i, r := k/(d*l), k%(d*l)
			return nil, fmt.Errorf("dataio: %s: mask value at instance %d, feature %d, timestep %d is %v (want true/false or 1/0: 1 for observed)", path, i, r/l, r%l, v)
		}
	}
	return mask, nil
}

// ApplyMask writes NaN (a missing value) into the cells of x that mask
// marks unobserved; mask has one entry per value of x, in x's order.
func ApplyMask(x *tempora.Tensor, mask []bool) {
	if len(mask) != len(x.Data) {
		panic(fmt.Sprintf("dataio: mask of %d entries for %d values", len(mask), len(x.Data)))
	}
	for k, ok := range mask {
		if !ok {
			x.Data[k] = math.NaN()
		}
	}
}

// Files names the files of a dataset and how to read them (ReadFiles).
type Files struct {
	// Data holds the M × D × L data tensor: .npy, or long-format .csv or
	// .txt (ReadDataNPY, ReadDataCSV). It may have missing values.
	Data string
	// Targets holds the M targets: .npy, or .csv or .txt with one value
	// per line. Targets may not be missing.
	Targets string
	// Names, if not empty, holds one feature name per line.
	Names string
	// Mask, if not empty, is a .npy observation mask of the data's shape
	// (ReadMaskNPY), applied to the data (ApplyMask).
	Mask string
	// Task and Alignment are the dataset's.
	Task      tempora.Task
	Alignment tempora.Alignment
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
	var y []float64
	switch ext := strings.ToLower(filepath.Ext(f.Targets)); ext {
	case ".npy":
		y, err = ReadVectorNPY(f.Targets)
	case ".csv", ".txt":
		y, err = ReadVectorCSV(f.Targets)
	default:
		err = fmt.Errorf("dataio: %s: unknown targets file extension %q (want .npy, .csv or .txt)", f.Targets, ext)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(y) != x.M {
		return nil, nil, fmt.Errorf("dataio: %s has %d targets but %s has %d instances", f.Targets, len(y), f.Data, x.M)
	}
	ds := &tempora.Dataset{X: x, Y: y, Task: f.Task, FeatureNames: names, Alignment: f.Alignment}
	obs, err := ds.Observe(1)
	if err != nil {
		return nil, nil, errmsg.Wrap(err, "dataio: %s, %s", f.dataFiles(), f.Targets)
	}
	return ds, obs, nil
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
		var err error
		if names, err = ReadFeatureNames(f.Names); err != nil {
			return nil, nil, err
		}
	}
	var x *tempora.Tensor
	switch ext := strings.ToLower(filepath.Ext(f.Data)); ext {
	case ".npy":
		var err error
		if x, err = ReadDataNPY(f.Data); err != nil {
			return nil, nil, err
		}
		if names != nil && len(names) != x.D {
			return nil, nil, fmt.Errorf("dataio: %s has %d feature names but %s has %d features", f.Names, len(names), f.Data, x.D)
		}
	case ".csv", ".txt":
		var err error
		if x, names, err = ReadDataCSV(f.Data, names); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("dataio: %s: unknown data file extension %q (want .npy or .csv)", f.Data, ext)
	}
	if f.Mask != "" {
		if ext := strings.ToLower(filepath.Ext(f.Mask)); ext != ".npy" {
			return nil, nil, fmt.Errorf("dataio: %s: unknown mask file extension %q (want .npy)", f.Mask, ext)
		}
		mask, err := ReadMaskNPY(f.Mask, x.M, x.D, x.L)
		if err != nil {
			return nil, nil, err
		}
		ApplyMask(x, mask)
	}
	return x, names, nil
}
