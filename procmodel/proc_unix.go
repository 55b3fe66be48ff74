//go:build unix

package procmodel

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup makes the child the leader of a new process group, so
// that killGroup reaches the processes it starts too, and, where the
// system can (Linux), has it killed when this process dies, even of
// SIGKILL (setDeathSignal).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// killGroup kills the child's process group (the child and every process it
// started that did not leave the group). Errors are ignored: the group may
// already be gone.
func killGroup(p *os.Process) {
	if p == nil {
		return
	}
	syscall.Kill(-p.Pid, syscall.SIGKILL)
	p.Kill()
}
