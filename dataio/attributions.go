package dataio

import (
	"fmt"
	"io"
	"math"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/internal/npy"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// The one layout of per-instance attributions on disk, written by
// "tempora explain -attributions" and read by "tempora evaluate
// -attributions": a float64 .npy array of n instances × D features × L
// timesteps, or n × K × D × L for the K outputs of a model with several.
// In memory (method.LocalExplainer) both are a tensor of n·K rows, row
// i·K + k instance i's attributions to output k.

// WriteAttributionsNPY writes the per-instance attributions local, a
// tensor of n·k rows, to path atomically: shape (n, D, L) for k = 1, (n,
// k, D, L) for k > 1.
func WriteAttributionsNPY(path string, local *tempora.Tensor, k int) error {
	if err := checkAttributions(local, k); err != nil {
		return fmt.Errorf("dataio: %s: %w", path, err)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return WriteAttributions(w, local, k) })
}

// WriteAttributions writes the per-instance attributions local, a tensor
// of n·k rows, to w as a .npy array in the layout of WriteAttributionsNPY,
// for callers that write several files all or nothing.
func WriteAttributions(w io.Writer, local *tempora.Tensor, k int) error {
	if err := checkAttributions(local, k); err != nil {
		return fmt.Errorf("dataio: %w", err)
	}
	shape := []int{local.M, local.D, local.L}
	if k > 1 {
		shape = []int{local.M / k, k, local.D, local.L}
	}
	return npy.Write(w, shape, local.Data)
}

func checkAttributions(local *tempora.Tensor, k int) error {
	if local == nil || k < 1 || local.M%k != 0 || len(local.Data) != local.M*local.D*local.L {
		return fmt.Errorf("no attributions of %d outputs to write", k)
	}
	return nil
}

// ReadAttributionsNPY reads per-instance attributions written in the
// layout of WriteAttributionsNPY (by tempora or any tool): it returns them
// as a tensor of n·K rows and K (1 for a 3-D array). It returns an error
// for another rank, an empty axis or a value that is not finite.
func ReadAttributionsNPY(path string) (*tempora.Tensor, int, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	a, err := npy.Read(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	s := a.Shape
	k := 1
	switch len(s) {
	case 3:
	case 4:
		k = s[1]
		s = []int{s[0] * s[1], s[2], s[3]}
	default:
		return nil, 0, fmt.Errorf("%s has shape %v, want instances × features × timesteps, or instances × outputs × features × timesteps", path, a.Shape)
	}
	if s[0] < 1 || k < 1 || s[1] < 1 || s[2] < 1 {
		return nil, 0, fmt.Errorf("%s holds no instance's attributions (shape %v)", path, a.Shape)
	}
	for i, v := range a.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, fmt.Errorf("%s: value %d is %v", path, i, v)
		}
	}
	return &tempora.Tensor{M: s[0], D: s[1], L: s[2], Data: a.Data}, k, nil
}
