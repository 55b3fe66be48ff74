package explain

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/memlimit"
)

// Peak memory at the shape of issue 33: TIME on 20000 × 30 × 50 data (240
// MB of float64) with two workers and the default memory budget peaks at
// most peakTarget bytes, the data plus the workers' chunks (the default
// budget, memlimit.CopyBudget, is at most memlimit.CopyCap = 256 MiB, and
// two whole copies would take 480 MB, so each worker holds one chunk of
// 2²¹ values, 16 MiB) plus the Go runtime and the draws' buffers. Two
// whole copies, the rule before memlimit.CopyCap, peaked at 729 MB.
const (
	peakM, peakD, peakL = 20000, 30, 50
	peakTarget          = 300e6
)

// TestPeakMemory runs the measurement in a child process of the test
// binary, so that the peak resident set size (getrusage's ru_maxrss) is
// that of building the data and explaining it only. The child runs the
// fixed tests with 3 draws each: the working copies, predictions and
// buffers are allocated as in a default run (they do not depend on the
// number of draws), at a fraction of its time.
func TestPeakMemory(t *testing.T) {
	if os.Getenv("TEMPORA_PEAK_CHILD") == "1" {
		peakChild(t)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("ru_maxrss in kilobytes is Linux's")
	}
	if testing.Short() {
		t.Skip("builds 240 MB of data")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeakMemory$", "-test.v")
	cmd.Env = append(os.Environ(), "TEMPORA_PEAK_CHILD=1", "GOMEMLIMIT=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	peak := float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) * 1024
	t.Logf("peak RSS %.0f MB (target %.0f MB; data %.0f MB)\n%s", peak/1e6, peakTarget/1e6, 8.0*peakM*peakD*peakL/1e6, out)
	if peak > peakTarget {
		t.Errorf("TIME on %d × %d × %d peaked at %.0f MB, above the target of %.0f MB", peakM, peakD, peakL, peak/1e6, peakTarget/1e6)
	}
}

// peakChild builds the data in place (one allocation of its exact size)
// and explains a model that reads features 0 and 1.
func peakChild(t *testing.T) {
	x := tempora.NewTensor(peakM, peakD, peakL)
	rng := rand.New(rand.NewPCG(33, 8))
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			s := 0.0
			for t := 10; t < 20; t++ {
				s += x.At(i, 0, t) - 0.5*x.At(i, 1, t+20)
			}
			dst[i] = s
		}
		return nil
	})
	y := make([]float64, peakM)
	if err := model(y, x); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		y[i] += rng.NormFloat64()
	}
	data := &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}
	if rows := memlimit.ChunkRows(peakM, peakD*peakL, 2, 0, memlimit.ChunkValues); rows == peakM {
		t.Fatalf("the default budget copies the whole data per worker")
	}
	e, err := TIME{Seed: 1, Workers: 2, Tests: FixedTests, Permutations: 3}.Explain(context.Background(), model, data)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d model calls", e.Accounting.ModelCalls)
}

// TestPeakMemoryDoc checks the README's statement of the target.
func TestPeakMemoryDoc(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("TIME on %d × %d × %d (%.0f MB of data) with two workers peaks under %.0f MB", peakM, peakD, peakL, 8.0*peakM*peakD*peakL/1e6, peakTarget/1e6)
	if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), want) {
		t.Errorf("README.md does not state %q", want)
	}
}
