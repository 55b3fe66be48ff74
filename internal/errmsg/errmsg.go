// Package errmsg keeps tempora's error messages to one package prefix.
//
// The convention: an error returned by a package of the module starts with
// that package's name and a colon ("synth: …"; the root package's with
// "tempora: "), once. A package that passes on another package's error adds
// its context in place of that package's prefix (Wrap), so that messages
// read "synth: dir/data.npy: file is truncated", never "synth: tempora:
// dir/data.npy: npy: …". The command line prints "tempora: ", the
// command's name and the message without package prefixes (Trim), so users
// see one "tempora: " and no package names: "tempora: explain: open
// p/problem.json: no such file or directory".
package errmsg

import (
	"fmt"
	"strings"
)

// packages are the names of the module's packages whose errors carry a
// prefix; the root package is "tempora".
var packages = []string{
	"tempora", "dataio", "npy", "synth", "procmodel", "explain", "baselines",
	"experiments", "record", "results", "cli", "method", "metrics", "explainertest",
}

// cut returns s without a leading package prefix ("name: "), and whether
// there was one.
func cut(s string) (string, bool) {
	for _, p := range packages {
		if rest, ok := strings.CutPrefix(s, p+": "); ok {
			return rest, true
		}
	}
	return s, false
}

// Trim returns msg without package prefixes: those at its start ("synth:
// dataio: x" becomes "x") and those right after a ": " separator inside it
// ("explain: model: procmodel: timed out" becomes "model: timed out"). A
// prefix needs the exact form "name: ", so file names and quoted values are
// left alone.
func Trim(msg string) string {
	var b strings.Builder
	for {
		for {
			rest, ok := cut(msg)
			if !ok {
				break
			}
			msg = rest
		}
		i := strings.Index(msg, ": ")
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i+2])
		msg = msg[i+2:]
	}
}

// Wrap returns an error whose message is the formatted context, ": " and
// err's message without its package prefixes (Trim), and which unwraps to
// err, so errors.Is and errors.As still see the cause. The context should
// start with the calling package's prefix, e.g.
//
//	errmsg.Wrap(err, "dataio: %s", path)
func Wrap(err error, format string, args ...any) error {
	return &wrapped{msg: fmt.Sprintf(format, args...) + ": " + Trim(err.Error()), err: err}
}

type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }
