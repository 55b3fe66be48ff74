package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sample(model int, method string) *Record {
	return &Record{
		Format: Format, Suite: "testsize-regression",
		Params: []Param{{"instances", "400"}},
		Model:  model, Seed: 100000 + uint64(model), Method: method,
		Metrics:        []Metric{{"feature-power", 0.95}, {"feature-fdr", 0.04}},
		RuntimeSeconds: 0.61, ModelCalls: 3400, InstanceEvals: 3400000,
		Warnings: []string{},
	}
}

func TestBenchLine(t *testing.T) {
	r := sample(17, "TIME")
	want := "BenchmarkTestsizeRegression/instances=400/model=17/method=TIME 1 0.95 feature-power 0.04 feature-fdr 0.61 sec/op 3400 model-calls/op 3.4e+06 instance-evals/op"
	if got := r.BenchLine(); got != want {
		t.Errorf("BenchLine:\n got %s\nwant %s", got, want)
	}
	if got, want := r.Key(), "testsize-regression/instances=400/model=17/method=TIME"; got != want {
		t.Errorf("Key = %s, want %s", got, want)
	}
}

func TestWriteReadAll(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []*Record{sample(2, "TIME"), sample(1, "SAGE"), sample(1, "TIME")} {
		if err := Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	// A leftover temporary file of an interrupted write must be ignored.
	tmp := filepath.Join(dir, "testsize-regression", "instances=400", "model=3", ".method=X.json.tmp123")
	os.MkdirAll(filepath.Dir(tmp), 0o755)
	os.WriteFile(tmp, []byte("{trunc"), 0o644)
	recs, err := ReadAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Key())
	}
	want := "testsize-regression/instances=400/model=1/method=SAGE testsize-regression/instances=400/model=1/method=TIME testsize-regression/instances=400/model=2/method=TIME"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("keys = %s\nwant %s", got, want)
	}
	if v, ok := recs[0].Get("feature-fdr"); !ok || v != 0.04 {
		t.Errorf("Get(feature-fdr) = %v, %v", v, ok)
	}
	if !sample(2, "TIME").Exists(dir) || sample(4, "TIME").Exists(dir) {
		t.Error("Exists disagrees with the files written")
	}
}

func TestValidate(t *testing.T) {
	bad := []func(r *Record){
		func(r *Record) { r.Format = "x" },
		func(r *Record) { r.Method = "" },
		func(r *Record) { r.Method = "a/b" },
		func(r *Record) { r.Params[0].Value = "4 00" },
		func(r *Record) { r.Metrics[0].Name = "feature power" },
		func(r *Record) { r.Metrics[0].Value = 0 / zero },
		// Found by FuzzRead: a suite that is a directory name puts the
		// record's file outside its suite's directory, and control
		// characters or line separators split the benchmark line.
		func(r *Record) { r.Suite = ".." },
		func(r *Record) { r.Suite = "." },
		func(r *Record) { r.Suite = "a\rb" },
		func(r *Record) { r.Method = "TIME\x00" },
		func(r *Record) { r.Params[0].Key = "in\u2028stances" },
		func(r *Record) { r.Params[0].Value = "4\x8500" },
		func(r *Record) { r.Params[0].Value = `a\b` },
		func(r *Record) { r.Metrics[0].Name = "feature-power\v" },
	}
	for i, f := range bad {
		r := sample(1, "TIME")
		f(r)
		if r.Validate() == nil {
			t.Errorf("case %d: Validate accepted a bad record", i)
		}
	}
	// A corrupt record file is an error, not silently skipped.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.json"), []byte("{"), 0o644)
	if _, err := ReadAll(dir); err == nil {
		t.Error("ReadAll accepted a corrupt record")
	}
}

// TestReadErrors checks that Read's errors carry the prefix record: once
// and name the file (FuzzRead found "path: record: …").
func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "tempora-record/1", "suite": "..", "method": "TIME"}`), 0o644)
	trunc := filepath.Join(dir, "trunc.json")
	os.WriteFile(trunc, []byte(`{"format": "tempora-record/1", "suite": "s", "meth`), 0o644)
	expl := filepath.Join(dir, "expl.json")
	os.WriteFile(expl, []byte(`{"explanation": {"Cells": [[]]}}`), 0o644) // found by FuzzRead
	for _, tc := range []struct{ path, want string }{
		{expl, "record: " + expl + ": explanation has 1 cell rows for 0 features"},
		{bad, "record: " + bad + `: suite ".." names a directory, not a suite`},
		{trunc, "record: " + trunc + ": unexpected end of JSON input"},
		{filepath.Join(dir, "none.json"), "record: open " + filepath.Join(dir, "none.json") + ": no such file or directory"},
	} {
		_, err := Read(tc.path)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Read(%s) = %v, want %s", filepath.Base(tc.path), err, tc.want)
		}
	}
}

var zero float64
