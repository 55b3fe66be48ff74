//go:build !unix

package procmodel

func processSignalable(pid int) bool { return false }
