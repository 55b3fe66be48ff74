package dataio

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/npy"
)

// writeNPY writes v with shape into a temporary file named name.
func writeNPY(t *testing.T, name string, shape []int, v []float64) string {
	t.Helper()
	var b bytes.Buffer
	if err := npy.Write(&b, shape, v); err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, name, b.Bytes())
}

// TestReadOutputTargets reads the same 3 × 2 targets, one missing, from
// every layout: .npy (M, K), wide CSV with and without a header, long CSV
// with indices and with names, in any column order.
func TestReadOutputTargets(t *testing.T) {
	want := []float64{1, 2, 3, nan, -5, 6.5}
	names := []string{"h+1", "h+2"}
	for _, tc := range []struct {
		name      string
		path      string
		given     []string
		wantNames []string
	}{
		{"npy", writeNPY(t, "y.npy", []int{3, 2}, want), nil, nil},
		{"npy, names given", writeNPY(t, "y.npy", []int{3, 2}, want), names, names},
		{"wide", writeTemp(t, "y.csv", []byte("1,2\n3,\n-5,6.5\n")), nil, nil},
		{"wide NA", writeTemp(t, "y.txt", []byte("1,2\n3,NA\n-5,6.5\n")), nil, nil},
		{"wide header", writeTemp(t, "y.csv", []byte("\ufeffh+1, h+2\n1,2\n3,nan\n-5,6.5\n")), nil, names},
		{"wide header, names given", writeTemp(t, "y.csv", []byte("h+1,h+2\n1,2\n3,NaN\n-5,6.5\n")), names, names},
		{"long", writeTemp(t, "y.csv", []byte("instance,output,value\n0,0,1\n0,1,2\n1,0,3\n2,0,-5\n2,1,6.5\n")), nil, nil},
		{"long, missing value", writeTemp(t, "y.csv", []byte("Value,Instance,Output\n2,0,1\n1,0,0\n,1,1\n3,1,0\n-5,2,0\n6.5,2,1\n")), nil, nil},
		{"long names", writeTemp(t, "y.csv", []byte("instance,output,value\n0,h+1,1\n0,h+2,2\n1,h+1,3\n2,h+1,-5\n2,h+2,6.5\n")), nil, names},
		{"long names given", writeTemp(t, "y.csv", []byte("instance,output,value\n0,h+2,2\n0,0,1\n1,h+1,3\n2,h+1,-5\n2,h+2,6.5\n")), names, names},
	} {
		y, k, got, err := ReadOutputTargets(tc.path, tc.given)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if k != 2 || !slices.Equal(got, tc.wantNames) {
			t.Errorf("%s: K = %d, names %q, want 2, %q", tc.name, k, got, tc.wantNames)
		}
		sameValues(t, tc.name, y, want)
	}
	// K = 1: a vector.
	y, k, _, err := ReadOutputTargets(writeNPY(t, "y.npy", []int{3}, []float64{1, nan, 2}), nil)
	if err != nil || k != 1 {
		t.Fatalf("vector: K = %d, %v", k, err)
	}
	sameValues(t, "vector", y, []float64{1, nan, 2})
}

