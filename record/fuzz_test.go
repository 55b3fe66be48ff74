package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/tempora-dev/tempora/internal/errmsg"
)

// memTempDir returns a temporary directory removed at the end of the test,
// in memory (/dev/shm) where possible: Write syncs the file it writes, which
// on a busy disk costs more than the rest of a fuzz call.
func memTempDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "tempora-fuzz-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// FuzzRead feeds Read an arbitrary record file. Seeds are in
// testdata/fuzz/FuzzRead (records written by a real run) and below.
// Properties: no panic; a one-line error with the "record: " prefix once;
// on success a record that passes Validate, whose Path stays strictly
// inside the records directory, whose benchmark line is one line, and which
// Write followed by Read gives back with the same JSON.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"format": "tempora-record/1", "suite": "s", "params": [{"key": "k", "value": "v"}], "model": 1, "method": "TIME", "metrics": [{"name": "feature-power", "value": 0.5}]}`))
	f.Add([]byte(`{"format": "tempora-record/1", "suite": "..", "method": "m"}`))
	f.Add([]byte(`{"format": "tempora-record/1", "suite": "a\rb", "method": "m"}`))
	f.Add([]byte(`{"format": "tempora-record/2", "suite": "s", "method": "m"}`))
	f.Add([]byte(`{"format": "tempora-record/1", "suite": "s", "method": "m", "metrics": [{"name": "x y", "value": 1}]}`))
	f.Add([]byte(`[]`))
	// A sealed version 2 record, so that the fuzzer starts from a valid
	// checksum.
	sealed := &Record{Format: Format, Suite: "s", Params: []Param{{"k", "v"}}, Model: 1, Method: "TIME",
		Metrics: []Metric{{"feature-power", 0.5}}, Warnings: []string{}}
	if b, err := seal(sealed); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		dir := memTempDir(t)
		file := filepath.Join(dir, "in.json")
		if err := os.WriteFile(file, in, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Read(file)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line: %q", msg)
			}
			if rest, ok := strings.CutPrefix(msg, "record: "); !ok || errmsg.Trim(rest) != rest {
				t.Fatalf("error %q does not carry exactly one prefix, record's", msg)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("Read returned an invalid record: %v", err)
		}
		records := filepath.Join(dir, "records")
		rel, err := filepath.Rel(records, r.Path(records))
		// rel leaves records only through a ".." element: a name such
		// as "..}" is an ordinary directory inside it.
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			t.Fatalf("record %q has path %s, outside %s", r.Key(), r.Path(records), records)
		}
		if line := r.BenchLine(); strings.ContainsAny(line, "\n\r\v\f\u0085\u2028\u2029") || strings.ContainsFunc(r.Key(), func(c rune) bool { return unicode.IsControl(c) || unicode.IsSpace(c) }) {
			t.Fatalf("benchmark line %q is not one clean line", line)
		}
		if err := Write(records, r); err != nil {
			t.Fatalf("Write of a record Read accepted: %v", err)
		}
		r2, err := Read(r.Path(records))
		if err != nil {
			t.Fatalf("reading back a written record: %v", err)
		}
		b1, err1 := json.Marshal(r)
		b2, err2 := json.Marshal(r2)
		if err1 != nil || err2 != nil || string(b1) != string(b2) {
			t.Fatalf("round trip:\n%s\n%s (%v, %v)", b1, b2, err1, err2)
		}
	})
}
