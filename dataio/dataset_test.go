package dataio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// sameValues fails unless got and want hold the same values, NaN matching
// NaN (whatever its bits).
func sameValues(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for k := range got {
		if math.IsNaN(got[k]) != math.IsNaN(want[k]) || !math.IsNaN(want[k]) && math.Float64bits(got[k]) != math.Float64bits(want[k]) {
			t.Fatalf("%s: value %d is %v, want %v (all %v)", what, k, got[k], want[k], got)
		}
	}
}

var nan = math.NaN()

// TestReadDataCSV checks the missing cells of the long format: a cell
// without a line, and empty, NA and NaN values, in any case; and that
// ReadTensorCSV still refuses them.
func TestReadDataCSV(t *testing.T) {
	const hdr = "instance,feature,timestep,value\n"
	for _, tc := range []struct {
		name  string
		text  string
		want  []float64 // 2 × 2 × 2
		names []string
	}{
		{"complete", hdr + "0,0,0,1\n0,0,1,2\n0,1,0,3\n0,1,1,4\n1,0,0,5\n1,0,1,6\n1,1,0,7\n1,1,1,8\n",
			[]float64{1, 2, 3, 4, 5, 6, 7, 8}, nil},
		{"rows left out (a shorter instance, a gap)", hdr + "0,0,0,1\n0,0,1,2\n0,1,1,4\n1,0,0,5\n1,1,0,7\n",
			[]float64{1, 2, nan, 4, 5, nan, 7, nan}, nil},
		{"empty, NA, nan, NaN values", hdr + "0,a,0,1\n0,a,1,\n0,b,0,NA\n0,b,1,nan\n1,a,0, NaN\n1,a,1,na\n1,b,0,7\n1,b,1,8\n",
			[]float64{1, nan, nan, nan, nan, nan, 7, 8}, []string{"a", "b"}},
		{"quoted empty value", hdr + "0,0,0,1\n0,0,1,\"\"\n1,0,0,2\n1,1,1,3\n0,1,0,4\n",
			[]float64{1, nan, 4, nan, 2, nan, nan, 3}, nil},
	} {
		p := writeTemp(t, "x.csv", []byte(tc.text))
		x, names, err := ReadDataCSV(p, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if x.M != 2 || x.D != 2 || x.L != 2 || !slices.Equal(names, tc.names) {
			t.Errorf("%s: %d×%d×%d %q", tc.name, x.M, x.D, x.L, names)
			continue
		}
		sameValues(t, tc.name, x.Data, tc.want)
		if tc.name != "complete" {
			if _, _, err := ReadTensorCSV(p, nil); err == nil {
				t.Errorf("%s: ReadTensorCSV accepted missing cells", tc.name)
			}
		}
	}
}

// TestReadDataCSVErrors checks the clear errors for bad data with missing
// values, each naming the line, instance or feature.
func TestReadDataCSVErrors(t *testing.T) {
	const hdr = "instance,feature,timestep,value\n"
	for _, tc := range []struct {
		name  string
		text  string
		given []string
		want  string
	}{
		{"infinite value", hdr + "0,0,0,1\n0,0,1,-Inf\n", nil, `line 3: value "-Inf" is infinite (a missing value is empty, NA or NaN)`},
		{"infinite value spelled out", hdr + "0,0,0,infinity\n", nil, `line 2: value "infinity" is infinite`},
		{"duplicate row", hdr + "0,hr,0,1\n0,hr,1,2\n0,hr,0,\n", nil, `lines 2 and 4 both give instance 0, feature "hr", timestep 0`},
		{"instance without a line", hdr + "0,0,0,1\n2,0,0,1\n", nil, "instance 1 has no line"},
		{"feature index without a line", hdr + "0,0,0,1\n0,2,0,1\n", nil, "feature 1 has no line"},
		{"named feature without a line", hdr + "0,hr,0,1\n", []string{"hr", "bp"}, `feature "bp" has no line`},
		{"non-numeric value", hdr + "0,0,0,n/a\n", nil, `line 2: value "n/a" is not a number`},
		{"stray timestep", hdr + "0,0,0,1\n0,0,100000,2\n", nil, "largest indices imply a 1×1×100001 tensor of 100001 cells but the file has only 2 lines"},
		{"huge shape", hdr + "0,0,0,1\n2000000,0,0,1\n0,0,2000,1\n", nil, "too large"},
	} {
		p := writeTemp(t, "x.csv", []byte(tc.text))
		_, _, err := ReadDataCSV(p, tc.given)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "dataio: "+p+": ") {
			t.Errorf("%s: error %q, want %q after the file name", tc.name, msg, tc.want)
		}
		checkOnePrefix(t, err)
	}
}

