//go:build unix

package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/internal/examplemodel"
)

// buildTempora builds cmd/tempora into a temporary directory and returns
// its path: signal handling lives in Main, which only a real process runs.
func buildTempora(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build cmd/tempora")
	}
	bin := filepath.Join(t.TempDir(), "tempora")
	if out, err := exec.Command(goTool, "build", "-o", bin, "../cmd/tempora").CombinedOutput(); err != nil {
		t.Fatalf("building cmd/tempora: %v\n%s", err, out)
	}
	return bin
}

// waitFor polls cond every 10 ms until it holds or limit passes.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// finish waits for cmd (killing it after limit) and returns its exit status.
func finish(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode() // -1 if a signal killed it
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("tempora still running %v after SIGTERM", limit)
		return 0
	}
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// recordContents returns every file below dir/records by relative path.
func recordContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	root := filepath.Join(dir, "records")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[rel] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return files
}

// TestSIGTERMRun stops a run with SIGTERM, as a scheduler does, after its
// first record: tempora must say so in one line, exit with status 143, keep
// the finished records, leave no temporary file, and a rerun must resume
// with the remaining items only.
func TestSIGTERMRun(t *testing.T) {
	bin := buildTempora(t)
	out := filepath.Join(t.TempDir(), "run out")
	// 10 models × 2 methods of about 0.1 s each: the signal arrives with
	// most items still to run.
	args := []string{"run", "-suite", "grid", "-grid", "instances=200;features=4;timesteps=8;permutations=100",
		"-models", "10", "-methods", "TIME,PERM", "-workers", "1", "-out", out}
	const items = 20 // one record each

	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "record", func() bool { return len(recordContents(t, out)) > 0 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	status := finish(t, cmd, 30*time.Second)
	if status != 143 {
		t.Errorf("exit status %d after SIGTERM, want 143\nstderr:\n%s", status, stderr.String())
	}
	const msg = "tempora: run: interrupted by SIGTERM; finished records are kept, rerun the same command to resume"
	if got := lastLine(stderr.String()); got != msg {
		t.Errorf("last line on stderr %q, want %q", got, msg)
	}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp") {
			t.Errorf("in-flight file left behind: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	kept := recordContents(t, out)
	if len(kept) == 0 || len(kept) >= items {
		t.Fatalf("%d records after SIGTERM, want some but not all %d (the run was too fast to interrupt?)", len(kept), items)
	}
	for name, content := range kept {
		if !strings.HasSuffix(name, ".json") || !strings.HasSuffix(strings.TrimSpace(content), "}") {
			t.Errorf("kept record %s is not a complete JSON file", name)
		}
	}

	// The rerun resumes: it runs only the missing items and leaves the kept
	// records untouched.
	stderr.Reset()
	cmd = exec.Command(bin, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rerun: %v\n%s", err, stderr.String())
	}
	done := len(kept)
	want := "grid: " + strconv.Itoa(done) + " items already done, " + strconv.Itoa(items-done) + " to run"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("rerun stderr lacks %q:\n%s", want, stderr.String())
	}
	all := recordContents(t, out)
	if len(all) != items {
		t.Errorf("%d records after the rerun, want %d", len(all), items)
	}
	for name, content := range kept {
		if all[name] != content {
			t.Errorf("rerun rewrote the kept record %s", name)
		}
	}
	bench, err := os.ReadFile(filepath.Join(out, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(bench), "\nBenchmark"); n != items {
		t.Errorf("bench.txt has %d benchmark lines, want one per record (%d)", n, items)
	}
}

// TestSIGTERMModelProgram stops an explanation of a model program with
// SIGTERM: tempora must stop the program too, then exit with status 143 and
// one line.
func TestSIGTERMModelProgram(t *testing.T) {
	bin := buildTempora(t)
	// Uniform data of the smallest shape examplemodel.DefaultTerms fits (8
	// features × 20 timesteps); the targets are the model's predictions.
	x := tempora.NewTensor(200, 8, 20)
	rng := tempora.NewRand(7, "sigterm test data")
	for k := range x.Data {
		x.Data[k] = rng.Float64()
	}
	terms, err := examplemodel.ParseTerms(examplemodel.DefaultTerms)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, x.M)
	if err := (&examplemodel.Model{Terms: terms}).Predict(y, x); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	xPath, yPath := filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.csv")
	if err := dataio.WriteTensorNPY(xPath, x); err != nil {
		t.Fatal(err)
	}
	if err := dataio.WriteVectorCSV(yPath, y); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The model program is this test binary serving examplemodel (see
	// TestMain), started through sh so that it records its pid first.
	pidFile := filepath.Join(t.TempDir(), "model.pid")
	modelCmd := "sh -c " + shellQuote("echo $$ > "+shellQuote(pidFile)+"; exec "+shellQuote(self))
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "explain", "-data", xPath, "-targets", yPath, "-task", "regression",
		"-model-cmd", modelCmd, "-method", "perm", "-permutations", "100000", "-workers", "1")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	waitFor(t, time.Minute, "model pid file", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	// Let the model answer its first batches, so the signal interrupts the
	// explanation rather than the start-up.
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	status := finish(t, cmd, 30*time.Second)
	if status != 143 {
		t.Errorf("exit status %d after SIGTERM, want 143\nstderr:\n%s", status, stderr.String())
	}
	if got, want := lastLine(stderr.String()), "tempora: interrupted by SIGTERM"; got != want {
		t.Errorf("last line on stderr %q, want %q", got, want)
	}
	if running(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("model program (pid %d) still running after tempora exited", pid)
	}
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc: a zombie counts as running
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// shellQuote quotes s as one POSIX shell word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
