//go:build !unix

package procmodel

import (
	"os"
	"os/exec"
)

// setProcessGroup does nothing where process groups are not available.
func setProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the child only: processes it started may survive it on
// systems without unix process groups.
func killGroup(p *os.Process) {
	if p != nil {
		p.Kill()
	}
}
