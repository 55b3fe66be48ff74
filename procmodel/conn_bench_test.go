//go:build unix

package procmodel

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// startPythonConn starts python/bench/spin_model.py with a zero cost on a
// socketpair, with a shared buffer of sharedBytes (none if 0), and returns
// the Conn to it. It skips the benchmark without Debian's python3 and
// NumPy.
func startPythonConn(b *testing.B, sharedBytes int) *Conn {
	b.Helper()
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		b.Skipf("needs %s with NumPy: %v", python, err)
	}
	script, err := filepath.Abs(filepath.Join("..", "python", "bench", "spin_model.py"))
	if err != nil {
		b.Fatal(err)
	}
	syscall.ForkLock.RLock()
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(pair[0])
		syscall.CloseOnExec(pair[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		b.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "ours"), os.NewFile(uintptr(pair[1]), "theirs")
	cmd := exec.Command(python, script, "--per-1000", "0", "--fd", "3")
	cmd.Stderr = os.Stderr
	cmd.ExtraFiles = []*os.File{theirs}
	var buf *os.File
	if sharedBytes > 0 {
		if buf, err = os.CreateTemp("", "tempora-bench-shared"); err != nil {
			b.Fatal(err)
		}
		defer os.Remove(buf.Name())
		if err := buf.Truncate(int64(sharedBytes)); err != nil {
			b.Fatal(err)
		}
		child, err := os.OpenFile(buf.Name(), os.O_RDWR, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer child.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, child)
		cmd.Args = append(cmd.Args, "--buf", "4")
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	theirs.Close()
	c, err := Attach(context.Background(), ours, buf, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Close()
		cmd.Wait()
	})
	return c
}

// BenchmarkPythonRoundTrip measures the transport alone: a 1000 × 10 × 20
// batch (Table 1's shape, 1.6 MB) predicted by a Python model that costs
// nothing (python/bench/spin_model.py with cost 0), through a connection
// with a shared buffer (what tempora.explain uses) and through the socket
// alone. ns/op is the round trip of one batch: the time a Python-served
// model adds per call, to compare with its own cost per batch.
func BenchmarkPythonRoundTrip(b *testing.B) {
	const m, d, l = 1000, 10, 20
	x := randomTensor(m, d, l, "python round trip")
	dst := make([]float64, m)
	for _, tc := range []struct {
		name        string
		sharedBytes int
	}{
		{"transport=shared", 2 * 8 * m * d * l}, // two slots
		{"transport=socket", 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := startPythonConn(b, tc.sharedBytes)
			for b.Loop() {
				if err := c.Predict(dst, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
