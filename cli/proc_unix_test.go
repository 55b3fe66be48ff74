//go:build linux

package cli

import (
	"bytes"
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
)

// TestKilledTemporaKillsModel: a model program (here one that never says
// hello, in a process group of its own) dies with a tempora killed with
// SIGKILL, which cannot stop it itself (issue 33).
func TestKilledTemporaKillsModel(t *testing.T) {
	bin := buildTempora(t)
	dir := t.TempDir()
	x := tempora.NewTensor(20, 2, 3)
	xPath, yPath := filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.csv")
	if err := dataio.WriteTensorNPY(xPath, x); err != nil {
		t.Fatal(err)
	}
	if err := dataio.WriteVectorCSV(yPath, make([]float64, x.M)); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "model.pid")
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "explain", "-data", xPath, "-targets", yPath, "-task", "regression", "-model-timeout", "0",
		"-model-cmd", "sh -c "+shellQuote("echo $$ > "+shellQuote(pidFile)+"; exec sleep 300"))
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
		return err == nil && running(pid)
	})
	time.Sleep(200 * time.Millisecond) // the sh has become sleep
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("model program (pid %d) still running 10 s after tempora was killed\n%s", pid, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFullDiskLeavesNothing: synth and report that cannot write their
// files (a file-size limit stands in for a full disk) leave no directory,
// no tables/ and no temporary behind (issue 33).
func TestFullDiskLeavesNothing(t *testing.T) {
	bin := buildTempora(t)
	root := t.TempDir()
	run := filepath.Join(root, "run")
	mustRun(t, append(append([]string{"run"}, tinyProblems...), "-methods", "PERM", "-workers", "1", "-out", run)...)
	for _, c := range []struct{ out, args string }{
		{filepath.Join(root, "new", "p"), "synth -instances 2000 -out "},
		{filepath.Join(root, "report"), "report -in " + shellQuote(run) + " -out "},
	} {
		cmd := exec.Command("sh", "-c", "ulimit -f 4; exec "+shellQuote(bin)+" "+c.args+shellQuote(c.out))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "file too large") {
			t.Fatalf("%s: %v, want a failure to write\n%s", c.args, err, out)
		}
		entries, _ := os.ReadDir(root)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != "run" {
			t.Errorf("%s: left %v beside run", c.args, names)
		}
	}
}

// TestRunLock: a run into a directory another run is writing stops at
// once, naming the other process (issue 33).
func TestRunLock(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	release, err := lockRun(out)
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"run"}, tinyProblems...), "-methods", "PERM", "-workers", "1", "-out", out)
	_, _, err = runCmd(t, args...)
	if want := "is being written by another tempora run (process " + strconv.Itoa(os.Getpid()); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
	release()
	mustRun(t, args...)
}
