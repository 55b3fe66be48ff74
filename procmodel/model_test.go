package procmodel

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/examplemodel"
)

// randomTensor returns an m × d × l tensor of standard normal values.
func randomTensor(m, d, l int, key string) *tempora.Tensor {
	rng := tempora.NewRand(1, "procmodel-test", key)
	x := tempora.NewTensor(m, d, l)
	for k := range x.Data {
		x.Data[k] = rng.NormFloat64()
	}
	return x
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a child's
// standard error copier and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startHelper(t *testing.T, mode string, opts Options) (*Model, error) {
	t.Helper()
	cmd, env := helperCommand(mode)
	opts.Env = env
	if opts.Stderr == nil {
		opts.Stderr = &syncBuffer{}
	}
	return Start(context.Background(), cmd, opts)
}

// TestSubprocessMatchesInProcess checks that the example model served by
// examples/gomodel predicts exactly (bit for bit) what the same model
// computes in process, for both tasks, whole and chunked batches, and
// concurrent callers.
func TestSubprocessMatchesInProcess(t *testing.T) {
	bin := gomodelPath(t)
	terms, err := examplemodel.ParseTerms(examplemodel.DefaultTerms)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		task     string
		maxBatch int
	}{
		{"regression", "regression", 0},
		{"classification", "classification", 0},
		{"classification/chunked", "classification", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			twin := &examplemodel.Model{Terms: terms, Bias: 0.25, Classification: tc.task == "classification"}
			m, err := Start(context.Background(), []string{bin, "-task", tc.task, "-bias", "0.25"}, Options{MaxBatch: tc.maxBatch, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for call := range 5 {
						x := randomTensor(1+13*g+call, 10, 20, tc.name+strconv.Itoa(g)+strconv.Itoa(call))
						got := make([]float64, x.M)
						want := make([]float64, x.M)
						if err := m.Predict(got, x); err != nil {
							t.Error(err)
							return
						}
						if err := twin.Predict(want, x); err != nil {
							t.Error(err)
							return
						}
						for i := range got {
							if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
								t.Errorf("goroutine %d call %d instance %d: subprocess predicted %v, in process %v", g, call, i, got[i], want[i])
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			pid := m.Pid()
			if err := m.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			waitGone(t, pid, "model process")
			if err := m.Predict(make([]float64, 1), randomTensor(1, 10, 20, "after")); !errors.Is(err, ErrClosed) {
				t.Errorf("Predict after Close: got %v, want ErrClosed", err)
			}
			if err := m.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

// pythonWithNumPy returns Debian's python3 if it has NumPy, which
// examples/python/serve_model.py and the tempora package it uses need, and
// skips the test otherwise.
func pythonWithNumPy(t *testing.T) string {
	t.Helper()
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("needs %s with NumPy (apt-get install python3-numpy): %v", python, err)
	}
	return python
}

// TestPython runs examples/python/serve_model.py (its model computed with
// NumPy, and with Python floats) and compares its predictions with the Go
// twin. The Python-float path adds in the same order as Go, so only exp may
// differ (by an ulp or so); NumPy may sum in a different order. Both stay
// within 1e-12 for predictions of order 1.
func TestPython(t *testing.T) {
	python := pythonWithNumPy(t)
	script, err := filepath.Abs("../examples/python/serve_model.py")
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-12
	terms, _ := examplemodel.ParseTerms(examplemodel.DefaultTerms)
	for _, variant := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"no-numpy", []string{"--no-numpy"}},
	} {
		for _, task := range []string{"regression", "classification"} {
			t.Run(variant.name+"/"+task, func(t *testing.T) {
				cmd := append([]string{python, script, "--task", task, "--bias", "-0.5"}, variant.args...)
				m, err := Start(context.Background(), cmd, Options{Timeout: time.Minute, MaxBatch: 50})
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				twin := &examplemodel.Model{Terms: terms, Bias: -0.5, Classification: task == "classification"}
				x := randomTensor(120, 10, 20, "python")
				got, want := make([]float64, x.M), make([]float64, x.M)
				if err := m.Predict(got, x); err != nil {
					t.Fatal(err)
				}
				twin.Predict(want, x)
				for i := range got {
					if math.Abs(got[i]-want[i]) > tol {
						t.Fatalf("instance %d: Python predicted %v, Go %v", i, got[i], want[i])
					}
				}
				// A term outside the data is reported through an error frame.
				if err := m.Predict(make([]float64, 2), randomTensor(2, 3, 20, "small")); !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), "does not fit data") {
					t.Errorf("Predict on too few features: got %v, want ErrModel about the data", err)
				}
				pid := m.Pid()
				m.Close()
				waitGone(t, pid, "python model")
			})
		}
	}
}

// TestPythonPrints checks that serve_model.serve keeps a model's prints off
// the protocol stream (they go to standard error) and reports exceptions.
func TestPythonPrints(t *testing.T) {
	python := pythonWithNumPy(t)
	const code = `
import os, sys
from serve_model import serve
print("loading")
def predict(batch):
    print("predicting", len(batch))
    os.write(1, b"raw fd 1\n")
    if len(batch) == 3:
        raise RuntimeError("three is a bad batch size")
    return [float(len(batch))] * len(batch)
serve(predict)
`
	stderr := &syncBuffer{}
	m, err := Start(context.Background(), []string{python, "-c", code}, Options{Dir: "../examples/python", Stderr: stderr, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got := make([]float64, 2)
	if err := m.Predict(got, randomTensor(2, 1, 1, "print")); err != nil {
		t.Fatal(err)
	}
	if got[0] != 2 || got[1] != 2 {
		t.Errorf("predictions %v, want [2 2]", got)
	}
	err = m.Predict(make([]float64, 3), randomTensor(3, 1, 1, "print"))
	if !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), "RuntimeError: three is a bad batch size") {
		t.Errorf("Predict: got %v, want the Python exception", err)
	}
	m.Close()
	for _, s := range []string{"loading", "predicting 2", "raw fd 1"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("standard error %q lacks %q", stderr.String(), s)
		}
	}
}

