//go:build unix

package cli

import "syscall"

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }

// nonblockFlag opens a named pipe without waiting for the other end.
const nonblockFlag = syscall.O_NONBLOCK
