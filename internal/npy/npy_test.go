package npy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// file builds a .npy file by hand: format version major, the header dict
// and the raw data bytes.
func file(major byte, header string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(major)
	b.WriteByte(0)
	header += "\n"
	if major == 1 {
		binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint32(len(header)))
	}
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

// encode returns the values v in the binary form of descr.
func encode(descr string, v []float64) []byte {
	var bo binary.ByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		bo = binary.BigEndian
	}
	var b bytes.Buffer
	for _, x := range v {
		switch descr[1:] {
		case "f8":
			binary.Write(&b, bo, x)
		case "f4":
			binary.Write(&b, bo, float32(x))
		case "i8":
			binary.Write(&b, bo, int64(x))
		case "i4":
			binary.Write(&b, bo, int32(x))
		case "i2":
			binary.Write(&b, bo, int16(x))
		case "i1":
			binary.Write(&b, bo, int8(x))
		case "u8":
			binary.Write(&b, bo, uint64(x))
		case "u4":
			binary.Write(&b, bo, uint32(x))
		case "u2":
			binary.Write(&b, bo, uint16(x))
		case "u1", "b1":
			b.WriteByte(byte(x))
		default:
			panic(descr)
		}
	}
	return b.Bytes()
}

func header(descr string, fortran bool, shape string) string {
	f := "False"
	if fortran {
		f = "True"
	}
	return "{'descr': '" + descr + "', 'fortran_order': " + f + ", 'shape': " + shape + ", }"
}

// cValue is the value at C index (i, j, t) of the test arrays.
func cValue(i, j, t int) float64 { return float64(100*i + 10*j + t) }

