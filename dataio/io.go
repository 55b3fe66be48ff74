package dataio

import (
	"fmt"
	"io"
	"os"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/internal/errmsg"
	"github.com/tempora-dev/tempora/internal/npy"
)

// readTensorNPY reads a rank-3 .npy file as a tensor, unchecked.
func readTensorNPY(path string) (*tempora.Tensor, error) {
	a, err := readNPY(path)
	if err != nil {
		return nil, err
	}
	if len(a.Shape) != 3 {
		return nil, fmt.Errorf("dataio: %s: data must have shape instances × features × timesteps, got shape %v", path, a.Shape)
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

func readNPY(path string) (*npy.Array, error) {
	f, err := os.Open(path)
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
