package dataio

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

func TestTensorCSVRoundTrip(t *testing.T) {
	x := testTensor()
	dir := t.TempDir()
	for _, names := range [][]string{nil, {"heart rate", "spo2, %"}} {
		p := filepath.Join(dir, "x.csv")
		if err := WriteTensorCSV(p, x, names); err != nil {
			t.Fatal(err)
		}
		got, gotNames, err := ReadTensorCSV(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !got.SameShape(x) {
			t.Fatalf("names %q: shape %d×%d×%d", names, got.M, got.D, got.L)
		}
		sameBits(t, "tensor", got.Data, x.Data)
		if !slices.Equal(gotNames, names) {
			t.Errorf("names %q read back as %q", names, gotNames)
		}
	}
	if err := WriteTensorCSV(filepath.Join(dir, "bad.csv"), x, []string{"one"}); err == nil {
		t.Error("WriteTensorCSV with 1 name for 2 features: no error")
	}
}

// TestReadTensorCSVLayouts checks the documented freedoms of the long
// format: any line order, any column order, spaces, CRLF line ends, a byte
// order mark, and the feature column as indices or names.
func TestReadTensorCSVLayouts(t *testing.T) {
	// The target tensor is 2 × 2 × 2 with x[i, j, t] = 100i + 10j + t.
	want := []float64{0, 1, 10, 11, 100, 101, 110, 111}
	for _, tc := range []struct {
		name      string
		text      string
		given     []string
		wantNames []string
	}{
		{"indices shuffled",
			"instance,feature,timestep,value\n1,1,1,111\n0,0,0,0\n0,1,0,10\n1,0,0,100\n0,0,1,1\n1,1,0,110\n0,1,1,11\n1,0,1,101\n",
			nil, nil},
		{"columns reordered, spaces, CRLF, BOM",
			"\ufeffvalue, timestep, Instance, feature\r\n0, 0, 0, 0\r\n1, 1, 0, 0\r\n10, 0, 0, 1\r\n11, 1, 0, 1\r\n100, 0, 1, 0\r\n101,1,1,0\r\n110,0,1,1\r\n111,1,1,1\r\n",
			nil, nil},
		{"names in order of appearance",
			"instance,feature,timestep,value\n0,hr,0,0\n0,hr,1,1\n0,bp,0,10\n0,bp,1,11\n1,hr,0,100\n1,hr,1,101\n1,bp,0,110\n1,bp,1,111\n",
			nil, []string{"hr", "bp"}},
		{"names given, file in another order",
			"instance,feature,timestep,value\n0,bp,0,10\n0,bp,1,11\n0,hr,0,0\n0,hr,1,1\n1,bp,0,110\n1,bp,1,111\n1,hr,0,100\n1,hr,1,101\n",
			[]string{"hr", "bp"}, []string{"hr", "bp"}},
		{"names given, file with indices",
			"instance,feature,timestep,value\n0,0,0,0\n0,0,1,1\n0,1,0,10\n0,1,1,11\n1,0,0,100\n1,0,1,101\n1,1,0,110\n1,1,1,111\n",
			[]string{"hr", "bp"}, []string{"hr", "bp"}},
		{"quoted name with comma",
			"instance,feature,timestep,value\n0,\"a,b\",0,0\n0,\"a,b\",1,1\n0,c,0,10\n0,c,1,11\n1,\"a,b\",0,100\n1,\"a,b\",1,101\n1,c,0,110\n1,c,1,111\n",
			nil, []string{"a,b", "c"}},
	} {
		p := writeTemp(t, "x.csv", []byte(tc.text))
		x, names, err := ReadTensorCSV(p, tc.given)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if x.M != 2 || x.D != 2 || x.L != 2 {
			t.Errorf("%s: shape %d×%d×%d", tc.name, x.M, x.D, x.L)
			continue
		}
		if !slices.Equal(x.Data, want) {
			t.Errorf("%s: data %v, want %v", tc.name, x.Data, want)
		}
		if !slices.Equal(names, tc.wantNames) {
			t.Errorf("%s: names %q, want %q", tc.name, names, tc.wantNames)
		}
	}
}

func TestReadTensorCSVErrors(t *testing.T) {
	const hdr = "instance,feature,timestep,value\n"
	full := hdr + "0,0,0,1\n0,0,1,2\n0,1,0,3\n0,1,1,4\n"
	for _, tc := range []struct {
		name  string
		text  string
		given []string
		want  string
	}{
		{"missing cell", hdr + "0,0,0,1\n0,0,1,2\n0,1,1,4\n", nil, "no value for instance 0, feature 1, timestep 0 (a 1×2×2 tensor needs 4 lines, found 3)"},
		{"missing instance", hdr + "0,0,0,1\n2,0,0,1\n1,0,0,5\n0,0,1,2\n1,0,1,4\n", nil, "no value for instance 2, feature 0, timestep 1"},
		{"duplicate cell", full + "0,1,0,3.5\n", nil, "lines 4 and 6 both give instance 0, feature 1, timestep 0"},
		{"duplicate named cell", hdr + "0,a,0,1\n0,a,0,2\n", nil, `lines 2 and 3 both give instance 0, feature "a", timestep 0`},
		{"non-numeric value", hdr + "0,0,0,1\n0,0,1,abc\n", nil, `line 3: value "abc" is not a number`},
		{"empty value", hdr + "0,0,0,\n", nil, "line 2: empty value"},
		{"NaN value", hdr + "0,0,0,NaN\n", nil, `line 2: value "NaN" is not finite`},
		{"Inf value", hdr + "0,0,0,1\n0,0,1,-inf\n", nil, `line 3: value "-inf" is not finite`},
		{"too few fields", hdr + "0,0,0\n", nil, "line 2: want 4 comma-separated fields"},
		{"too many fields", hdr + "0,0,0,1,2\n", nil, "line 2: want 4 comma-separated fields"},
		{"missing column", "instance,feature,time,value\n0,0,0,1\n", nil, `lacks the column "timestep"`},
		{"no header", "0,0,0,1\n", nil, `lacks the column "instance"`},
		{"empty file", "", nil, "file is empty"},
		{"header only", hdr, nil, "no data lines"},
		{"negative instance", hdr + "-1,0,0,1\n", nil, `line 2: instance "-1" is not a non-negative integer`},
		{"fractional timestep", hdr + "0,0,0.5,1\n", nil, `line 2: timestep "0.5" is not a non-negative integer`},
		{"huge index", hdr + "0,0,0,1\n9000000000,0,0,1\n", nil, "instance 9000000000 is too large"},
		{"huge shape", hdr + "0,0,0,1\n2000000,0,0,1\n0,0,2000,1\n", nil, "too large"},
		{"empty feature", hdr + "0,,0,1\n", nil, "line 2: empty feature"},
		{"unknown name", hdr + "0,hr,0,1\n0,rr,0,1\n", []string{"hr", "bp"}, `line 3: feature "rr" is neither one of the 2 feature names nor an index in 0..1`},
		{"index beyond names", hdr + "0,hr,0,1\n0,2,0,1\n", []string{"hr", "bp"}, `line 3: feature "2"`},
		{"name never given", hdr + "0,hr,0,1\n", []string{"hr", "bp"}, `no value for instance 0, feature "bp", timestep 0`},
		{"unterminated quote", hdr + "0,\"hr,0,1\n", nil, "line 2"},
		// Found by FuzzReadTensorCSV: names that no cell can match, or
		// that break the files and tables showing them.
		{"empty given names", hdr + "0,1,0,0\n0,0,0,0\n", []string{"", ""}, "given feature name 0: feature name is empty"},
		{"duplicate given names", hdr + "0,a,0,0\n", []string{"a", "a"}, `given feature names 0 and 1 are both "a"`},
		{"spaced given name", hdr + "0,0,0,0\n", []string{" a"}, `feature name " a" has surrounding white space`},
		{"line break in a name", hdr + "0,\"a\nb\",0,0\n", nil, `line 2: feature name "a\nb" contains a control character`},
	} {
		p := writeTemp(t, "x.csv", []byte(tc.text))
		_, _, err := ReadTensorCSV(p, tc.given)
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

func TestVectorCSV(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []float64
	}{
		{"plain", "0\n1\n1\n0\n", []float64{0, 1, 1, 0}},
		{"header, CRLF, spaces", "label\r\n 0.5 \r\n-2e3\r\n", []float64{0.5, -2000}},
		{"no final newline, trailing blank lines", "1\n2\n3\n\n\n", []float64{1, 2, 3}},
	} {
		v, err := ReadVectorCSV(writeTemp(t, "y.csv", []byte(tc.text)))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(v, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, v, tc.want)
		}
	}
	for _, tc := range []struct{ name, text, want string }{
		{"blank line inside", "1\n\n2\n", "line 2 is blank"},
		{"two fields", "id,label\n0,1\n", `line 1: "id,label" has several fields`},
		{"non-numeric", "label\n1\nyes\n", `line 3: value "yes" is not a number`},
		{"NaN", "1\nnan\n", `line 2: value "nan" is not finite`},
		{"empty", "", "no values"},
		{"header only", "label\n", "no values"},
	} {
		p := writeTemp(t, "y.csv", []byte(tc.text))
		_, err := ReadVectorCSV(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dataio: "+p+": ") {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
			continue
		}
		checkOnePrefix(t, err)
	}
	// Round trip.
	v := []float64{0.1, -3, 1e-310, 12345678.9}
	p := filepath.Join(t.TempDir(), "v.csv")
	if err := WriteVectorCSV(p, v); err != nil {
		t.Fatal(err)
	}
	got, err := ReadVectorCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "vector", got, v)
}

