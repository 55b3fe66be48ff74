package dataio

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/npy"
)

// TestAttributionsRoundTrip checks the one layout of per-instance
// attributions: a tensor of n·K rows is written n × D × L for K = 1 and n
// × K × D × L otherwise, and read back as it was; other ranks, empty axes
// and values that are not finite are refused.
func TestAttributionsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	local := tempora.NewTensor(6, 2, 3) // 3 instances × 2 outputs
	for i := range local.Data {
		local.Data[i] = float64(i) - 10
	}
	for _, k := range []int{1, 2} {
		path := filepath.Join(dir, "a.npy")
		if err := WriteAttributionsNPY(path, local, k); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		a, err := npy.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := []int{6, 2, 3}
		if k == 2 {
			want = []int{3, 2, 2, 3}
		}
		if !slices.Equal(a.Shape, want) {
			t.Errorf("K %d: shape %v, want %v", k, a.Shape, want)
		}
		got, gk, err := ReadAttributionsNPY(path)
		if err != nil || gk != k || got.M != 6 || got.D != 2 || got.L != 3 || !slices.Equal(got.Data, local.Data) {
			t.Errorf("K %d: read back %d outputs, %v (%v)", k, gk, got, err)
		}
	}
	if err := WriteAttributionsNPY(filepath.Join(dir, "b.npy"), local, 4); err == nil {
		t.Error("6 rows written as 4 outputs: no error")
	}
	for _, c := range []struct {
		shape []int
		data  []float64
		want  string
	}{
		{[]int{6}, make([]float64, 6), "want instances × features × timesteps"},
		{[]int{0, 2, 3}, nil, "holds no instance's attributions"},
		{[]int{1, 1, 2}, []float64{1, math.Inf(-1)}, "value 1 is -Inf"},
	} {
		path := filepath.Join(dir, "bad.npy")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := npy.Write(f, c.shape, c.data); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if _, _, err := ReadAttributionsNPY(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("shape %v: %v, want an error saying %q", c.shape, err, c.want)
		}
	}
}