// TestWriteTensorCSVMissing: WriteTensorCSV writes a missing value as NaN,
// which ReadDataCSV reads back as missing.
func TestWriteTensorCSVMissing(t *testing.T) {
	x := testTensor()
	x.Data[3], x.Data[10] = nan, nan
	p := filepath.Join(t.TempDir(), "x.csv")
	if err := WriteTensorCSV(p, x, nil); err != nil {
		t.Fatal(err)
	}
	y, _, err := ReadDataCSV(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, "round trip", y.Data, x.Data)
}

// boolNPY returns a .npy file of booleans.
func boolNPY(shape string, vals []bool) []byte {
	hdr := "{'descr': '|b1', 'fortran_order': False, 'shape': " + shape + ", }\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	for _, v := range vals {
		if v {
			b.WriteByte(1)
		} else {
			b.WriteByte(0)
		}
	}
	return b.Bytes()
}

func TestReadDataNPY(t *testing.T) {
	x := testTensor()
	x.Data[4] = nan
	p := filepath.Join(t.TempDir(), "x.npy")
	if err := WriteTensorNPY(p, x); err != nil {
		t.Fatal(err)
	}
	y, err := ReadDataNPY(p)
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, "NaN data", y.Data, x.Data)
	if _, err := ReadTensorNPY(p); err == nil || !strings.Contains(err.Error(), "NaN (a missing value)") {
		t.Errorf("ReadTensorNPY of data with NaN: %v", err)
	}
	x.Data[9] = math.Inf(-1)
	if err := WriteTensorNPY(p, x); err != nil {
		t.Fatal(err)
	}
	_, err = ReadDataNPY(p)
	if err == nil || !strings.Contains(err.Error(), "value at instance 1, feature 0, timestep 1 is -Inf (a missing value is NaN; infinities are errors)") {
		t.Errorf("-Inf: got %v", err)
	} else {
		checkOnePrefix(t, err)
	}
}

// TestReadDataNPYFirstInf checks, on a tensor of several of the blocks
// ReadDataNPY checks at a time, that NaN anywhere passes and that the
// error names the first infinite value wherever it lies: at a block's
// first or last value, after NaN in its block, before another infinity.
func TestReadDataNPYFirstInf(t *testing.T) {
	const m, d, l = 3, 5, 300 // 4500 values: four blocks and a part
	base := tempora.NewTensor(m, d, l)
	for k := range base.Data {
		base.Data[k] = float64(k%11) - 5
	}
	for _, k := range []int{0, 17, 1023, 1024, 2047, 3000, 4499} {
		base.Data[k] = nan
	}
	p := filepath.Join(t.TempDir(), "x.npy")
	if err := WriteTensorNPY(p, base); err != nil {
		t.Fatal(err)
	}
	if x, err := ReadDataNPY(p); err != nil {
		t.Fatalf("NaN only: %v", err)
	} else {
		sameValues(t, "NaN only", x.Data, base.Data)
	}
	for _, infs := range [][]int{{0}, {1}, {1023}, {1024}, {1025}, {2046}, {2048}, {4499}, {3001, 1500}, {1024, 1023}, {4000, 4499}} {
		x := base.Clone()
		for n, k := range infs {
			x.Data[k] = math.Inf(1 - 2*(n%2))
		}
		first := slices.Min(infs)
		i, r := first/(d*l), first%(d*l)
		want := fmt.Sprintf("dataio: %s: value at instance %d, feature %d, timestep %d is %v (a missing value is NaN; infinities are errors)", p, i, r/l, r%l, x.Data[first])
		if err := WriteTensorNPY(p, x); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadDataNPY(p); err == nil || err.Error() != want {
			t.Errorf("infinities at %v: error %v, want %q", infs, err, want)
		}
	}
}

