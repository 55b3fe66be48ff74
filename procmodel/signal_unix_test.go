//go:build unix

package procmodel

import "syscall"

func processSignalable(pid int) bool { return syscall.Kill(pid, 0) == nil }