// TestFailures checks that each kind of misbehaviour becomes an error of the
// right kind, with the useful detail in its message, that the child is gone
// afterwards, and that the model stays unusable.
func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		mode     string
		opts     Options
		startErr error // at Start, or nil if Start succeeds
		err      error // at Predict
		contains []string
	}{
		{mode: "crash", err: ErrExited, contains: []string{"exit status 3", "helper: out of memory, crashing"}},
		{mode: "short", err: ErrProtocol, contains: []string{"4 predictions for a batch of 5 instances"}},
		{mode: "bad-answer", err: ErrProtocol, contains: []string{`"loss: 0.25 a"`, "standard output"}},
		{mode: "hang", opts: Options{Timeout: 300 * time.Millisecond}, err: ErrTimeout, contains: []string{"300ms", "no answer to a batch of 5 instances", "killed"}},
		{mode: "print-first", startErr: ErrProtocol, contains: []string{`"Loading "`}},
		{mode: "old-version", startErr: ErrProtocol, contains: []string{"version 99"}},
		{mode: "silent", opts: Options{StartTimeout: 300 * time.Millisecond}, startErr: ErrTimeout, contains: []string{"300ms", "no hello frame"}},
		{mode: "die-early", startErr: ErrExited, contains: []string{"exit status 2", "cannot load model weights from model.pt"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			stderr := &syncBuffer{}
			tc.opts.Stderr = stderr
			start := time.Now()
			m, err := startHelper(t, tc.mode, tc.opts)
			if tc.startErr != nil {
				if !errors.Is(err, tc.startErr) {
					t.Fatalf("Start: got %v, want %v", err, tc.startErr)
				}
				t.Logf("Start error: %v", err)
				checkContains(t, err, tc.contains)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			pid := m.Pid()
			x := randomTensor(5, 2, 3, tc.mode)
			dst := make([]float64, x.M)
			if tc.mode == "crash" { // the first call succeeds
				if err := m.Predict(dst, x); err != nil {
					t.Fatalf("first call: %v", err)
				}
			}
			err = m.Predict(dst, x)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Predict: got %v, want %v", err, tc.err)
			}
			t.Logf("Predict error: %v", err)
			checkContains(t, err, tc.contains)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("failure took %v to detect", d)
			}
			waitGone(t, pid, "failed model process")
			if err2 := m.Predict(dst, x); err2 != err {
				t.Errorf("Predict after an error: got %v, want the same error", err2)
			}
			if err := m.Close(); err != nil {
				t.Errorf("Close after an error: %v", err)
			}
		})
	}
}

// TestHelloTimeout is the regression test of issue 12, defect 3: a model
// that never sends its hello frame used to be waited on for a fixed two
// minutes whatever Options.Timeout (the command line's -model-timeout) said,
// and the error did not say what was missing. Without a StartTimeout, the
// wait for the hello frame is bounded by Timeout.
func TestHelloTimeout(t *testing.T) {
	// The context only keeps a failure of this test short.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd, env := helperCommand("silent")
	start := time.Now()
	m, err := Start(ctx, cmd, Options{Env: env, Timeout: 300 * time.Millisecond, Stderr: &syncBuffer{}})
	if err == nil {
		m.Close()
		t.Fatal("Start of a silent model: no error")
	}
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Start: got %v, want ErrTimeout", err)
	}
	checkContains(t, err, []string{"no hello frame", "300ms"})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Start gave up after %v, want about the 300ms Timeout", d)
	}
}

