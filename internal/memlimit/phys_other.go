//go:build !linux

package memlimit

// physicalMemory returns 0: the physical memory is read on Linux only.
func physicalMemory() int64 { return 0 }
