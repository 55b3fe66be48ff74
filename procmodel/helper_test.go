package procmodel

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
)

// The test binary doubles as a misbehaving model program: run with
// helperEnv set to a mode, TestMain runs helperMain instead of the tests.
const (
	helperEnv    = "TEMPORA_PROCMODEL_HELPER"
	helperPidEnv = "TEMPORA_PROCMODEL_HELPER_PIDFILE"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		helperMain(mode)
		os.Exit(0)
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// helperCommand returns the command that runs the test binary in mode.
func helperCommand(mode string) ([]string, []string) {
	return []string{os.Args[0], "-test.run=^$"}, append(os.Environ(), helperEnv+"="+mode)
}

// sumModel predicts the sum of an instance's values.
var sumModel = tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
	for i := range dst {
		var s float64
		for _, v := range x.Instance(i) {
			s += v
		}
		dst[i] = s
	}
	return nil
})

// outputsModel returns a model of k outputs per instance: output c of an
// instance is (c+1) times the sum of its values plus the sum of feature
// c mod D, so that every output differs and depends on the values sent.
func outputsModel(k int) tempora.ModelFunc {
	return func(dst []float64, x *tempora.Tensor) error {
		if len(dst) != x.M*k {
			return errors.New("outputsModel: wrong prediction count")
		}
		for i := range x.M {
			var s float64
			for _, v := range x.Instance(i) {
				s += v
			}
			for c := range k {
				var f float64
				for _, v := range x.Series(i, c%x.D) {
					f += v
				}
				dst[i*k+c] = float64(c+1)*s + f
			}
		}
		return nil
	}
}

// windowModel is issue 22's model: the mean of features 0 to 4 (or all,
// if fewer) over timesteps L/4 to L/2 − 1 (L/4 alone for L < 4), as cheap
// per instance as a NumPy model.
var windowModel = tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
	lo := x.L / 4
	hi := max(lo, x.L/2-1)
	nf := min(5, x.D)
	for i := range dst {
		var v float64
		for j := range nf {
			for _, s := range x.Window(i, j, lo, hi) {
				v += s
			}
		}
		dst[i] = v / float64(nf*(hi-lo+1))
	}
	return nil
})

// nanCounter predicts the number of missing values (NaN) of an instance,
// and fails for an instance whose values are all missing.
var nanCounter = tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
	for i := range dst {
		n := 0
		for _, v := range x.Instance(i) {
			if v != v {
				n++
			}
		}
		if n == x.D*x.L {
			return fmt.Errorf("instance %d has no observed value", i)
		}
		dst[i] = float64(n)
	}
	return nil
})

func helperMain(mode string) {
	in, out := os.Stdin, os.Stdout
	hello := func() { out.Write(appendHello(nil, nil, 1)) }
	// readRequest reads one request and returns its M (or exits at EOF).
	br := bufio.NewReader(in)
	readRequest := func() int {
		var h [requestHeaderSize]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			os.Exit(0)
		}
		m, d, l, err := parseRequestHeader(h[:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(4)
		}
		io.CopyN(io.Discard, br, int64(8*m*d*l))
		return m
	}
	switch mode {
	case "serve":
		fmt.Fprintln(os.Stderr, "helper: loading weights")
		Serve(in, out, sumModel)
	case "crash":
		calls := 0
		Serve(in, out, tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			calls++
			if calls == 2 {
				fmt.Fprintln(os.Stderr, "helper: out of memory, crashing")
				os.Exit(3)
			}
			return sumModel(dst, x)
		}))
	case "short":
		hello()
		m := readRequest()
		var h [responseHeaderSize]byte
		copy(h[:], responseMagic)
		binary.LittleEndian.PutUint32(h[8:], uint32(m-1))
		out.Write(h[:])
		out.Write(make([]byte, 8*(m-1)))
		time.Sleep(time.Hour)
	case "bad-answer":
		hello()
		readRequest()
		out.Write([]byte("loss: 0.25 accuracy 0.9\n"))
		time.Sleep(time.Hour)
	case "print-first":
		out.Write([]byte("Loading model...\n"))
		hello()
		time.Sleep(time.Hour)
	case "old-version":
		var h [helloHeadSize]byte
		copy(h[:], helloMagic)
		binary.LittleEndian.PutUint32(h[4:], 99)
		out.Write(h[:])
		time.Sleep(time.Hour)
	case "v1":
		// A model side of protocol version 1: an 8-byte hello, then it
		// waits for requests.
		var h [helloHeadSize]byte
		copy(h[:], helloMagic)
		binary.LittleEndian.PutUint32(h[4:], 1)
		out.Write(h[:])
		time.Sleep(time.Hour)
	case "serve-window":
		Serve(in, out, windowModel)
	case "serve-scribble":
		// sumModel, then zeros written into its batch (issue 33).
		Serve(in, out, tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			err := sumModel(dst, x)
			clear(x.Data)
			return err
		}))
	case "count-nan":
		Serve(in, out, nanCounter)
	case "hang":
		hello()
		readRequest()
		time.Sleep(time.Hour)
	case "silent":
		time.Sleep(time.Hour)
	case "die-early":
		fmt.Fprintln(os.Stderr, "helper: cannot load model weights from model.pt")
		os.Exit(2)
	case "ignore-eof":
		Serve(in, out, sumModel)
		time.Sleep(time.Hour)
	case "fail-exit":
		Serve(in, out, sumModel)
		fmt.Fprintln(os.Stderr, "helper: failing on shutdown")
		os.Exit(5)
	case "grandchild", "grandchild-hang":
		gc := exec.Command(os.Args[0], "-test.run=^$")
		gc.Env = append(os.Environ(), helperEnv+"=silent")
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(6)
		}
		os.WriteFile(os.Getenv(helperPidEnv), []byte(strconv.Itoa(gc.Process.Pid)), 0o644)
		if mode == "grandchild-hang" {
			hello()
			readRequest()
			time.Sleep(time.Hour)
		}
		Serve(in, out, sumModel)
	default:
		if f := moreHelpers[mode]; f != nil {
			f(in, out)
			return
		}
		fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
		os.Exit(7)
	}
}

// moreHelpers are helper modes defined by files for some systems only.
var moreHelpers = map[string]func(in io.Reader, out io.Writer){}

// The example model program, built once per test binary.
var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// gomodelPath builds examples/gomodel and returns the program's path.
func gomodelPath(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "procmodel-test")
		if buildErr != nil {
			return
		}
		bin := filepath.Join(buildDir, "gomodel")
		cmd := exec.Command("go", "build", "-o", bin, "github.com/tempora-dev/tempora/examples/gomodel")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build examples/gomodel: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "gomodel")
}

// processGone reports whether process pid no longer runs (it does not
// exist, or it is a zombie waiting to be reaped by init).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if _, serr := os.Stat("/proc/self/stat"); serr != nil {
			return !processSignalable(pid) // no procfs
		}
		return true
	}
	// The state follows the parenthesised command name.
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
		}
	}
	return false
}

// waitGone fails the test unless process pid is gone within a few seconds
// (a killed process is reaped asynchronously).
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Errorf("%s (pid %d) still runs", what, pid)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
