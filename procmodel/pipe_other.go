//go:build !linux

package procmodel

import "os"

// enlargePipe keeps the system's default pipe capacity.
func enlargePipe(f *os.File) {}