// TestReadOutputTargetsErrors checks the refusals of each layout, each
// naming the file and, in a CSV file, the line.
func TestReadOutputTargetsErrors(t *testing.T) {
	long := "instance,output,value\n"
	for _, tc := range []struct {
		name, file, text string
		given            []string
		want             string
	}{
		{"infinite npy", "y.npy", "", nil, "target of instance 1, output 0 is +Inf (a missing target is NaN; infinities are errors)"},
		{"rank 3", "y3.npy", "", nil, "must have shape instances × outputs, got shape [2 1 1]"},
		{"empty", "y.csv", "", nil, "file is empty"},
		{"wide ragged", "y.csv", "1,2\n3\n", nil, "line 2 has 1 values, line 1 2 (one per output)"},
		{"wide infinite", "y.csv", "1,2\n3,inf\n", nil, `line 2: value "inf" is infinite (a missing value is empty, NA or NaN)`},
		{"wide not a number", "y.csv", "a,b\n1,x\n", nil, `line 2: value "x" is not a number`},
		{"wide header only", "y.csv", "a,b\n", nil, "no targets after the header"},
		{"wide header repeats", "y.csv", "a,a\n1,2\n", nil, `columns 1 and 2 both name "a"`},
		{"wide header disagrees", "y.csv", "a,b\n1,2\n", []string{"b", "a"}, `the header names the outputs ["a" "b"], the output names given are ["b" "a"]`},
		{"wide names count", "y.csv", "1,2\n", []string{"a", "b", "c"}, "2 values per line (one per output) but 3 output names"},
		{"long twice", "y.csv", long + "0,0,1\n1,1,2\n0,0,3\n", nil, "lines 2 and 4 both give instance 0, output 0"},
		{"long bad instance", "y.csv", long + "-1,0,1\n", nil, `line 2: instance "-1" is not a non-negative integer`},
		{"long unknown name", "y.csv", long + "0,c,1\n", []string{"a", "b"}, `line 2: output "c" is neither one of the 2 output names nor an index in 0..1`},
		{"long fields", "y.csv", long + "0,0\n", nil, "line 2: want 3 comma-separated fields (instance,output,value)"},
		{"long sparse", "y.csv", long + "0,0,1\n100000,1000,2\n", nil, "largest indices imply 100001 instances × 1001 outputs but the file has only 2 lines"},
		{"long empty output", "y.csv", long + "0, ,1\n", nil, "line 2: empty output"},
		{"long output name", "y.csv", long + "0,a\u0007,1\n", nil, "output name"},
		{"json", "y.json", "[1]", nil, "unknown targets file extension \".json\" (want .csv, .npy or .txt)"},
	} {
		var path string
		switch tc.file {
		case "y.npy":
			path = writeNPY(t, tc.file, []int{2, 1}, []float64{0, math.Inf(1)})
		case "y3.npy":
			path = writeNPY(t, tc.file, []int{2, 1, 1}, []float64{0, 1})
		default:
			path = writeTemp(t, tc.file, []byte(tc.text))
		}
		_, _, _, err := ReadOutputTargets(path, tc.given)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want %q naming the file", tc.name, err, tc.want)
		}
		if err != nil {
			checkOneLine(t, err)
		}
	}
}

