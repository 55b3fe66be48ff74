package tempora

import (
	"math"
	"testing"
)

// BenchmarkObserve measures Dataset.Observe on the shape of the issue-22
// Python benchmark problem, 500 × 100 × 200 (80 MB), which every tempora
// explain run pays once on its data: missing=none is that problem (no
// NaN), missing=padded gives every instance a length of its own, start
// aligned, so that every series ends in NaN padding (the most work per
// value). Both report ns/value.
func BenchmarkObserve(b *testing.B) {
	const m, d, l = 500, 100, 200
	r := NewRand(22, "observe")
	full := NewTensor(m, d, l)
	for k := range full.Data {
		full.Data[k] = r.NormFloat64()
	}
	padded := full.Clone()
	for i := range m {
		n := 1 + r.IntN(l-1) // at least one timestep of padding
		for j := range d {
			s := padded.Series(i, j)
			for t := l - n; t < l; t++ {
				s[t] = math.NaN()
			}
		}
	}
	for _, tc := range []struct {
		name string
		x    *Tensor
	}{{"missing=none", full}, {"missing=padded", padded}} {
		ds := &Dataset{X: tc.x, Y: make([]float64, m)}
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(8 * len(tc.x.Data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ds.Observe(1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tc.x.Data)), "ns/value")
		})
	}
}
