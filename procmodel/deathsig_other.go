//go:build unix && !linux

package procmodel

import "syscall"

// setDeathSignal does nothing where the system cannot kill a child with
// its parent (only Linux can): there the child stops when its standard
// input ends, as a model process must (docs/protocol.md).
func setDeathSignal(*syscall.SysProcAttr) {}
