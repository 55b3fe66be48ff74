package dataio

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/internal/errmsg"
	"github.com/tempora-dev/tempora/internal/finite"
	"github.com/tempora-dev/tempora/internal/npy"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// readTensorNPY reads a rank-3 .npy file as a tensor, unchecked.
func readTensorNPY(path string) (*tempora.Tensor, error) {
	a, err := readNPY(path)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) != 3 {
		return nil, fmt.Errorf("dataio: %s: %w", path, tempora.NewDataError(tempora.KindShape,
			fmt.Errorf("data must have shape instances × features × timesteps, got shape %v", a.Shape)))
	}
	return &tempora.Tensor{M: a.Shape[0], D: a.Shape[1], L: a.Shape[2], Data: a.Data}, nil
}

// ReadTensorNPY reads an M × D × L data tensor from a NumPy .npy file
// (float64 or float32, or any integer or boolean type; C or Fortran order).
// It returns an error naming the file for anything else: a wrong rank, a
// truncated or malformed file, or non-finite values.
func ReadTensorNPY(path string) (*tempora.Tensor, error) {
	x, err := readTensorNPY(path)
	if err != nil {
		return nil, err
	}
	if err := x.Validate(); err != nil {
		return nil, errmsg.Wrap(err, "dataio: %s", path)
	}
	return x, nil
}

// ReadVectorNPY reads a one-dimensional array (for example targets) from a
// .npy file. An M × 1 array is accepted as a vector. It returns an error for
// an empty array or a non-finite value.
func ReadVectorNPY(path string) ([]float64, error) {
	a, err := readNPY(path)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) == 2 && a.Shape[1] == 1 {
		a.Shape = a.Shape[:1]
	}
	if len(a.Shape) != 1 {
		return nil, fmt.Errorf("dataio: %s: want a one-dimensional array, got shape %v", path, a.Shape)
	}
	if err := checkVector(a.Data); err != nil {
		return nil, fmt.Errorf("dataio: %s: %w", path, err)
	}
	return a.Data, nil
}

// ReadDataNPY reads an M × D × L data tensor that may have missing values
// (NaN) from a NumPy .npy file, as ReadTensorNPY reads a complete one. It
// returns an error naming the file and the cell for an infinite value.
func ReadDataNPY(path string) (*tempora.Tensor, error) {
	x, err := readTensorNPY(path)
	if err != nil {
		return nil, err
	}
	if x.M <= 0 || x.D <= 0 || x.L <= 0 {
		return nil, fmt.Errorf("dataio: %s: %w", path, tempora.NewDataError(tempora.KindShape,
			fmt.Errorf("data tensor has empty shape %d×%d×%d", x.M, x.D, x.L)))
	}
	// Only infinities are errors here (NaN is a missing value); finite.Index
	// skips the blocks that are all finite.
	if k := finite.Index(x.Data, func(v float64) bool { return math.IsInf(v, 0) }); k >= 0 {
		i, r := k/(x.D*x.L), k%(x.D*x.L)
		j, t, v := r/x.L, r%x.L, x.Data[k]
		de := tempora.NewDataError(tempora.KindInfinite,
			fmt.Errorf("value at instance %d, feature %d, timestep %d is %v (a missing value is NaN; infinities are errors)", i, j, t, v))
		return nil, fmt.Errorf("dataio: %s: %w", path, de.At(i, j, t).WithValue(v).WithCount(tempora.CountInf(x.Data)))
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
		return nil, fmt.Errorf("dataio: %s: %w", path, tempora.NewDataError(tempora.KindMask,
			fmt.Errorf("the mask has shape %v but the data has shape [%d %d %d] (instances, features, timesteps)", a.Shape, m, d, l)))
	}
	mask := make([]bool, len(a.Data))
	for k, v := range a.Data {
		switch v {
		case 0:
		case 1:
			mask[k] = true
		default:
			i, r := k/(d*l), k%(d*l)
			de := tempora.NewDataError(tempora.KindMask,
				fmt.Errorf("mask value at instance %d, feature %d, timestep %d is %v (want true/false or 1/0: 1 for observed)", i, r/l, r%l, v))
			return nil, fmt.Errorf("dataio: %s: %w", path, de.At(i, r/l, r%l).WithValue(v))
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

// readTargetsNPY reads targets from a .npy file as ReadVectorNPY reads a
// vector, with the errors of targets: a *tempora.DataError naming the
// instance of the first target that is not finite.
func readTargetsNPY(path string) ([]float64, error) {
	a, err := readNPY(path)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) == 2 && a.Shape[1] == 1 {
		a.Shape = a.Shape[:1]
	}
	if len(a.Shape) != 1 {
		return nil, fmt.Errorf("dataio: %s: %w", path, tempora.NewDataError(tempora.KindTargets,
			fmt.Errorf("want a one-dimensional array, got shape %v", a.Shape)))
	}
	if err := checkVector(a.Data); err != nil {
		de := tempora.NewDataError(tempora.KindTargets, err)
		if k := slices.IndexFunc(a.Data, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }); k >= 0 {
			de.Kind = tempora.KindTarget
			de.At(k, -1, -1).WithValue(a.Data[k]).WithCount(countNonFinite(a.Data))
		}
		return nil, fmt.Errorf("dataio: %s: %w", path, de)
	}
	return a.Data, nil
}

// countNonFinite returns the number of values of s that are NaN or ±Inf.
func countNonFinite(s []float64) int {
	n := 0
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			n++
		}
	}
	return n
}

func readNPY(path string) (*npy.Array, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataio: %w", err)
	}
	defer f.Close()
	a, err := npy.Read(f)
	if err != nil {
		return nil, errmsg.Wrap(err, "dataio: %s", path)
	}
	return a, nil
}

// WriteTensorNPY writes x to path as a little-endian float64 .npy file of
// shape (M, D, L), atomically.
func WriteTensorNPY(path string, x *tempora.Tensor) error {
	return atomicfile.Write(path, func(w io.Writer) error { return npy.Write(w, []int{x.M, x.D, x.L}, x.Data) })
}

// WriteVectorNPY writes v to path as a one-dimensional float64 .npy file,
// atomically.
func WriteVectorNPY(path string, v []float64) error {
	return atomicfile.Write(path, func(w io.Writer) error { return npy.Write(w, []int{len(v)}, v) })
}