func TestReadFeatureNames(t *testing.T) {
	names, err := ReadFeatureNames(writeTemp(t, "names.txt", []byte("heart rate\r\n  spo2\nbp\n\n")))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"heart rate", "spo2", "bp"}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"duplicate", "a\nb\na\n", `lines 1 and 3 both name "a"`},
		{"blank inside", "a\n\nb\n", "line 2: blank feature name"},
		{"empty", "\n", "no feature names"},
		// Found by FuzzReadFeatureNames: old Mac line endings made one name.
		{"carriage returns", "a\rb\rc\n", `line 1: feature name "a\rb\rc" contains a control character`},
		{"tab inside", "a\tb\n", "control character"},
		{"byte-order mark", " \ufeff\n", "byte-order mark"}, // found by FuzzReadFeatureNames
	} {
		_, err := ReadFeatureNames(writeTemp(t, "names.txt", []byte(tc.text)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestReadFilesFormats reads complete datasets in every format of the
// reader table and checks the errors of files that do not fit together.
func TestReadFilesFormats(t *testing.T) {
	dir := t.TempDir()
	x := testTensor() // 3 × 2 × 4
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	must(WriteTensorNPY(path("x.npy"), x))
	must(WriteTensorCSV(path("x.csv"), x, nil))
	must(WriteTensorCSV(path("xnamed.csv"), x, []string{"a", "b"}))
	must(WriteVectorNPY(path("y.npy"), []float64{0, 1, 1}))
	must(os.WriteFile(path("y.csv"), []byte("label\n0\n1\n1\n"), 0o644))
	must(os.WriteFile(path("y2.csv"), []byte("0\n1\n"), 0o644))
	must(os.WriteFile(path("y3.csv"), []byte("0\n1\n2\n"), 0o644))
	must(os.WriteFile(path("names.txt"), []byte("a\nb\n"), 0o644))
	must(os.WriteFile(path("names3.txt"), []byte("a\nb\nc\n"), 0o644))
	must(os.WriteFile(path("names.json"), []byte(`["a", "b"]`), 0o644))
	must(os.WriteFile(path("names"), []byte("a\nb\n"), 0o644))

	for _, tc := range []struct {
		data, targets, names string
		wantNames            []string
	}{
		{"x.npy", "y.npy", "", nil},
		{"x.npy", "y.csv", "names.txt", []string{"a", "b"}},
		{"x.csv", "y.npy", "", nil},
		{"xnamed.csv", "y.csv", "", []string{"a", "b"}},
		{"x.csv", "y.csv", "names.txt", []string{"a", "b"}},
		{"x.npy", "y.npy", "names.json", []string{"a", "b"}},
		{"x.csv", "y.npy", "names.json", []string{"a", "b"}},
		{"x.npy", "y.npy", "names", []string{"a", "b"}}, // no extension: one name per line
	} {
		ds, _, err := ReadFiles(Files{Data: path(tc.data), Targets: path(tc.targets), Names: optPath(dir, tc.names), Task: tempora.Classification})
		if err != nil {
			t.Errorf("%s %s %s: %v", tc.data, tc.targets, tc.names, err)
			continue
		}
		sameBits(t, tc.data, ds.X.Data, x.Data)
		if !slices.Equal(ds.Y, []float64{0, 1, 1}) || !slices.Equal(ds.FeatureNames, tc.wantNames) || ds.Task != tempora.Classification {
			t.Errorf("%s %s %s: Y %v names %q task %v", tc.data, tc.targets, tc.names, ds.Y, ds.FeatureNames, ds.Task)
		}
	}
	for _, tc := range []struct {
		data, targets, names string
		task                 tempora.Task
		want                 string
	}{
		{"x.npy", "y2.csv", "", tempora.Regression, "y2.csv has 2 targets but " + path("x.npy") + " has 3 instances"},
		{"x.csv", "y2.csv", "", tempora.Regression, "has 2 targets"},
		{"x.npy", "y3.csv", "", tempora.Classification, "classification target of instance 2 is 2, want 0 or 1"},
		{"x.npy", "y.npy", "names3.txt", tempora.Regression, "names3.txt has 3 feature names but " + path("x.npy") + " has 2 features"},
		{"x.csv", "y.npy", "names3.txt", tempora.Regression, `feature "c"`},
		{"x.h5", "y.npy", "", tempora.Regression, `unknown data file extension ".h5" (want .csv, .npy or .txt)`},
		{"x.npy", "y.json", "", tempora.Regression, `unknown targets file extension ".json" (want .csv, .npy or .txt)`},
		{"x.npy", "y.npy", "y.npy", tempora.Regression, `unknown feature names file extension ".npy" (want .csv, .json or .txt)`},
		{"missing.npy", "y.npy", "", tempora.Regression, "missing.npy"},
	} {
		_, _, err := ReadFiles(Files{Data: path(tc.data), Targets: path(tc.targets), Names: optPath(dir, tc.names), Task: tc.task})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "dataio: ") {
			t.Errorf("%s %s %s: got %v, want %q", tc.data, tc.targets, tc.names, err, tc.want)
			continue
		}
		checkOnePrefix(t, err)
	}
}

func optPath(dir, name string) string {
	if name == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

func ExampleReadTensorCSV() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "x.csv")
	os.WriteFile(p, []byte(`instance,feature,timestep,value
0,heart_rate,0,72
0,heart_rate,1,75
0,spo2,0,98
0,spo2,1,97
1,heart_rate,0,64
1,heart_rate,1,66
1,spo2,0,99
1,spo2,1,99
`), 0o644)
	x, names, err := ReadTensorCSV(p, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d×%d×%d %q\n", x.M, x.D, x.L, names)
	fmt.Println(x.Series(1, 0))
	// Output:
	// 2×2×2 ["heart_rate" "spo2"]
	// [64 66]
}