// TestReadFilesOutputs reads datasets with outputs: horizons whose K comes
// from the targets or is given (and must agree), names from a file or the
// targets' header, anchors kept; classes, whose K is given; and the
// refusals of what the dataset's validation checks.
func TestReadFilesOutputs(t *testing.T) {
	x := tempora.NewTensor(3, 2, 4)
	for k := range x.Data {
		x.Data[k] = float64(k % 7)
	}
	xPath := writeTemp(t, "x.npy", nil)
	if err := WriteTensorNPY(xPath, x); err != nil {
		t.Fatal(err)
	}
	y := []float64{1, 2, 3, nan, -5, 6.5}
	yPath := writeNPY(t, "y.npy", []int{3, 2}, y)
	namesPath := writeTemp(t, "outputs.txt", []byte("a\nb\n"))
	jsonNames := writeTemp(t, "outputs.json", []byte(`["a", "b"]`))

	ds, _, err := ReadFiles(Files{Data: xPath, Targets: yPath, Task: tempora.Regression, Outputs: &tempora.Outputs{Kind: tempora.Horizons}})
	if err != nil {
		t.Fatal(err)
	}
	if o := ds.Outputs; o == nil || o.Kind != tempora.Horizons || o.K != 2 || o.Names != nil || ds.K() != 2 {
		t.Fatalf("outputs %+v", ds.Outputs)
	}
	sameValues(t, "targets", ds.Y, y)
	given := &tempora.Outputs{Kind: tempora.Steps, K: 2, Anchors: []int{1, 3}}
	for _, names := range []string{namesPath, jsonNames} {
		ds, _, err = ReadFiles(Files{Data: xPath, Targets: yPath, Task: tempora.Regression, Outputs: given, OutputNames: names})
		if err != nil {
			t.Fatal(err)
		}
		if o := ds.Outputs; o == given || o.K != 2 || !slices.Equal(o.Names, []string{"a", "b"}) || !slices.Equal(o.Anchors, []int{1, 3}) {
			t.Fatalf("outputs %+v", o)
		}
	}
	wide := writeTemp(t, "y.csv", []byte("p,q\n1,2\n3,\n-5,6.5\n"))
	ds, _, err = ReadFiles(Files{Data: xPath, Targets: wide, Task: tempora.Regression, Outputs: &tempora.Outputs{Kind: tempora.Horizons}})
	if err != nil || !slices.Equal(ds.Outputs.Names, []string{"p", "q"}) {
		t.Fatalf("names of the header: %v, %v", ds, err)
	}

	labels := writeNPY(t, "labels.npy", []int{3}, []float64{0, 2, 1})
	names3 := writeTemp(t, "classes.txt", []byte("cat\ndog\nbird\n"))
	ds, _, err = ReadFiles(Files{Data: xPath, Targets: labels, Task: tempora.Classification, Outputs: &tempora.Outputs{Kind: tempora.Classes, K: 3}, OutputNames: names3})
	if err != nil {
		t.Fatal(err)
	}
	if o := ds.Outputs; o.K != 3 || !slices.Equal(o.Names, []string{"cat", "dog", "bird"}) || !slices.Equal(ds.Y, []float64{0, 2, 1}) {
		t.Fatalf("classes %+v, %v", o, ds.Y)
	}
	csvLabels := writeTemp(t, "labels.csv", []byte("label\n0\n2\n1\n"))
	if ds, _, err = ReadFiles(Files{Data: xPath, Targets: csvLabels, Task: tempora.Classification, Outputs: &tempora.Outputs{Kind: tempora.Classes, K: 3}}); err != nil || ds.K() != 3 {
		t.Fatalf("labels from CSV: %v", err)
	}

	for _, tc := range []struct {
		name string
		f    Files
		want string
	}{
		{"K disagrees", Files{Targets: yPath, Task: tempora.Regression, Outputs: &tempora.Outputs{Kind: tempora.Horizons, K: 3}},
			"has 2 targets per instance, for 3 horizons outputs"},
		{"instances", Files{Targets: writeNPY(t, "y2.npy", []int{2, 2}, y[:4]), Task: tempora.Regression, Outputs: &tempora.Outputs{Kind: tempora.Horizons}},
			"has targets of 2 instances but"},
		{"names count", Files{Targets: yPath, Task: tempora.Regression, Outputs: &tempora.Outputs{Kind: tempora.Horizons}, OutputNames: names3},
			"3 output names for 2 outputs"},
		{"bad names file", Files{Targets: yPath, Task: tempora.Regression, Outputs: &tempora.Outputs{Kind: tempora.Horizons}, OutputNames: writeTemp(t, "n.txt", []byte("a\na\n"))},
			`lines 1 and 2 both name "a"`},
		{"classification targets", Files{Targets: yPath, Task: tempora.Classification, Outputs: &tempora.Outputs{Kind: tempora.Horizons}},
			"classification target of instance 0, output 1 is 2, want 0 or 1"},
		{"an instance without target", Files{Targets: writeNPY(t, "y4.npy", []int{3, 2}, []float64{1, 2, nan, nan, 3, 4}), Task: tempora.Regression, Outputs: &tempora.Outputs{Kind: tempora.Steps}},
			"instance 1 has no target (every output NaN)"},
		{"class label", Files{Targets: writeNPY(t, "l.npy", []int{3}, []float64{0, 3, 1}), Task: tempora.Classification, Outputs: &tempora.Outputs{Kind: tempora.Classes, K: 3}},
			"class label of instance 1 is 3, want an integer in [0, 2]"},
		{"classes without K", Files{Targets: labels, Task: tempora.Classification, Outputs: &tempora.Outputs{Kind: tempora.Classes}},
			"0 classes"},
		{"anchors", Files{Targets: yPath, Task: tempora.Regression, Outputs: &tempora.Outputs{Kind: tempora.Steps, Anchors: []int{1, 2, 3}}},
			"3 output anchors for 2 outputs"},
	} {
		tc.f.Data = xPath
		_, _, err := ReadFiles(tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Without outputs, targets of two columns are refused as before.
	_, _, err = ReadFiles(Files{Data: xPath, Targets: yPath, Task: tempora.Regression})
	var de *tempora.DataError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "want a one-dimensional array, got shape [3 2]") {
		t.Errorf("two columns of targets without outputs: %v", err)
	}
}

// TestReadOutputNames checks that output names are read under the rules
// of feature names, with messages about outputs.
func TestReadOutputNames(t *testing.T) {
	for _, tc := range []struct{ file, text, want string }{
		{"n.txt", "a\n\nb\n", "line 2: blank output name"},
		{"n.json", `["a", " b"]`, `name 1: output name " b" has surrounding white space`},
		{"n.json", `[]`, "no output names"},
	} {
		_, err := ReadOutputNames(writeTemp(t, tc.file, []byte(tc.text)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
		var de *tempora.DataError
		if errors.As(err, &de) {
			t.Errorf("%q: output names error is a DataError of kind %v", tc.text, de.Kind)
		}
	}
	names, err := ReadOutputNames(writeTemp(t, "names", []byte("h+1\nh+2\n")))
	if err != nil || !slices.Equal(names, []string{"h+1", "h+2"}) {
		t.Errorf("names %q, %v", names, err)
	}
}

// FuzzReadOutputTargetsCSV feeds the CSV reader of targets of several
// outputs arbitrary text and names. Properties: no panic; one-line errors;
// memory bounded by the input; on success, M·K targets with no infinity,
// K at least 1, and names (if any) K distinct valid names.
func FuzzReadOutputTargetsCSV(f *testing.F) {
	f.Add("1,2\n3,\n-5,6.5\n", "")
	f.Add("h+1,h+2\n1,2\n3,NA\n", "h+1\nh+2")
	f.Add("instance,output,value\n0,0,1\n0,1,2\n1,0,3\n", "")
	f.Add("Value,Instance,Output\n2,0,b\n1,0,a\n", "a\nb")
	f.Add("instance,output,value\n2147483647,0,1\n", "")
	f.Add("\ufeffa\n1\n", "")
	f.Fuzz(func(t *testing.T, in, namesText string) {
		given := splitNames(namesText)
		var (
			y     []float64
			k     int
			names []string
			err   error
		)
		n := allocatedBy(func() { y, k, names, err = readOutputTargetsFrom(strings.NewReader(in), given) })
		if limit := uint64(1<<20 + 64*maxCellsPerLine*len(in) + 64*len(namesText)); n > limit {
			t.Fatalf("reading %d bytes allocated %d (limit %d)", len(in), n, limit)
		}
		if err != nil {
			checkOneLine(t, err)
			return
		}
		if k < 1 || len(y) == 0 || len(y)%k != 0 {
			t.Fatalf("%d targets, K = %d", len(y), k)
		}
		for _, v := range y {
			if math.IsInf(v, 0) {
				t.Fatalf("accepted %v", v)
			}
		}
		if names != nil {
			if len(names) != k {
				t.Fatalf("%d names for K = %d", len(names), k)
			}
			seen := map[string]bool{}
			for _, s := range names {
				if checkNameOf(s, "output") != nil || seen[s] {
					t.Fatalf("accepted names %q", names)
				}
				seen[s] = true
			}
		}
	})
}
