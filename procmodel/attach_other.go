//go:build !unix

package procmodel

import (
	"context"
	"errors"
)

// AttachFD needs a unix system.
func AttachFD(ctx context.Context, sock, shared int, opts Options) (*Conn, error) {
	return nil, errors.New("procmodel: inherited model connections need a unix system")
}
