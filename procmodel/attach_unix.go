//go:build unix

package procmodel

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// AttachFD is Attach for inherited file descriptors: sock must be a socket
// and shared, unless negative (no shared buffer), a regular or memory file.
// It checks their kinds before taking ownership, so a wrong number is
// reported without closing a descriptor that belongs to someone else.
func AttachFD(ctx context.Context, sock, shared int, opts Options) (*Conn, error) {
	if err := checkFD(sock, syscall.S_IFSOCK, "a socket"); err != nil {
		return nil, err
	}
	var buf *os.File
	if shared >= 0 {
		if err := checkFD(shared, syscall.S_IFREG, "a regular or memory file"); err != nil {
			return nil, err
		}
		buf = os.NewFile(uintptr(shared), "fd "+strconv.Itoa(shared))
	}
	return Attach(ctx, os.NewFile(uintptr(sock), "fd "+strconv.Itoa(sock)), buf, opts)
}

func checkFD(fd int, kind uint32, what string) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fmt.Errorf("procmodel: file descriptor %d: %w (is it inherited from the parent?)", fd, err)
	}
	if st.Mode&syscall.S_IFMT != kind {
		return fmt.Errorf("procmodel: file descriptor %d is not %s", fd, what)
	}
	return nil
}
