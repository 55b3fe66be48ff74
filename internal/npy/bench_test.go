package npy

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRead measures reading the data of the issue-22 Python benchmark
// problem, a 500 × 100 × 200 float64 array in C order (80 MB), which every
// tempora explain run on it pays before anything else. from=file is how
// the program reads it (the file's size bounds one exact allocation);
// from=memory reads a bytes.Reader, whose size Read cannot see, so the
// values grow chunk by chunk. Both report ns/value.
func BenchmarkRead(b *testing.B) {
	const m, d, l = 500, 100, 200
	r := rand.New(rand.NewPCG(22, 0))
	data := make([]float64, m*d*l)
	for k := range data {
		data[k] = r.NormFloat64()
	}
	var buf bytes.Buffer
	if err := Write(&buf, []int{m, d, l}, data); err != nil {
		b.Fatal(err)
	}
	raw := buf.Bytes()
	path := filepath.Join(b.TempDir(), "x.npy")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	perValue := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(data)), "ns/value")
	}
	b.Run("from=file", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			_, err = Read(f)
			f.Close()
			if err != nil {
				b.Fatal(err)
			}
		}
		perValue(b)
	})
	b.Run("from=memory", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Read(bytes.NewReader(raw)); err != nil {
				b.Fatal(err)
			}
		}
		perValue(b)
	})
}
