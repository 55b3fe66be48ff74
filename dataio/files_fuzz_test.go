package dataio

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Fuzz targets of the file readers: each writes the fuzzer's input into a
// file and reads it through the path the command line uses (readFile:
// safefile's regular-file, size and line limits), which must agree with
// the reader of the same bytes in memory, and name the file in its errors.

// writeFuzzFile writes in into dir/name and returns its path.
func writeFuzzFile(t *testing.T, dir, name string, in []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkFileError checks that err, of the file reader of path, is the
// in-memory reader's error want about the same file: "dataio: PATH: " and
// want's message, on one line.
func checkFileError(t *testing.T, path string, err, want error) {
	t.Helper()
	if (err == nil) != (want == nil) {
		t.Fatalf("file reader: %v; in memory: %v", err, want)
	}
	if err == nil {
		return
	}
	checkOneLine(t, err)
	if got, w := err.Error(), "dataio: "+path+": "+want.Error(); got != w {
		t.Fatalf("file reader: %q, want %q", got, w)
	}
}

// FuzzReadFeatureNamesFile feeds ReadFeatureNames (-feature-names) an
// arbitrary file. Seeds: FuzzReadFeatureNames's (testdata/fuzz/
// FuzzReadFeatureNamesFile) and below. Properties: no panic; the same
// names as readFeatureNames reads from the same bytes, or its error
// prefixed by the file's path, on one line.
func FuzzReadFeatureNamesFile(f *testing.F) {
	for _, s := range []string{
		"heart_rate\nbp\nspo2\n", "\ufeffa\r\n b \r\n\r\n", "a\n\nb\n", "a\na\n", "", "\n\n", "a\x00\nb", "a\rb\r",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := writeFuzzFile(t, dir, "names.txt", in)
		names, err := ReadFeatureNames(path)
		want, wantErr := readFeatureNames(bytes.NewReader(in))
		checkFileError(t, path, err, wantErr)
		if !slices.Equal(names, want) {
			t.Fatalf("file reader read %q, in memory %q", names, want)
		}
	})
}

// FuzzReadDataCSVFile feeds ReadDataCSV (-data x.csv, the long format with
// missing values) an arbitrary file and feature names. Seeds:
// FuzzReadDataCSV's (testdata/fuzz/FuzzReadDataCSVFile) and below.
// Properties: no panic; the same tensor (NaN for NaN, bit for bit
// otherwise) and names as readTensorCSV reads from the same bytes, or its
// error prefixed by the file's path, on one line.
func FuzzReadDataCSVFile(f *testing.F) {
	const hdr = "instance,feature,timestep,value\n"
	f.Add(hdr+"0,0,0,1\n0,0,1,\n0,1,0,NA\n1,1,1,4e-300\n", "")
	f.Add(hdr+"0,hr,0,72.5\n0,hr,3,nan\n1,hr,0,70\n", "hr\nbp")
	f.Add("\ufeff"+hdr+"0,0,0,1\r\n", "")
	f.Add(hdr+"0,\"a\nb\",0,1\n", "")
	f.Add(hdr+"0,0,0,inf\n", "")
	f.Add("", "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in string, namesText string) {
		given := splitNames(namesText)
		path := writeFuzzFile(t, dir, "x.csv", []byte(in))
		x, names, err := ReadDataCSV(path, given)
		want, wantNames, wantErr := readTensorCSV(strings.NewReader(in), given, true)
		checkFileError(t, path, err, wantErr)
		if err != nil {
			return
		}
		if !slices.Equal(names, wantNames) || x.M != want.M || x.D != want.D || x.L != want.L {
			t.Fatalf("file reader: %d×%d×%d %q; in memory: %d×%d×%d %q", x.M, x.D, x.L, names, want.M, want.D, want.L, wantNames)
		}
		for k := range x.Data {
			a, b := x.Data[k], want.Data[k]
			if math.IsNaN(a) != math.IsNaN(b) || !math.IsNaN(a) && math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("value %d: file reader %v, in memory %v", k, a, b)
			}
		}
	})
}
