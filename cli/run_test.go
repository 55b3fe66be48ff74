package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tinyRun is a sweep of real synthetic problems small enough for tests.
var tinyRun = []string{"run", "-suite", "grid", "-grid", "instances=60;features=3;timesteps=6;permutations=10",
	"-models", "2", "-methods", "TIME,TIME-n,PERM,PERM-f", "-workers", "1"}

var runtimeRE = regexp.MustCompile(`"runtime_seconds": [^,\n]*`)

// checksumRE matches a record's checksum, which covers its runtime.
var checksumRE = regexp.MustCompile(`"checksum": "[^"]*"`)

// recordFiles returns the record files below dir/records, runtime zeroed.
func recordFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	root := filepath.Join(dir, "records")
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[rel] = checksumRE.ReplaceAllString(runtimeRE.ReplaceAllString(string(b), ""), "")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestRunShardMerge(t *testing.T) {
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	out := mustRun(t, append(tinyRun, "-out", whole)...)
	if !strings.Contains(out, "bench.txt") {
		t.Errorf("run output %q does not name bench.txt", out)
	}
	want := recordFiles(t, whole)
	if len(want) != 2*4 {
		t.Fatalf("%d records, want 8", len(want))
	}
	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		d := filepath.Join(root, "shard-"+s[:1])
		mustRun(t, append(tinyRun, "-shard", s, "-out", d)...)
		shards = append(shards, d)
	}
	// One shard alone is incomplete.
	if _, _, err := runCmd(t, "merge", "-out", filepath.Join(root, "half"), shards[0]); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("merging one of two shards: error %v, want missing records", err)
	}
	merged := filepath.Join(root, "merged")
	mustRun(t, append([]string{"merge", "-out", merged}, shards...)...)
	got := recordFiles(t, merged)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("merged %s differs from the unsharded run", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("merged %d records, want %d", len(got), len(want))
	}
	if _, err := os.Stat(filepath.Join(merged, "bench.txt")); err != nil {
		t.Error(err)
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-out", t.TempDir()},
		{"run", "-suite", "table1"},
		{"run", "-suite", "nope", "-out", t.TempDir()},
		{"run", "-suite", "table1", "-shard", "2/2", "-out", t.TempDir()},
		{"run", "-suite", "table1", "-methods", "TIME,FOO", "-out", t.TempDir()},
		{"merge", "-out", t.TempDir()},
		{"merge", t.TempDir()},
		{"export", "-suite", "table1", "-shards", "2", "-out", "x"},
		{"export", "-suite", "table1", "-shards", "0", "-out", "x", "slurm"},
		{"export", "-suite", "table1", "-shards", "2", "slurm"},
		{"evaluate", "-problem", "testdata/evaluate/problem"},
		{"evaluate", "-problem", "testdata/evaluate/problem", "-scores", "testdata/evaluate/scores.csv", "-mode", "best"},
		{"run", "-suite", "table1", "-models", "-1", "-out", t.TempDir()},
		{"run", "-suite", "table1", "-workers", "-1", "-out", t.TempDir()},
		{"run", "-suite", "grid", "-grid", "gamma=2", "-out", t.TempDir()},
		{"run", "-suite", "grid", "-grid", "samples=100", "-methods", "TIME", "-out", t.TempDir()},
		{"run", "-suite", "table1", "-methods", "TIME,time", "-out", t.TempDir()},
		{"report"},
		{"report", "-in", "x", "extra"},
		{"describe"},
		{"synth"},
		{"serve"},
	} {
		// Every one is a usage error: exit status 2.
		if _, _, err := runCmd(t, args...); exitStatus(err) != 2 {
			t.Errorf("tempora %s: error %v, want a usage error", strings.Join(args, " "), err)
		}
	}
	// Failures (exit status 1): the command line is fine, the files are not.
	for _, args := range [][]string{
		{"report", "-in", t.TempDir()},
		{"merge", "-out", t.TempDir(), t.TempDir()},
		{"describe", t.TempDir()},
		{"evaluate", "-problem", t.TempDir(), "-scores", "testdata/evaluate/scores.csv"},
	} {
		if _, _, err := runCmd(t, args...); err == nil || exitStatus(err) != 1 {
			t.Errorf("tempora %s: error %v, want a failure", strings.Join(args, " "), err)
		}
	}
}

func TestRunList(t *testing.T) {
	out := mustRun(t, "run", "-list")
	for _, s := range []string{"table1", "table-s2", "testsize-regression", "testsize-classification", "grid"} {
		if !strings.Contains(out, s+" ") {
			t.Errorf("run -list lacks %s:\n%s", s, out)
		}
	}
}

func TestExportCmd(t *testing.T) {
	out := mustRun(t, "export", "-suite", "testsize-regression", "-quick", "-shards", "3", "-out", "/scratch/ts", "-binary", "/opt/tempora", "slurm")
	golden(t, "export.slurm", out)
	out = mustRun(t, "export", "-suite", "testsize-regression", "-quick", "-shards", "3", "-out", "/scratch/ts", "-binary", "/opt/tempora", "condor")
	golden(t, "export.condor", out)
}

func TestEvaluateCmd(t *testing.T) {
	out := mustRun(t, "evaluate", "-problem", "testdata/evaluate/problem", "-scores", "testdata/evaluate/scores.csv")
	golden(t, "evaluate-csv.stdout", out)
	out = mustRun(t, "evaluate", "-problem", "testdata/evaluate/problem", "-scores", "testdata/evaluate/explanation.json", "-mode", "all-non-zero", "-json")
	golden(t, "evaluate-json.stdout", out)
}
