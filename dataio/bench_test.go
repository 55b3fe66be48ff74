package dataio

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/tempora-dev/tempora"
)

// BenchmarkReadDataNPY measures reading the data file of the issue-22
// Python benchmark problem, 500 × 100 × 200 float64 (80 MB, no missing
// value), as tempora explain reads it: npy.Read and the check for
// infinities. It reports ns/value.
func BenchmarkReadDataNPY(b *testing.B) {
	const m, d, l = 500, 100, 200
	r := rand.New(rand.NewPCG(22, 0))
	x := tempora.NewTensor(m, d, l)
	for k := range x.Data {
		x.Data[k] = r.NormFloat64()
	}
	path := filepath.Join(b.TempDir(), "x.npy")
	if err := WriteTensorNPY(path, x); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(8 * len(x.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadDataNPY(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x.Data)), "ns/value")
}
