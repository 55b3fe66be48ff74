//go:build unix

package cli

import (
	"errors"
	"os"
	"syscall"
)

// ownFile reports whether path (not followed) belongs to this process's
// user.
func ownFile(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// processRunning reports whether process pid exists (one of another user
// counts).
func processRunning(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