func checkTensor(t *testing.T, a *Array, m, d, l int) {
	t.Helper()
	if len(a.Shape) != 3 || a.Shape[0] != m || a.Shape[1] != d || a.Shape[2] != l {
		t.Fatalf("shape %v, want [%d %d %d]", a.Shape, m, d, l)
	}
	for i := range m {
		for j := range d {
			for k := range l {
				if got, want := a.Data[(i*d+j)*l+k], cValue(i, j, k); got != want {
					t.Fatalf("element (%d, %d, %d) = %v, want %v", i, j, k, got, want)
				}
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, shape := range [][]int{{5}, {0}, {2, 3}, {2, 3, 4}, {1, 1, 1}} {
		n := 1
		for _, s := range shape {
			n *= s
		}
		data := make([]float64, n)
		for k := range data {
			data[k] = math.Pi * float64(k-3) * 1e-300 * math.Pow(10, float64(k%600))
		}
		if n > 1 {
			data[1] = math.Copysign(0, -1)
		}
		var b bytes.Buffer
		if err := Write(&b, shape, data); err != nil {
			t.Fatal(err)
		}
		// The specification pads the preamble and header to 64 bytes.
		if hl := int(binary.LittleEndian.Uint16(b.Bytes()[8:])); (10+hl)%64 != 0 {
			t.Errorf("shape %v: header ends at byte %d, not a multiple of 64", shape, 10+hl)
		}
		a, err := Read(&b)
		if err != nil {
			t.Fatalf("shape %v: %v", shape, err)
		}
		if len(a.Shape) != len(shape) || a.DType != "<f8" || a.Fortran {
			t.Fatalf("shape %v: read shape %v dtype %s fortran %v", shape, a.Shape, a.DType, a.Fortran)
		}
		for k := range data {
			if math.Float64bits(a.Data[k]) != math.Float64bits(data[k]) {
				t.Fatalf("shape %v: value %d is %v, want %v", shape, k, a.Data[k], data[k])
			}
		}
	}
	if err := Write(&bytes.Buffer{}, []int{2, 2}, make([]float64, 3)); err == nil {
		t.Error("Write of 3 values as 2×2: no error")
	}
}

// TestDTypes reads every supported element type, in both byte orders where
// that means something.
func TestDTypes(t *testing.T) {
	v := []float64{0, 1, 2, 100, 127}
	signed := []float64{-128, -1, 0, 1, 127}
	for _, tc := range []struct {
		descr string
		vals  []float64
	}{
		{"<f8", []float64{-1.5, 0, 2.25, 1e300, -1e-300}}, {">f8", []float64{-1.5, 0, 2.25, 1e300, -1e-300}},
		{"<f4", []float64{-1.5, 0, 2.25, 0x1p100, 0.125}}, {">f4", []float64{-1.5, 0, 2.25, 0x1p100, 0.125}},
		{"<i8", []float64{-1 << 40, -1, 0, 1, 1 << 40}}, {">i8", []float64{-1 << 40, -1, 0, 1, 1 << 40}},
		{"<i4", []float64{-1 << 30, -1, 0, 1, 1 << 30}}, {"<i2", []float64{-32768, -1, 0, 1, 32767}},
		{"|i1", signed}, {"<u8", []float64{0, 1, 1 << 50, 3, 4}}, {"<u4", []float64{0, 1, 1 << 31, 3, 4}},
		{">u2", []float64{0, 1, 65535, 3, 4}}, {"|u1", []float64{0, 1, 255, 3, 4}},
		{"|b1", []float64{1, 0, 0, 1, 1}}, {"<u1", v},
	} {
		a, err := Read(bytes.NewReader(file(1, header(tc.descr, false, "(5,)"), encode(tc.descr, tc.vals))))
		if err != nil {
			t.Errorf("%s: %v", tc.descr, err)
			continue
		}
		for k, want := range tc.vals {
			if a.Data[k] != want {
				t.Errorf("%s: value %d is %v, want %v", tc.descr, k, a.Data[k], want)
			}
		}
	}
}

// TestFortran reads hand-built Fortran-ordered arrays (first index varying
// fastest) and checks they come back in C order.
func TestFortran(t *testing.T) {
	const m, d, l = 2, 3, 4
	var fvals []float64
	for k := range l {
		for j := range d {
			for i := range m {
				fvals = append(fvals, cValue(i, j, k))
			}
		}
	}
	for _, descr := range []string{"<f8", "<f4", ">f8", "<i4"} {
		a, err := Read(bytes.NewReader(file(1, header(descr, true, "(2, 3, 4)"), encode(descr, fvals))))
		if err != nil {
			t.Fatalf("%s: %v", descr, err)
		}
		if !a.Fortran {
			t.Errorf("%s: Fortran flag not set", descr)
		}
		checkTensor(t, a, m, d, l)
	}
	// A 2-D Fortran array: a[i, j] = 10*i + j, stored column by column.
	a, err := Read(bytes.NewReader(file(1, header("<f8", true, "(2, 3)"), encode("<f8", []float64{0, 10, 1, 11, 2, 12}))))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []float64{0, 1, 2, 10, 11, 12} {
		if a.Data[k] != want {
			t.Errorf("2-D Fortran: C value %d is %v, want %v", k, a.Data[k], want)
		}
	}
}

// TestNumPyFiles reads files written by NumPy itself (testdata/gen.py).
func TestNumPyFiles(t *testing.T) {
	for _, name := range []string{"c_f8.npy", "fortran_f4.npy", "fortran_f8_be.npy", "c_i2.npy"} {
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		a, err := Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := strings.HasPrefix(name, "fortran"); a.Fortran != want {
			t.Errorf("%s: Fortran = %v", name, a.Fortran)
		}
		checkTensor(t, a, 2, 3, 4)
	}
	for _, tc := range []struct {
		name  string
		shape []int
		want  []float64
	}{
		{"vec_i8.npy", []int{5}, []float64{-2, -1, 0, 1, 2}},
		{"vec_bool.npy", []int{3}, []float64{1, 0, 1}},
		{"col_f8.npy", []int{5, 1}, []float64{-2, -1, 0, 1, 2}},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tc.name))
		if err != nil {
			t.Fatal(err)
		}
		a, err := Read(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(a.Shape) != len(tc.shape) || a.Shape[0] != tc.shape[0] {
			t.Errorf("%s: shape %v, want %v", tc.name, a.Shape, tc.shape)
		}
		for k, w := range tc.want {
			if a.Data[k] != w {
				t.Errorf("%s: value %d is %v, want %v", tc.name, k, a.Data[k], w)
			}
		}
	}
}

func TestVersions(t *testing.T) {
	for _, major := range []byte{2, 3} {
		a, err := Read(bytes.NewReader(file(major, header("<f8", false, "(2,)"), encode("<f8", []float64{1, 2}))))
		if err != nil {
			t.Fatalf("version %d: %v", major, err)
		}
		if a.Data[0] != 1 || a.Data[1] != 2 {
			t.Errorf("version %d: data %v", major, a.Data)
		}
	}
	// Python 2 wrote long integers with an L suffix.
	if _, err := Read(bytes.NewReader(file(1, header("<f8", false, "(2L,)"), encode("<f8", []float64{1, 2})))); err != nil {
		t.Errorf("shape with L suffix: %v", err)
	}
}

// TestBadFiles checks that every kind of broken file gives an error saying
// what is wrong.
func TestBadFiles(t *testing.T) {
	good := file(1, header("<f8", false, "(2, 3)"), encode("<f8", make([]float64, 6)))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"truncated preamble", good[:5], "truncated"},
		{"wrong magic", append([]byte("\x93NUMPX"), good[6:]...), "bad magic"},
		{"csv file", []byte("instance,feature,timestep,value\n0,0,0,1\n"), "bad magic"},
		{"unsupported version", append(append([]byte{}, good[:6]...), append([]byte{4, 0}, good[8:]...)...), "version 4.0"},
		{"truncated header length", good[:9], "truncated"},
		{"truncated header", good[:30], "truncated"},
		{"truncated data", good[:len(good)-3], "truncated"},
		{"header not a dict", file(1, "descr: <f8", nil), "malformed header"},
		{"missing shape", file(1, "{'descr': '<f8', 'fortran_order': False, }", nil), `lacks "shape"`},
		{"missing descr", file(1, "{'fortran_order': False, 'shape': (1,), }", encode("<f8", []float64{1})), `lacks "descr"`},
		{"unknown key", file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", nil), `unknown header key "x"`},
		{"bad fortran_order", file(1, "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,), }", nil), "fortran_order"},
		{"bad shape", file(1, header("<f8", false, "(2, a)"), nil), "malformed shape"},
		{"shape not a tuple", file(1, header("<f8", false, "[2]"), nil), "malformed shape"},
		{"negative dimension", file(1, header("<f8", false, "(-2,)"), nil), "negative dimension"},
		{"huge shape", file(1, header("<f8", false, "(100000, 100000, 100000)"), nil), "too large"},
		{"structured dtype", file(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", nil), "structured"},
		{"complex dtype", file(1, header("<c16", false, "(1,)"), make([]byte, 16)), `unsupported dtype "<c16"`},
		{"half precision", file(1, header("<f2", false, "(1,)"), make([]byte, 2)), `unsupported dtype "<f2"`},
		{"object dtype", file(1, header("|O", false, "(1,)"), make([]byte, 8)), "unsupported dtype"},
		{"string dtype", file(1, header("<U3", false, "(1,)"), make([]byte, 12)), "unsupported dtype"},
		{"bad byte order", file(1, header("!f8", false, "(1,)"), make([]byte, 8)), "unsupported dtype"},
		// Issue 12, defect 8: trailing bytes used to be ignored.
		{"trailing bytes", append(good[:len(good):len(good)], 0), "1 unexpected byte after the 6 values of shape [2 3]"},
		{"two arrays", append(good[:len(good):len(good)], good...), "unexpected bytes after the 6 values"},
		{"trailing bytes after an empty array", file(1, header("<f8", false, "(0, 3)"), make([]byte, 8)), "8 unexpected bytes"},
		{"implausible v2 header", append([]byte("\x93NUMPY\x02\x00"), 0xff, 0xff, 0xff, 0x7f), "implausible"},
	} {
		a, err := Read(bytes.NewReader(tc.data))
		if err == nil {
			t.Errorf("%s: no error (shape %v)", tc.name, a.Shape)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "npy: ") {
			t.Errorf("%s: error %q, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

// TestHugeShapeTruncated checks that a header announcing 2^30 values in a
// file that holds only a few fails as truncated without allocating memory
// for the announced size (allocation is bounded by what was read).
func TestHugeShapeTruncated(t *testing.T) {
	data := file(1, header("<f8", false, "(1073741824,)"), make([]byte, 64))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(data))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("got %v, want a truncated-file error", err)
	}
	// 8 GiB are announced; the chunked reader allocates about 1 MiB before
	// it finds the end of the file. 16 MiB leaves room for the runtime.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("reading a truncated huge array allocated %d bytes", grew)
	}
}

// TestReadFileAllocatesOnce checks that reading a .npy file allocates the
// values once, at their exact size (the scale measurement of issue 12 found
// loading a 240 MB tensor peaking at 3.4 times its size while the slice grew),
// and that a file too short for its shape fails before reading.
func TestReadFileAllocatesOnce(t *testing.T) {
	const n = 1 << 20 // 8 MiB of float64
	var b bytes.Buffer
	if err := Write(&b, []int{n}, make([]float64, n)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, short := filepath.Join(dir, "good.npy"), filepath.Join(dir, "short.npy")
	if err := os.WriteFile(good, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, b.Bytes()[:b.Len()-1], 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(path string) (uint64, error) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = Read(f)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, err
	}
	// The values, one raw chunk (512 KiB) and the reader's buffer (64 KiB).
	if got, err := read(good); err != nil || got > 8*n+1<<20 {
		t.Errorf("reading %d values from a file allocated %d bytes (%v), want at most %d", n, got, err, 8*n+1<<20)
	}
	if got, err := read(short); err == nil || !strings.Contains(err.Error(), "needs 8388608 bytes of data, the file holds 8388607: file is truncated") || got > 1<<20 {
		t.Errorf("reading a truncated file: %v after allocating %d bytes", err, got)
	}
}

// TestDirectRead checks the path that reads a little-endian float64 array
// straight into its values (on a little-endian machine): a round trip of
// arrays spanning several chunks, and not a whole number of them, from a
// file (one exact allocation) and from memory (growing), with every bit
// kept (NaN payloads, -0, infinities, subnormals); a payload cut short at
// and between chunk boundaries; and that the other byte order and other
// types still decode the same values.
func TestDirectRead(t *testing.T) {
	switch runtime.GOARCH {
	case "amd64", "arm64", "386", "riscv64", "loong64", "wasm":
		if !hostLittleEndian {
			t.Fatalf("hostLittleEndian is false on %s", runtime.GOARCH)
		}
	}
	dir := t.TempDir()
	for _, n := range []int{1, 7, chunkValues - 1, chunkValues, chunkValues + 1, 3*chunkValues + 5} {
		data := make([]float64, n)
		for k := range data {
			data[k] = float64(k)*1.25 - 1e6
		}
		special := []uint64{
			0x7ff8000000000001, // a quiet NaN with a payload
			0x7ff0000000000001, // a signalling NaN
			math.Float64bits(math.Copysign(0, -1)),
			math.Float64bits(math.Inf(1)), math.Float64bits(math.Inf(-1)),
			1, // the smallest subnormal
		}
		for s, bits := range special {
			data[(s*(n/len(special)+1))%n] = math.Float64frombits(bits)
		}
		var b bytes.Buffer
		if err := Write(&b, []int{n}, data); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "x.npy")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fromFile, err := Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%d values from a file: %v", n, err)
		}
		fromMemory, err := Read(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("%d values from memory: %v", n, err)
		}
		for _, a := range []*Array{fromFile, fromMemory} {
			if len(a.Data) != n || len(a.Shape) != 1 || a.Shape[0] != n {
				t.Fatalf("%d values: read shape %v, %d values", n, a.Shape, len(a.Data))
			}
			for k := range data {
				if math.Float64bits(a.Data[k]) != math.Float64bits(data[k]) {
					t.Fatalf("%d values: value %d has bits %#x, want %#x", n, k, math.Float64bits(a.Data[k]), math.Float64bits(data[k]))
				}
			}
		}
		// The same values big-endian, and as float32 where they fit
		// (integers up to 2^24), decode to the same.
		be := file(1, header(">f8", false, fmt.Sprintf("(%d,)", n)), encode(">f8", data))
		a, err := Read(bytes.NewReader(be))
		if err != nil {
			t.Fatalf("%d values >f8: %v", n, err)
		}
		for k := range data {
			if math.Float64bits(a.Data[k]) != math.Float64bits(data[k]) {
				t.Fatalf("%d values >f8: value %d has bits %#x, want %#x", n, k, math.Float64bits(a.Data[k]), math.Float64bits(data[k]))
			}
		}
		ints := make([]float64, n)
		for k := range ints {
			ints[k] = float64(k%(1<<24) - 1<<23)
		}
		for _, descr := range []string{"<f4", ">f4", "<i4", "<i8"} {
			a, err := Read(bytes.NewReader(file(1, header(descr, false, fmt.Sprintf("(%d,)", n)), encode(descr, ints))))
			if err != nil {
				t.Fatalf("%d values %s: %v", n, descr, err)
			}
			for k := range ints {
				if a.Data[k] != ints[k] {
					t.Fatalf("%d values %s: value %d is %v, want %v", n, descr, k, a.Data[k], ints[k])
				}
			}
		}
	}
	// A payload cut short, in memory (found while reading) and in a file
	// (found from its size before reading).
	const n = 2*chunkValues + 3
	whole := file(1, header("<f8", false, fmt.Sprintf("(%d,)", n)), encode("<f8", make([]float64, n)))
	data := len(whole) - 8*n // where the payload starts
	for _, cut := range []int{1, 8, 8*chunkValues - 1, 8 * chunkValues, 8*chunkValues + 1, 8*n - 1} {
		short := whole[:data+cut]
		want := fmt.Sprintf("npy: reading %d values of <f8: file is truncated", n)
		if _, err := Read(bytes.NewReader(short)); err == nil || err.Error() != want {
			t.Errorf("payload cut to %d bytes, from memory: error %v, want %q", cut, err, want)
		}
		path := filepath.Join(dir, "short.npy")
		if err := os.WriteFile(path, short, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Read(f)
		f.Close()
		want = fmt.Sprintf("npy: shape [%d] of <f8 needs %d bytes of data, the file holds %d: file is truncated", n, 8*n, cut)
		if err == nil || err.Error() != want {
			t.Errorf("payload cut to %d bytes, from a file: error %v, want %q", cut, err, want)
		}
	}
}
