package npy

import (
	"bytes"
	"math"
	"runtime"
	"strings"
	"testing"
)

// FuzzRead feeds Read arbitrary bytes. Seeds: testdata/fuzz/FuzzRead (the
// NumPy-written files of testdata: every dtype and order Read supports) and
// the edge cases below. Properties:
//   - no panic, and a one-line error with the "npy: " prefix;
//   - memory bounded by the input, not by the shape the header announces;
//   - on success: the values fill the shape exactly, and Write followed by
//     Read gives back the same shape and bit-identical values (the
//     round trip through tempora's own format).
func FuzzRead(f *testing.F) {
	good := file(1, header("<f8", false, "(2, 3)"), encode("<f8", []float64{1, 2, 3, 4, 5, 6}))
	f.Add(good)
	f.Add(append(good[:len(good):len(good)], 0))
	f.Add(file(2, header(">i4", true, "(2, 2, 1)"), encode(">i4", []float64{1, -2, 3, -4})))
	f.Add(file(1, header("|b1", false, "()"), []byte{1}))
	f.Add(file(1, header("<f8", false, "(1073741824,)"), make([]byte, 64)))
	f.Fuzz(func(t *testing.T, in []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		a, err := Read(bytes.NewReader(in))
		runtime.ReadMemStats(&after)
		// The largest legitimate use: 1-byte values decoded to 8-byte
		// floats, grown by doubling, then transposed from Fortran order;
		// plus a header of at most 1 MiB (version 2) and fixed buffers.
		if n, limit := after.TotalAlloc-before.TotalAlloc, uint64(4<<20+40*len(in)); n > limit {
			t.Fatalf("Read allocated %d bytes for %d bytes of input (limit %d)", n, len(in), limit)
		}
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "npy: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q is not one line with the npy: prefix", msg)
			}
			return
		}
		n := 1
		for _, s := range a.Shape {
			n *= s
		}
		if n != len(a.Data) {
			t.Fatalf("shape %v holds %d values, Data has %d", a.Shape, n, len(a.Data))
		}
		var out bytes.Buffer
		if err := Write(&out, a.Shape, a.Data); err != nil {
			t.Fatalf("Write of a read array: %v", err)
		}
		b, err := Read(&out)
		if err != nil {
			t.Fatalf("reading back what Write wrote: %v", err)
		}
		if len(b.Shape) != len(a.Shape) || len(b.Data) != len(a.Data) || b.DType != "<f8" || b.Fortran {
			t.Fatalf("round trip: shape %v → %v, dtype %s, Fortran %v", a.Shape, b.Shape, b.DType, b.Fortran)
		}
		for k := range a.Shape {
			if a.Shape[k] != b.Shape[k] {
				t.Fatalf("round trip: shape %v → %v", a.Shape, b.Shape)
			}
		}
		for k := range a.Data {
			if math.Float64bits(a.Data[k]) != math.Float64bits(b.Data[k]) {
				t.Fatalf("round trip: value %d %v → %v", k, a.Data[k], b.Data[k])
			}
		}
	})
}
