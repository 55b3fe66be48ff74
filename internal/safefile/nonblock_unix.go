//go:build unix

package safefile

import "syscall"

// nonblock makes opening a named pipe return at once.
const nonblock = syscall.O_NONBLOCK
