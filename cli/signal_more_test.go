//go:build unix

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

// signalWithin sends sig to cmd once ready holds, and checks that tempora
// exits with 128 + sig within limit and says why on its last line.
func signalWithin(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer, sig syscall.Signal, ready func() bool, limit time.Duration) {
	t.Helper()
	// The machine's delay is measured before the command starts: measured
	// between readiness and the signal, it gave a loaded machine time to
	// finish the work the signal was to interrupt (exit status 0).
	limit += 4 * startupTime(t, cmd.Path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "readiness", ready)
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	status := finish(t, cmd, 30*time.Second)
	took := time.Since(start)
	if status != 128+int(sig) {
		t.Errorf("exit status %d after %v, want %d\nstderr:\n%s", status, sig, 128+int(sig), stderr.String())
	}
	if took > limit {
		t.Errorf("tempora took %v to stop after %v, want at most %v", took, sig, limit)
	}
	if want := "interrupted by " + map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]; !strings.Contains(lastLine(stderr.String()), want) {
		t.Errorf("last line on stderr %q lacks %q", lastLine(stderr.String()), want)
	}
	t.Logf("stopped %v after %v: %s", took, sig, lastLine(stderr.String()))
}

// startupTime returns how long the program at path takes to start, print
// its usage and exit on this machine now. The stop limit is about
// tempora's own promptness: on a loaded machine (a parallel go test run)
// every process is scheduled late, and the same delay that slows this
// trivial run slows the stop, so the limit grows by a few times it
// (milliseconds on an idle machine, where the limit is as stated).
func startupTime(t *testing.T, path string) time.Duration {
	t.Helper()
	start := time.Now()
	_ = exec.Command(path, "-h").Run() // exit status 0 or 2; only the time matters
	return time.Since(start)
}

// smallData writes a 20 × 2 × 4 data set and its targets into dir.
func smallData(t *testing.T, dir string) (xPath, yPath string) {
	t.Helper()
	x := tempora.NewTensor(20, 2, 4)
	for k := range x.Data {
		x.Data[k] = float64(k % 7)
	}
	y := make([]float64, x.M)
	for i := range y {
		y[i] = float64(i % 3)
	}
	xPath, yPath = filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.csv")
	if err := dataio.WriteTensorNPY(xPath, x); err != nil {
		t.Fatal(err)
	}
	if err := dataio.WriteVectorCSV(yPath, y); err != nil {
		t.Fatal(err)
	}
	return xPath, yPath
}

var stopSignals = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}

// stopLimit is how soon after a signal tempora must have exited: the 1.5 s
// grace of the interruption watchdog plus room for a loaded machine.
const stopLimit = 3500 * time.Millisecond

// TestSignalModelCall interrupts explain while a model program that said
// hello never answers a batch: tempora must stop it and exit promptly.
func TestSignalModelCall(t *testing.T) {
	bin := buildTempora(t)
	for _, sig := range stopSignals {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			xPath, yPath := smallData(t, dir)
			pidFile := filepath.Join(dir, "model.pid")
			// The hello frame ("TMPH", version 2, holding no data: 20
			// zero bytes), then silence.
			model := "sh -c " + shellQuote("echo $$ > "+shellQuote(pidFile)+"; printf 'TMPH\\002'; head -c 23 /dev/zero; exec sleep 600")
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "explain", "-data", xPath, "-targets", yPath, "-task", "regression", "-model-cmd", model, "-method", "perm")
			cmd.Stderr = &stderr
			var pid int
			signalWithin(t, cmd, &stderr, sig, func() bool {
				b, err := os.ReadFile(pidFile)
				if err != nil {
					return false
				}
				pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
				if err != nil {
					return false
				}
				time.Sleep(200 * time.Millisecond) // the first request is sent
				return true
			}, stopLimit)
			if running(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("model program (pid %d) still running after tempora exited", pid)
			}
		})
	}
}

// TestSignalWrite interrupts synth while it writes its data file: it must
// exit with 128 + n (it used to finish and exit 0 after SIGINT).
func TestSignalWrite(t *testing.T) {
	bin := buildTempora(t)
	for _, sig := range stopSignals {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "p")
			var stderr bytes.Buffer
			// 40000 × 10 × 20 values: a 64 MB data file.
			cmd := exec.Command(bin, "synth", "-out", out, "-instances", "40000", "-features", "10", "-timesteps", "20", "-seed", "3")
			cmd.Stderr = &stderr
			signalWithin(t, cmd, &stderr, sig, func() bool {
				// synth writes into .p.tmpPID-dir0 beside p (stageDir).
				stages, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".p.tmp*"))
				for _, d := range stages {
					entries, _ := os.ReadDir(d)
					for _, e := range entries {
						if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp") {
							return true // a file is being written
						}
					}
				}
				return false
			}, stopLimit)
		})
	}
}
