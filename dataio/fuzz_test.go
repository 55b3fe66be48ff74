package dataio

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// Fuzz targets of the text readers. Seeds are in testdata/fuzz/<target>
// (files written by the writers, and the bad files of the unit tests) and
// below. Run one with
//
//	go test ./dataio/ -run '^$' -fuzz '^FuzzReadTensorCSV$' -fuzztime 1m

// allocatedBy returns the bytes allocated while f runs.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// checkOneLine fails if err's message spans lines.
func checkOneLine(t *testing.T, err error) {
	t.Helper()
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("error is not one line: %q", err)
	}
}

// splitNames turns the fuzzer's names string into a feature-name list: nil
// for "", otherwise its lines.
func splitNames(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// FuzzReadTensorCSV feeds the long-format reader an arbitrary file and an
// arbitrary list of feature names. Properties: no panic; one-line errors;
// memory bounded by the input's length, whatever the indices in it (the
// tensor is allocated only once every cell has been seen); on success a
// valid tensor with exactly one line per cell, which WriteTensorCSV writes
// and ReadTensorCSV reads back to the same values (bit for bit) and names.
func FuzzReadTensorCSV(f *testing.F) {
	const hdr = "instance,feature,timestep,value\n"
	f.Add(hdr+"0,0,0,1\n0,0,1,2.5\n0,1,0,-3\n0,1,1,4e-300\n", "")
	f.Add(hdr+"0,hr,0,72.5\n0,hr,1,73\n1,hr,0,70\n1,hr,1,71\n", "")
	f.Add("value,timestep,feature,instance\n1,0,b,0\n2,0,a,0\n", "a\nb")
	f.Add(hdr+"0,1,0,1\n0,0,0,2\n", "x\ny")
	f.Add(hdr+"0,\"a,b\",0,1\n", "")
	f.Add(hdr+"2147483647,0,2147483647,1\n", "")
	f.Add(hdr+"0,0,0,NaN\n", "")
	f.Add("\ufeffINSTANCE, Feature ,timestep,value\n0,0,0,1\n", "")
	f.Fuzz(func(t *testing.T, in string, namesText string) {
		given := splitNames(namesText)
		var (
			xt    *tempora.Tensor
			names []string
			err   error
		)
		// Each line of input gives at most one cell; a cell costs its
		// parsed form, its sort key and, once all are known, its value.
		n := allocatedBy(func() { xt, names, err = readTensorCSV(strings.NewReader(in), given, false) })
		if limit := uint64(1<<20 + 256*len(in) + 64*len(namesText)); n > limit {
			t.Fatalf("reading %d bytes allocated %d (limit %d)", len(in), n, limit)
		}
		if err != nil {
			checkOneLine(t, err)
			return
		}
		if verr := xt.Validate(); verr != nil {
			t.Fatalf("accepted an invalid tensor: %v", verr)
		}
		if lines := strings.Count(in, "\n"); xt.M*xt.D*xt.L > lines {
			t.Fatalf("%d×%d×%d tensor from %d lines", xt.M, xt.D, xt.L, lines)
		}
		if given != nil && !slices.Equal(names, given) {
			t.Fatalf("names %q, given %q", names, given)
		}
		var out bytes.Buffer
		if err := writeTensorCSV(&out, xt, names); err != nil {
			t.Fatal(err)
		}
		yt, names2, err := readTensorCSV(bytes.NewReader(out.Bytes()), names, false)
		if err != nil {
			t.Fatalf("reading back what WriteTensorCSV wrote: %v\n%s", err, out.Bytes())
		}
		if !slices.Equal(names2, names) || yt.M != xt.M || yt.D != xt.D || yt.L != xt.L {
			t.Fatalf("round trip: %d×%d×%d %q → %d×%d×%d %q", xt.M, xt.D, xt.L, names, yt.M, yt.D, yt.L, names2)
		}
		for k := range xt.Data {
			if math.Float64bits(xt.Data[k]) != math.Float64bits(yt.Data[k]) {
				t.Fatalf("round trip: value %d %v → %v", k, xt.Data[k], yt.Data[k])
			}
		}
	})
}

// FuzzReadVectorCSV feeds the vector reader an arbitrary file. Properties:
// no panic; one-line errors; on success finite values, one per line of
// input at most, which WriteVectorCSV writes and ReadVectorCSV reads back
// bit for bit.
func FuzzReadVectorCSV(f *testing.F) {
	for _, s := range []string{
		"0\n1\n1\n", "label\n0.5\n-2e-310\n", "\ufeffy\r\n1\r\n\r\n", "1\n\n2\n", "1,2\n", "nan\n", "0x1p-3\n-0\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := readVectorCSV(bytes.NewReader(in))
		if err != nil {
			checkOneLine(t, err)
			return
		}
		if len(v) == 0 || len(v) > bytes.Count(in, []byte{'\n'})+1 {
			t.Fatalf("%d values from %d bytes", len(v), len(in))
		}
		if err := checkVector(v); err != nil {
			t.Fatalf("accepted %v", err)
		}
		var out bytes.Buffer
		if err := writeVectorCSV(&out, v); err != nil {
			t.Fatal(err)
		}
		w, err := readVectorCSV(&out)
		if err != nil || len(w) != len(v) {
			t.Fatalf("round trip of %v: %v, %v", v, w, err)
		}
		for k := range v {
			if math.Float64bits(v[k]) != math.Float64bits(w[k]) {
				t.Fatalf("round trip: value %d %v → %v", k, v[k], w[k])
			}
		}
	})
}

