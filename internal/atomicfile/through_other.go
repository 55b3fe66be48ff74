//go:build !unix

package atomicfile

import "os"

// openThrough opens the character device or named pipe path for writing.
func openThrough(path string, _ bool) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY, 0)
}
