package procmodel

import (
	"os"
	"syscall"
)

// pipeSize is the capacity requested for the pipes to and from the child:
// larger than Linux's default 64 KiB, so that a batch crosses in fewer
// context switches. Linux caps it (/proc/sys/fs/pipe-max-size, 1 MiB by
// default); failure leaves the default.
const pipeSize = 1 << 20

// fSetPipeSize is F_SETPIPE_SZ from <fcntl.h>.
const fSetPipeSize = 1031

func enlargePipe(f *os.File) {
	c, err := f.SyscallConn()
	if err != nil {
		return
	}
	c.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, pipeSize)
	})
}