// FuzzReadFeatureNames feeds the feature-name reader an arbitrary file.
// Properties: no panic; one-line errors; on success distinct, non-empty,
// trimmed names without line breaks, which read back unchanged when written
// one per line.
func FuzzReadFeatureNames(f *testing.F) {
	for _, s := range []string{
		"heart_rate\nbp\nspo2\n", "\ufeffa\r\n b \r\n\r\n", "a\n\nb\n", "a\na\n", "", "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		names, err := readFeatureNames(bytes.NewReader(in))
		if err != nil {
			checkOneLine(t, err)
			return
		}
		seen := map[string]bool{}
		for _, s := range names {
			if s == "" || s != strings.TrimSpace(s) || strings.ContainsAny(s, "\n\r") || seen[s] {
				t.Fatalf("accepted name %q in %q", s, names)
			}
			seen[s] = true
		}
		again, err := readFeatureNames(strings.NewReader(strings.Join(names, "\n") + "\n"))
		if err != nil || !slices.Equal(again, names) {
			t.Fatalf("round trip of %q: %q, %v", names, again, err)
		}
	})
}

// FuzzReadDataCSV feeds the long-format reader for data with missing
// values an arbitrary file. Properties: no panic; one-line errors; memory
// bounded by the input's length (at most maxCellsPerLine cells per line);
// on success no infinite value, every instance and feature given by a
// line, and a tensor that WriteTensorCSV writes and ReadDataCSV reads back
// to the same values (NaN for NaN).
func FuzzReadDataCSV(f *testing.F) {
	const hdr = "instance,feature,timestep,value\n"
	f.Add(hdr+"0,0,0,1\n0,0,1,\n0,1,0,NA\n1,1,1,4e-300\n", "")
	f.Add(hdr+"0,hr,0,72.5\n0,hr,3,nan\n1,hr,0,70\n", "hr\nbp")
	f.Add(hdr+"0,0,0,inf\n", "")
	f.Add(hdr+"0,0,70,1\n", "")
	f.Add(hdr+"2147483647,0,2147483647,1\n", "")
	f.Fuzz(func(t *testing.T, in string, namesText string) {
		given := splitNames(namesText)
		var (
			xt    *tempora.Tensor
			names []string
			err   error
		)
		n := allocatedBy(func() { xt, names, err = readTensorCSV(strings.NewReader(in), given, true) })
		if limit := uint64(1<<20 + 8*maxCellsPerLine*len(in) + 64*len(namesText)); n > limit {
			t.Fatalf("reading %d bytes allocated %d (limit %d)", len(in), n, limit)
		}
		if err != nil {
			checkOneLine(t, err)
			return
		}
		if lines := strings.Count(in, "\n") + 1; xt.M*xt.D*xt.L > maxCellsPerLine*lines {
			t.Fatalf("%d×%d×%d tensor from %d lines", xt.M, xt.D, xt.L, lines)
		}
		for k, v := range xt.Data {
			if math.IsInf(v, 0) {
				t.Fatalf("accepted %v at %d", v, k)
			}
		}
		var out bytes.Buffer
		if err := writeTensorCSV(&out, xt, names); err != nil {
			t.Fatal(err)
		}
		yt, names2, err := readTensorCSV(bytes.NewReader(out.Bytes()), names, true)
		if err != nil {
			// Written back, an instance whose lines were all missing
			// values is still an instance with lines; the reader never
			// refuses what the writer wrote.
			t.Fatalf("reading back what WriteTensorCSV wrote: %v\n%s", err, out.Bytes())
		}
		if !slices.Equal(names2, names) || yt.M != xt.M || yt.D != xt.D || yt.L != xt.L {
			t.Fatalf("round trip: %d×%d×%d %q → %d×%d×%d %q", xt.M, xt.D, xt.L, names, yt.M, yt.D, yt.L, names2)
		}
		for k := range xt.Data {
			a, b := xt.Data[k], yt.Data[k]
			if math.IsNaN(a) != math.IsNaN(b) || !math.IsNaN(a) && math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("round trip: value %d %v → %v", k, a, b)
			}
		}
	})
}

// FuzzReadFeatureNamesJSON feeds the JSON feature-name reader an arbitrary
// file. Properties: no panic; one-line errors, each a *tempora.DataError
// of KindFeatureNames whose position, when it has one, is a name of the
// array; on success distinct names that checkName accepts, which read back
// unchanged from their JSON.
func FuzzReadFeatureNamesJSON(f *testing.F) {
	for _, s := range []string{
		`["hr", "bp"]`, `["a", "a"]`, `[" a"]`, `["a\nb"]`, `["\ufeffa"]`, `[]`, `{}`, `["a", 1]`, `[""]`, `null`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		names, err := featureNamesJSON(in)
		if err != nil {
			checkOneLine(t, err)
			var de *tempora.DataError
			if !errors.As(err, &de) || de.Kind != tempora.KindFeatureNames {
				t.Fatalf("error %v is not a feature-names DataError (%+v)", err, de)
			}
			var all []string
			if de.Feature >= 0 && (json.Unmarshal(in, &all) != nil || de.Feature >= len(all)) {
				t.Fatalf("error %v locates name %d of %q", err, de.Feature, all)
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range names {
			if checkName(s) != nil || seen[s] {
				t.Fatalf("accepted name %q in %q", s, names)
			}
			seen[s] = true
		}
		b, err := json.Marshal(names)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := featureNamesJSON(b); err != nil || !slices.Equal(again, names) {
			t.Fatalf("round trip of %q: %q, %v", names, again, err)
		}
	})
}
