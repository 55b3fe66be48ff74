package cli

import (
	"strings"

	"github.com/tempora-dev/tempora/internal/errmsg"
)

// commandError is the error of a command as the user sees it (see
// message); it unwraps to the command's error, so that the exit status
// (usageError) and interruptions (context.Canceled) are still recognised.
type commandError struct {
	msg string
	err error
}

func (e *commandError) Error() string { return e.msg }
func (e *commandError) Unwrap() error { return e.err }

// commandErr returns err, the error of command cmd, with its message in
// the command line's form (message); nil stays nil.
func commandErr(cmd string, err error) error {
	if err == nil {
		return nil
	}
	return &commandError{msg: message(cmd, err), err: err}
}

// message returns the one-line message of err, an error of command cmd:
// the command's name and ": ", then err's message without the command's
// name at its start (the command's own errors carry it) and without the
// package prefixes of the libraries it passed through (errmsg.Trim), so
// that "tempora explain -problem p" fails with "explain: open
// p/problem.json: no such file or directory", never "synth: open …".
// Line breaks (a model program's last lines of standard error) become
// " | ".
func message(cmd string, err error) string {
	s := strings.TrimSpace(err.Error())
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.NewReplacer("\n", " | ", "\r", " | ").Replace(s)
	s = strings.TrimPrefix(s, cmd+": ")
	return cmd + ": " + errmsg.Trim(s)
}
