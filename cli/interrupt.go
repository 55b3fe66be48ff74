package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// interruptGrace is how long a command has, after SIGINT or SIGTERM, to
// stop by itself (cancelled context: model programs stopped, records in
// flight abandoned) before Main ends the process anyway: a command blocked
// in a system call that no context reaches (an open of a named pipe with no
// writer, a read from a hung file system, a write to a full pipe) must not
// outlive the signal.
const interruptGrace = 1500 * time.Millisecond

// exitMu serialises the end of the process between Main and the
// interruption watchdog, so that exactly one of them prints the last line.
var exitMu sync.Mutex

// watchInterrupt ends the process with status 128 + n if signal n cancels
// ctx and the command has not returned (done is not closed) interruptGrace
// later. name is the command's name, for the message.
func watchInterrupt(ctx context.Context, name string, done <-chan struct{}) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	var sig interruptError
	if !errors.As(context.Cause(ctx), &sig) {
		return
	}
	select {
	case <-done:
		return
	case <-time.After(interruptGrace):
	}
	exitMu.Lock()
	select {
	case <-done:
		exitMu.Unlock()
		return
	default:
	}
	// A line saying why, then the line Main prints for an interrupted
	// command.
	what := "the command"
	if name != "" {
		what = name
	}
	fmt.Fprintf(os.Stderr, "tempora: %s did not stop within %v of %v; ending it (files already written are kept)\n", what, interruptGrace, sig)
	if name == "run" {
		fmt.Fprintf(os.Stderr, "tempora: run: %v; %s\n", sig, resumeHint)
	} else {
		fmt.Fprintf(os.Stderr, "tempora: %v\n", sig)
	}
	os.Exit(128 + int(sig.sig))
}

// resumeHint ends the message of an interrupted run.
const resumeHint = "finished records are kept, rerun the same command to resume"

// commandName is the command of a command line (os.Args[1:]), or "".
func commandName(args []string) string {
	if len(args) == 0 {
		return ""
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.name
		}
	}
	return ""
}

// interruptedAnyway returns, for a command that returned nil, the
// interruption that happened meanwhile, if any: a command that finished
// after SIGINT or SIGTERM still exits with 128 + n, as the signal asked it to
// stop (its output may be incomplete).
func interruptedAnyway(ctx context.Context) (interruptError, bool) {
	var sig interruptError
	ok := errors.As(context.Cause(ctx), &sig)
	return sig, ok
}
