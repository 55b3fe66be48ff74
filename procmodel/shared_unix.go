//go:build unix

package procmodel

import (
	"fmt"
	"os"
	"syscall"
)

// mapShared maps the whole of file f read-write and shared, so that what
// this process writes is what the other side reads. The mapping outlives f.
func mapShared(f *os.File) ([]byte, func() error, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size < 8 {
		return nil, nil, fmt.Errorf("%d bytes, need at least 8", size)
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("%d bytes is too large to map", size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping %d bytes: %w", size, err)
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