func TestReadMaskNPY(t *testing.T) {
	want := []bool{true, false, true, true}
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"bool", boolNPY("(1, 2, 2)", want)},
		{"float 0/1", npyFile("<f8", false, "(1, 2, 2)", []float64{1, 0, 1, 1})},
	} {
		got, err := ReadMaskNPY(writeTemp(t, "mask.npy", tc.file), 1, 2, 2)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v, %v", tc.name, got, err)
		}
	}
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"wrong shape", boolNPY("(1, 2, 1)", []bool{true, true}), "the mask has shape [1 2 1] but the data has shape [1 2 2]"},
		{"wrong rank", boolNPY("(4,)", want), "the mask has shape [4] but the data has shape [1 2 2]"},
		{"other value", npyFile("<f8", false, "(1, 2, 2)", []float64{1, 0, 0.5, 1}), "mask value at instance 0, feature 1, timestep 0 is 0.5 (want true/false or 1/0"},
		{"NaN value", npyFile("<f8", false, "(1, 2, 2)", []float64{1, nan, 1, 1}), "timestep 1 is NaN"},
	} {
		p := writeTemp(t, "mask.npy", tc.file)
		_, err := ReadMaskNPY(p, 1, 2, 2)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dataio: "+p+": ") {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(path(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// 3 instances × 2 features × 4 timesteps; instance 2 has length 2.
	x := testTensor()
	for j := range 2 {
		s := x.Series(2, j)
		s[2], s[3] = nan, nan
	}
	x.Data[1] = nan // instance 0, feature 0, timestep 1: a gap
	if err := WriteTensorNPY(path("x.npy"), x); err != nil {
		t.Fatal(err)
	}
	if err := WriteTensorCSV(path("x.csv"), x, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	write("y.csv", []byte("0\n1\n1\n"))
	write("y1.csv", []byte("0\n1\n"))
	write("yinf.csv", []byte("0\n1\ninf\n"))
	write("mask.npy", boolNPY("(3, 2, 4)", func() []bool {
		m := make([]bool, 24)
		for k := range m {
			m[k] = k != 9 // instance 1, feature 0, timestep 1
		}
		return m
	}()))
	all := make([]bool, 24)
	all[0] = true
	write("nothing1.npy", boolNPY("(3, 2, 4)", all)) // instances 1 and 2 have nothing observed
	write("mask2.npy", boolNPY("(3, 2, 3)", make([]bool, 18)))

	for _, data := range []string{"x.npy", "x.csv"} {
		ds, obs, err := ReadFiles(Files{Data: path(data), Targets: path("y.csv"), Mask: path("mask.npy"), Task: tempora.Classification, Alignment: tempora.AlignStart})
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		want := slices.Clone(x.Data)
		want[9] = nan
		sameValues(t, data, ds.X.Data, want)
		if got := obs.Lengths(); !slices.Equal(got, []int{4, 4, 2}) {
			t.Errorf("%s: lengths %v", data, got)
		}
		if obs.Missing[0] != 2 || obs.Missing[1] != 0 {
			t.Errorf("%s: missing %v", data, obs.Missing)
		}
		// End-aligned, instance 2's trailing NaNs are missing cells inside
		// its full-length support.
		ds, obs, err = ReadFiles(Files{Data: path(data), Targets: path("y.csv"), Task: tempora.Classification, Alignment: tempora.AlignEnd})
		if err != nil {
			t.Fatalf("%s end: %v", data, err)
		}
		if ds.Alignment != tempora.AlignEnd || !slices.Equal(obs.Lengths(), []int{4, 4, 4}) || obs.Missing[0] != 3 {
			t.Errorf("%s end: alignment %v lengths %v missing %v", data, ds.Alignment, obs.Lengths(), obs.Missing)
		}
	}
	for _, tc := range []struct {
		f    Files
		want string
	}{
		{Files{Data: "x.npy", Targets: "y.csv", Mask: "mask2.npy"}, "the mask has shape [3 2 3] but the data has shape [3 2 4]"},
		{Files{Data: "x.npy", Targets: "y.csv", Mask: "nothing1.npy"}, "instance 1 has no observed value"},
		{Files{Data: "x.npy", Targets: "y.csv", Mask: "mask.csv"}, `unknown mask file extension ".csv" (want .npy)`},
		{Files{Data: "x.npy", Targets: "y1.csv"}, "has 2 targets but"},
		{Files{Data: "x.npy", Targets: "yinf.csv"}, `line 3: value "inf" is not finite`},
	} {
		f := tc.f
		f.Data, f.Targets, f.Mask = path(f.Data), path(f.Targets), optPath(dir, f.Mask)
		_, _, err := ReadFiles(f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.f, err, tc.want)
			continue
		}
		checkOnePrefix(t, err)
	}
	// A feature never observed, named.
	y := tempora.NewTensor(2, 2, 2)
	copy(y.Data, []float64{1, 2, nan, nan, 3, 4, nan, nan})
	if err := WriteTensorNPY(path("never.npy"), y); err != nil {
		t.Fatal(err)
	}
	write("names.txt", []byte("hr\nbp\n"))
	write("y2.csv", []byte("1\n2\n"))
	_, _, err := ReadFiles(Files{Data: path("never.npy"), Targets: path("y2.csv"), Names: path("names.txt")})
	if err == nil || !strings.Contains(err.Error(), `feature 1 ("bp") is never observed`) {
		t.Errorf("feature never observed: %v", err)
	}
}
