package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewMethodExample builds examples/newmethod, a module of its own whose
// main is cli.Main(occlusion), and uses it as a researcher would: a sharded
// run of TIME and occlusion, merge, report (occlusion gets a row beside
// TIME), explain with the new method, and export (the jobs run this very
// binary). It needs the go command; the build takes a few seconds.
func TestNewMethodExample(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "new method", "newmethod") // a space to quote
	build := exec.Command(gobin, "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", "examples", "newmethod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in examples/newmethod: %v\n%s", err, out)
	}
	nm := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("newmethod %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return string(out)
	}
	suite := []string{"-suite", "grid", "-grid", "instances=60;features=3;timesteps=6", "-models", "2", "-methods", "time,OCCLUSION"}
	for _, s := range []string{"0", "1"} {
		nm(append(append([]string{"run"}, suite...), "-shard", s+"/2", "-out", "s"+s)...)
	}
	nm("merge", "-out", "merged", "s0", "s1")
	nm("report", "-in", "merged")
	table, err := os.ReadFile(filepath.Join(dir, "merged", "report", "tables", "suite-grid.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(table), "| TIME |") || !strings.Contains(string(table), "| occlusion |") {
		t.Errorf("report lacks a TIME or occlusion row:\n%s", table)
	}
	// The help and the explain command know the method.
	if help := nm("explain", "-h"); !strings.Contains(help, "occlusion  mean occlusion") {
		t.Errorf("explain -h does not list occlusion:\n%s", help)
	}
	nm("synth", "-out", "p", "-instances", "50", "-features", "3", "-timesteps", "4", "-seed", "1")
	if out := nm("explain", "-problem", "p", "-method", "Occlusion"); !strings.HasPrefix(out, "occlusion: 50 instances") {
		t.Errorf("explain -method Occlusion:\n%s", out)
	}
	// Exported jobs run this binary, quoted for the shell.
	script := nm(append(append([]string{"export"}, suite...), "-shards", "2", "-out", "jobs", "slurm")...)
	if want := "exec '" + bin + "' run -suite grid"; !strings.Contains(script, want) || !strings.Contains(script, "-methods TIME,occlusion") {
		t.Errorf("slurm script does not run %q with the methods:\n%s", want, script)
	}
}
