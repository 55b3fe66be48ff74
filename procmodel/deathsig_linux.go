package procmodel

import "syscall"

// setDeathSignal has the child killed (SIGKILL) when its parent dies: a
// model process does not outlive a tempora killed with SIGKILL, which
// leaves it no time to stop the child (issue 33). Linux sends the signal
// when the thread that started the child ends; Go ends a thread only when
// a goroutine locked to it (runtime.LockOSThread) exits, which no caller
// of Start in this module does.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
