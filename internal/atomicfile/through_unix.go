//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

// errNoReader is the error of opening a named pipe that no process reads.
var errNoReader = errors.New("is a named pipe (FIFO) that no process reads")

// openThrough opens the character device or named pipe path for writing.
// A pipe is opened without blocking (the open fails at once if no process
// reads it) and then written as usual, waiting while it is full: Linux's
// poller waits for it; elsewhere the file is put back in blocking mode.
func openThrough(path string, pipe bool) (*os.File, error) {
	if !pipe {
		return os.OpenFile(path, os.O_WRONLY, 0)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, errNoReader
	}
	if err == nil && runtime.GOOS != "linux" {
		f.Fd() // sets blocking mode
	}
	return f, err
}
