//go:build !unix

package cli

// ownFile reports false where the owner of a file is not known: no
// temporary is removed.
func ownFile(string) bool { return false }

// processRunning reports true where it cannot be asked: no temporary is
// removed.
func processRunning(int) bool { return true }
