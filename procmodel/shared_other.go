//go:build !unix

package procmodel

import (
	"errors"
	"os"
)

// mapShared is not available without unix memory mapping.
func mapShared(f *os.File) ([]byte, func() error, error) {
	return nil, nil, errors.New("shared buffers need a unix system")
}
