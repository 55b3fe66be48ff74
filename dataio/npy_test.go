package dataio

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/errmsg"
)

// npyFile builds a version 1.0 .npy file by hand from a descriptor, the
// Fortran flag, a shape literal and values encoded as float64 ("<f8") or
// float32 ("<f4").
func npyFile(descr string, fortran bool, shape string, vals []float64) []byte {
	f := "False"
	if fortran {
		f = "True"
	}
	hdr := "{'descr': '" + descr + "', 'fortran_order': " + f + ", 'shape': " + shape + ", }\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	for _, v := range vals {
		if descr == "<f4" {
			binary.Write(&b, binary.LittleEndian, float32(v))
		} else {
			binary.Write(&b, binary.LittleEndian, v)
		}
	}
	return b.Bytes()
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// testTensor returns a 3 × 2 × 4 tensor whose values exercise exact
// round trips (negative zero, tiny and huge magnitudes).
func testTensor() *tempora.Tensor {
	x := tempora.NewTensor(3, 2, 4)
	for k := range x.Data {
		x.Data[k] = math.Sqrt(float64(k)+0.5) * math.Pow(-10, float64(k%7-3))
	}
	x.Data[5] = math.Copysign(0, -1)
	x.Data[6] = 5e-324
	x.Data[7] = -1.7976931348623157e308
	return x
}

func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for k := range got {
		if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
			t.Fatalf("%s: value %d is %v, want %v", what, k, got[k], want[k])
		}
	}
}

func TestNPYRoundTrip(t *testing.T) {
	dir := t.TempDir()
	x := testTensor()
	p := filepath.Join(dir, "x.npy")
	if err := WriteTensorNPY(p, x); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTensorNPY(p)
	if err != nil {
		t.Fatal(err)
	}
	if !got.SameShape(x) {
		t.Fatalf("shape %d×%d×%d, want %d×%d×%d", got.M, got.D, got.L, x.M, x.D, x.L)
	}
	sameBits(t, "tensor", got.Data, x.Data)

	v := []float64{0, 1, -2.5, 1e-300}
	p = filepath.Join(dir, "y.npy")
	if err := WriteVectorNPY(p, v); err != nil {
		t.Fatal(err)
	}
	gv, err := ReadVectorNPY(p)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "vector", gv, v)
}

// TestReadTensorNPYFloat32AndFortran reads hand-built float32 files in C
// and Fortran order; both must give x[i, j, t] = 100i + 10j + t.
func TestReadTensorNPYFloat32AndFortran(t *testing.T) {
	const m, d, l = 2, 3, 4
	var cvals, fvals []float64
	for i := range m {
		for j := range d {
			for k := range l {
				cvals = append(cvals, float64(100*i+10*j+k))
			}
		}
	}
	for k := range l {
		for j := range d {
			for i := range m {
				fvals = append(fvals, float64(100*i+10*j+k))
			}
		}
	}
	for _, tc := range []struct {
		name    string
		descr   string
		fortran bool
		vals    []float64
	}{
		{"c_f8", "<f8", false, cvals},
		{"c_f4", "<f4", false, cvals},
		{"fortran_f8", "<f8", true, fvals},
		{"fortran_f4", "<f4", true, fvals},
	} {
		p := writeTemp(t, tc.name+".npy", npyFile(tc.descr, tc.fortran, "(2, 3, 4)", tc.vals))
		x, err := ReadTensorNPY(p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if x.M != m || x.D != d || x.L != l {
			t.Fatalf("%s: shape %d×%d×%d", tc.name, x.M, x.D, x.L)
		}
		for i := range m {
			for j := range d {
				for k := range l {
					if got, want := x.At(i, j, k), float64(100*i+10*j+k); got != want {
						t.Fatalf("%s: (%d, %d, %d) = %v, want %v", tc.name, i, j, k, got, want)
					}
				}
			}
		}
	}
}

func TestReadNPYErrors(t *testing.T) {
	good := npyFile("<f8", false, "(1, 2, 2)", []float64{1, 2, 3, 4})
	for _, tc := range []struct {
		name   string
		data   []byte
		vector bool
		want   string
	}{
		{"rank 2 as tensor", npyFile("<f8", false, "(2, 2)", []float64{1, 2, 3, 4}), false, "shape instances × features × timesteps, got shape [2 2]"},
		{"rank 1 as tensor", npyFile("<f8", false, "(4,)", []float64{1, 2, 3, 4}), false, "got shape [4]"},
		{"empty dimension", npyFile("<f8", false, "(0, 2, 2)", nil), false, "empty shape 0×2×2"},
		{"NaN in data", npyFile("<f8", false, "(1, 2, 2)", []float64{1, 2, math.NaN(), 4}), false, "instance 0, feature 1, timestep 0 is NaN"},
		{"Inf in float32 data", npyFile("<f4", false, "(1, 2, 2)", []float64{1, math.Inf(-1), 3, 4}), false, "timestep 1 is -Inf"},
		{"truncated", good[:len(good)-5], false, "truncated"},
		{"wrong magic", append([]byte("PK\x03\x04"), good[4:]...), false, "bad magic"},
		{"bad header", npyFile("<f8", false, "(1, two, 2)", nil), false, "malformed shape"},
		{"unsupported dtype", npyFile("<c8", false, "(1, 2, 2)", nil), false, `unsupported dtype "<c8"`},
		{"rank 3 as vector", good, true, "want a one-dimensional array, got shape [1 2 2]"},
		{"row as vector", npyFile("<f8", false, "(1, 4)", []float64{1, 2, 3, 4}), true, "got shape [1 4]"},
		{"NaN in vector", npyFile("<f8", false, "(3,)", []float64{0, math.NaN(), 1}), true, "value 1 is NaN"},
		{"empty vector", npyFile("<f8", false, "(0,)", nil), true, "no values"},
		// Issue 12, defect 8: trailing bytes used to be accepted silently.
		{"trailing bytes", append(good[:len(good):len(good)], 0, 0, 0), false, "3 unexpected bytes after the 4 values"},
		{"two vectors", append(npyFile("<f8", false, "(2,)", []float64{0, 1}), npyFile("<f8", false, "(2,)", []float64{0, 1})...), true, "unexpected bytes after the 2 values"},
	} {
		p := writeTemp(t, "bad.npy", tc.data)
		var err error
		if tc.vector {
			_, err = ReadVectorNPY(p)
		} else {
			_, err = ReadTensorNPY(p)
		}
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "dataio: "+p+": ") {
			t.Errorf("%s: error %q, want %q after the file name", tc.name, msg, tc.want)
		}
		checkOnePrefix(t, err)
	}
	if _, err := ReadTensorNPY(filepath.Join(t.TempDir(), "missing.npy")); err == nil || !strings.Contains(err.Error(), "missing.npy") {
		t.Errorf("missing file: got %v", err)
	}
}

func TestReadVectorNPYColumn(t *testing.T) {
	p := writeTemp(t, "y.npy", npyFile("<f8", false, "(3, 1)", []float64{0, 1, 1}))
	v, err := ReadVectorNPY(p)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "column vector", v, []float64{0, 1, 1})
}

// checkOnePrefix fails unless err's message has the package prefix
// "dataio: " at its start and no other package's prefix (issue 12, defect
// 10: messages such as "tempora: x.npy: npy: …" or "synth: tempora: …").
func checkOnePrefix(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "dataio: "); !ok || errmsg.Trim(rest) != rest {
		t.Errorf("error %q does not carry exactly one prefix, dataio's", msg)
	}
}
