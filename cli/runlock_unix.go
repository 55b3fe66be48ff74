//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// runLockFile is the lock of a run directory, held by the run writing it.
const runLockFile = ".tempora-run.lock"

// lockRun takes the lock of the run directory out (creating it) for this
// process, so that two runs never write one directory at once (both would
// run nearly every item: issue 33), and returns its release. The lock is
// an flock on OUT/.tempora-run.lock, which the system releases when the
// process ends however it ends; the file holds the holder's pid, which the
// error names.
func lockRun(out string) (func(), error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(out, runLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil {
				holder = "process " + strconv.Itoa(pid)
			}
			return nil, fmt.Errorf("%s is being written by another tempora run (%s, which holds %s): wait for it to end, or give another -out", out, holder, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}
