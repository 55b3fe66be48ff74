package experiments

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestExport(t *testing.T) {
	run := Options{Suite: "table1", Models: 10, Methods: []string{"TIME", "TIME-n", "LIME"}, Workers: 2, Quick: true, Out: "/scratch/table1"}
	for _, kind := range []string{"condor", "slurm"} {
		var b bytes.Buffer
		if err := Export(&b, kind, ExportOptions{Run: run, Shards: 8, Binary: "/opt/tempora/tempora"}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "export."+kind)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./experiments -run TestExport -update to create it)", err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s output differs from %s:\n%s", kind, path, b.Bytes())
		}
	}
	for name, e := range map[string]ExportOptions{
		"no shards":     {Run: run},
		"no out":        {Run: Options{Suite: "table1"}, Shards: 2},
		"unknown suite": {Run: Options{Suite: "x", Out: "o"}, Shards: 2},
	} {
		if err := Export(&bytes.Buffer{}, "condor", e); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := Export(&bytes.Buffer{}, "pbs", ExportOptions{Run: run, Shards: 2}); err == nil {
		t.Error("unknown scheduler: no error")
	}
}