func checkContains(t *testing.T, err error, want []string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}

// TestStderrPassThrough checks that the child's standard error reaches
// Options.Stderr.
func TestStderrPassThrough(t *testing.T) {
	stderr := &syncBuffer{}
	m, err := startHelper(t, "serve", Options{Stderr: stderr})
	if err != nil {
		t.Fatal(err)
	}
	x := randomTensor(3, 2, 2, "stderr")
	if err := m.Predict(make([]float64, 3), x); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if got := stderr.String(); got != "helper: loading weights\n" {
		t.Errorf("passed-through standard error is %q", got)
	}
}

// TestGrandchildrenKilled checks that processes started by the model die
// with it, on Close and on a timeout.
func TestGrandchildrenKilled(t *testing.T) {
	for _, mode := range []string{"grandchild", "grandchild-hang"} {
		t.Run(mode, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			cmd, env := helperCommand(mode)
			m, err := Start(context.Background(), cmd, Options{
				Env: append(env, helperPidEnv+"="+pidFile), Timeout: 300 * time.Millisecond, Stderr: &syncBuffer{},
			})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(pidFile) // written before the hello
			if err != nil {
				t.Fatal(err)
			}
			gpid, err := strconv.Atoi(string(b))
			if err != nil {
				t.Fatal(err)
			}
			if processGone(gpid) {
				t.Fatalf("grandchild %d is not running at start", gpid)
			}
			x := randomTensor(4, 2, 2, mode)
			err = m.Predict(make([]float64, 4), x)
			if mode == "grandchild-hang" && !errors.Is(err, ErrTimeout) {
				t.Errorf("Predict: got %v, want ErrTimeout", err)
			}
			if mode == "grandchild" {
				if err != nil {
					t.Error(err)
				}
				if err := m.Close(); err != nil {
					t.Error(err)
				}
			}
			waitGone(t, m.Pid(), "model process")
			waitGone(t, gpid, "grandchild process")
			m.Close()
		})
	}
}

// TestCloseKillsUnresponsive checks that Close kills a child that ignores
// the end of its input, and reports it; and that a failing exit status on
// shutdown is reported.
func TestCloseKillsUnresponsive(t *testing.T) {
	for _, tc := range []struct{ mode, contains string }{
		{"ignore-eof", "killed"},
		{"fail-exit", "helper: failing on shutdown"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			m, err := startHelper(t, tc.mode, Options{CloseTimeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Predict(make([]float64, 1), randomTensor(1, 1, 1, "close")); err != nil {
				t.Fatal(err)
			}
			err = m.Close()
			if err == nil || !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("Close: got %v, want an error mentioning %q", err, tc.contains)
			}
			waitGone(t, m.Pid(), "model process")
		})
	}
}

// TestContextCancel checks that cancelling Start's context kills the child
// and makes Predict fail with the context's error.
func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd, env := helperCommand("hang")
	m, err := Start(ctx, cmd, Options{Env: env, Stderr: &syncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	time.AfterFunc(100*time.Millisecond, cancel)
	err = m.Predict(make([]float64, 2), randomTensor(2, 2, 2, "cancel"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Predict: got %v, want context.Canceled", err)
	}
	waitGone(t, m.Pid(), "model process")
}

// TestPredictArguments checks argument validation and the empty batch.
func TestPredictArguments(t *testing.T) {
	m, err := startHelper(t, "serve", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	x := randomTensor(3, 2, 2, "args")
	if err := m.Predict(make([]float64, 2), x); err == nil {
		t.Error("Predict with a short dst: no error")
	}
	if err := m.Predict(nil, nil); err == nil {
		t.Error("Predict(nil, nil): no error")
	}
	if err := m.Predict(nil, tempora.NewTensor(0, 2, 2)); err != nil {
		t.Errorf("empty batch: %v", err)
	}
	// Argument errors do not break the model.
	got := make([]float64, 3)
	if err := m.Predict(got, x); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 3)
	sumModel(want, x)
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("instance %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := Start(context.Background(), nil, Options{}); err == nil {
		t.Error("Start with an empty command: no error")
	}
	if _, err := Start(context.Background(), []string{filepath.Join(t.TempDir(), "no-such-model")}, Options{}); err == nil {
		t.Error("Start of a missing program: no error")
	}
}
