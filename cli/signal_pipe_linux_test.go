package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// Linux's fcntl and ioctl requests for a pipe's capacity and the bytes
// waiting in it.
const (
	fSetPipeSize = 1031   // F_SETPIPE_SZ
	fionread     = 0x541B // FIONREAD
)

// TestSignalBlockedWrite interrupts explain while it is blocked writing
// its -json into a named pipe whose reader never reads (inputs that are
// pipes are refused at once, issue 33; an output pipe is written through,
// and waits while it is full): no context reaches that write, and the
// signal must still end tempora within two seconds (issue 24).
func TestSignalBlockedWrite(t *testing.T) {
	bin := buildTempora(t)
	for _, sig := range stopSignals {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			prob := filepath.Join(dir, "p")
			mustRun(t, "synth", "-out", prob, "-instances", "40", "-features", "8", "-timesteps", "4", "-seed", "1")
			fifo := filepath.Join(dir, "out.json")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			fd := r.Fd()
			// The smallest pipe (one page), which the explanation's JSON
			// fills.
			size, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, 4096)
			if errno != 0 {
				t.Skip("cannot set the pipe's size:", errno)
			}
			full := func() bool {
				var n int32
				if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, fionread, uintptr(unsafe.Pointer(&n))); errno != 0 {
					t.Fatal(errno)
				}
				return uintptr(n) >= size
			}
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "explain", "-problem", prob, "-method", "perm", "-json", fifo)
			cmd.Stderr = &stderr
			signalWithin(t, cmd, &stderr, sig, full, stopLimit)
			if want := "tempora: explain did not stop within 1.5s of " + (interruptError{sig}).Error(); !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
			}
		})
	}
}
