//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/procmodel"
	"github.com/tempora-dev/tempora/resident"
)

// spinModel predicts the mean of feature 0 over the last 5 timesteps and
// busy-waits perInstance per instance, one call at a time (like one model
// process): the in-process twin of python/bench/spin_model.py.
type spinModel struct {
	mu          sync.Mutex
	perInstance time.Duration
}

func (s *spinModel) Predict(dst []float64, x *tempora.Tensor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	end := time.Now().Add(time.Duration(x.M) * s.perInstance)
	for i := range dst {
		row := x.Instance(i)[x.L-5 : x.L]
		var sum float64
		for _, v := range row {
			sum += v
		}
		dst[i] = sum / 5
	}
	for time.Now().Before(end) {
	}
	return nil
}

// pythonSpin starts n python/bench/spin_model.py processes, each serving one
// socketpair with a shared buffer of the data's size (as tempora.explain
// does, with the roles of parent and child swapped), and returns them as a
// pool. It skips the benchmark without Debian's python3 and NumPy.
func pythonSpin(b *testing.B, n int, per1000 time.Duration, sharedBytes int) *procmodel.Pool {
	b.Helper()
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		b.Skipf("needs %s with NumPy: %v", python, err)
	}
	script, err := filepath.Abs(filepath.Join("..", "python", "bench", "spin_model.py"))
	if err != nil {
		b.Fatal(err)
	}
	members := make([]procmodel.HeldMember, n)
	for k := range n {
		pair, err := socketpair()
		if err != nil {
			b.Fatal(err)
		}
		ours, theirs := os.NewFile(uintptr(pair[0]), "ours"), os.NewFile(uintptr(pair[1]), "theirs")
		args := []string{script, "--per-1000", fmt.Sprint(per1000.Seconds() * 1000), "--fd", "3"}
		var bufOurs, bufTheirs *os.File
		if sharedBytes > 0 {
			bufOurs, err = os.CreateTemp("", "tempora-bench-shared")
			if err != nil {
				b.Fatal(err)
			}
			if err := bufOurs.Truncate(int64(sharedBytes)); err != nil {
				b.Fatal(err)
			}
			if bufTheirs, err = os.OpenFile(bufOurs.Name(), os.O_RDWR, 0); err != nil {
				b.Fatal(err)
			}
			os.Remove(bufOurs.Name())
			args = append(args, "--buf", "4")
		}
		cmd := exec.Command(python, args...)
		cmd.Stderr = os.Stderr
		cmd.ExtraFiles = []*os.File{theirs}
		if bufTheirs != nil {
			cmd.ExtraFiles = append(cmd.ExtraFiles, bufTheirs)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		theirs.Close()
		if bufTheirs != nil {
			bufTheirs.Close()
		}
		b.Cleanup(func() { cmd.Wait() })
		c, err := procmodel.Attach(context.Background(), ours, bufOurs, procmodel.Options{})
		if err != nil {
			b.Fatal(err)
		}
		members[k] = c
	}
	p, err := procmodel.NewHeldPool(members...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	return p
}

// BenchmarkPythonModel measures what serving the model from Python costs
// TIME: TIME (default sequential tests, or with tests=fixed the paper's
// P = 50; 2 workers) at Table-1 shape (1000
// instances × 10 features × 20 timesteps) explains a model that costs
// 1 ms per 1000 instances (busy-wait), served by Python through a
// connection with a shared buffer (what tempora.explain does), through a
// connection without one, and by 2 Python processes. Each iteration runs
// TIME twice, with the Python model and with its in-process twin
// (serialised, like one model process), so that both see the same machine
// load; the sub-benchmark reports the mean wall time of each (python-s,
// inprocess-s), their ratio, and the difference in percent (overhead-%);
// over-model-% compares the Python run with the model's own time (model
// calls × 1 ms), a lower bound for one model process that needs no
// reference run. ns/op is the time of the pair. On a loaded machine the
// in-process twin suffers more than the Python model (each of its calls
// waits for a lock hand-off, while the Python model finds its next batch
// already waiting), so read overhead-% as a comparison under the same load,
// and over-model-% as an upper bound.
func BenchmarkPythonModel(b *testing.B) {
	const m, d, l = 1000, 10, 20
	const per1000 = time.Millisecond
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(1, "bench python model")
	for k := range x.Data {
		x.Data[k] = rng.NormFloat64()
	}
	y := make([]float64, m)
	(&spinModel{}).Predict(y, x)
	for i := range y {
		y[i] += 0.3 * rng.NormFloat64()
	}
	data := &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}
	// The last in-process and Python runs' explanations, without their
	// accounting (a Python model holds the data and takes several draws
	// per call, so its model calls differ), and the Python run's.
	var same [2]string
	var acc tempora.Accounting
	run := func(b *testing.B, model tempora.Model, held resident.Model, k int, fixed bool) time.Duration {
		start := time.Now()
		e, err := (explain.TIME{Seed: 1, Workers: 2, Tests: map[bool]explain.Tests{true: explain.FixedTests}[fixed]}).ExplainHeld(context.Background(), model, held, data)
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		acc, e.Accounting = e.Accounting, tempora.Accounting{}
		j, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		same[k] = string(j)
		return took
	}
	for _, tc := range []struct {
		name        string
		procs       int
		sharedBytes int
		fixed       bool
	}{
		{"transport=shared", 1, 2 * 8 * m * d * l, false},
		{"transport=socket", 1, 0, false},
		{"transport=shared/procs=2", 2, 2 * 8 * m * d * l, false},
		{"transport=shared/tests=fixed", 1, 2 * 8 * m * d * l, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			pool := pythonSpin(b, tc.procs, per1000, tc.sharedBytes)
			var py, in time.Duration
			n := 0
			for b.Loop() {
				in += run(b, &spinModel{perInstance: per1000 / 1000}, nil, 0, tc.fixed)
				py += run(b, pool, pool.Held(), 1, tc.fixed)
				n++
			}
			if same[0] != same[1] {
				b.Fatal("the explanations with the model in process and served from Python differ")
			}
			b.ReportMetric(float64(acc.ModelCalls), "calls")
			// The model's own time (its instance evaluations at per1000
			// per 1000): a lower bound on any run with one model process.
			model := time.Duration(acc.InstanceEvals) * per1000 / 1000
			b.ReportMetric(100*(py.Seconds()/float64(n)/model.Seconds()-1), "over-model-%")
			b.ReportMetric(py.Seconds()/float64(n), "python-s")
			b.ReportMetric(in.Seconds()/float64(n), "inprocess-s")
			b.ReportMetric(py.Seconds()/in.Seconds(), "ratio")
			b.ReportMetric(100*(py.Seconds()/in.Seconds()-1), "overhead-%")
		})
	}
}
