package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/errmsg"
	"github.com/tempora-dev/tempora/procmodel"
)

// Errors for programs: "-errors json" (docs/errors.md). A command that
// reads data (explain, describe) takes the flag; its failure is then
// also written as one JSON line on standard error, just before the usual
// "tempora: " line, so that a program running tempora (the Python package)
// decides on the error's kind and maps its location (instance, feature,
// timestep of the data) to its own names, never reading the message.

// errorFormats are the values of -errors.
var errorFormats = []string{"text", "json"}

// errorFormat is the value of -errors: whether the command's error is also
// written as JSON.
type errorFormat struct{ json bool }

func (f *errorFormat) String() string {
	if f != nil && f.json {
		return "json"
	}
	return "text"
}

// Get returns the format's name, for "tempora methods -json".
func (f *errorFormat) Get() any { return f.String() }

func (f *errorFormat) Set(s string) error {
	if !slices.Contains(errorFormats, s) {
		return fmt.Errorf("want %s", strings.Join(errorFormats, " or "))
	}
	f.json = s == "json"
	return nil
}

// defineErrorsFlag defines -errors on fs, into f.
func defineErrorsFlag(fs *flag.FlagSet, f *errorFormat) {
	fs.Var(f, "errors", "error `format`: text, or json (a JSON line first; docs/errors.md)")
}

// mark makes *err, the error of a command that was given -errors json,
// one that Main also writes as JSON. A command defers it on its named
// result before parsing its flags, so that a bad flag after -errors json
// is reported as JSON too.
func (f *errorFormat) mark(err *error) {
	if f.json && *err != nil {
		*err = jsonReported{*err}
	}
}

// jsonReported is the error of a command given -errors json.
type jsonReported struct{ err error }

func (e jsonReported) Error() string { return e.err.Error() }
func (e jsonReported) Unwrap() error { return e.err }

// errorObject is the JSON error object of docs/errors.md. Every field is
// present; those that do not apply are null.
type errorObject struct {
	Kind      string  `json:"kind"`
	Instance  *int    `json:"instance"`
	Feature   *int    `json:"feature"`
	Timestep  *int    `json:"timestep"`
	Value     *string `json:"value"`
	Count     *int    `json:"count"`
	Lengths   *[2]int `json:"lengths"`
	Alignment *string `json:"alignment"`
	Message   string  `json:"message"`
	Detail    string  `json:"detail"`
}

// The kinds of errors that are not about a dataset (tempora.DataError's
// kinds are those).
const (
	kindUsage       = "usage"       // a bad command line (exit status 2)
	kindModel       = "model"       // the model failed: exited, reported an error, timed out or broke the protocol
	kindInterrupted = "interrupted" // SIGINT or SIGTERM stopped the command
	kindOther       = "error"       // anything else
)

// newErrorObject returns the error object of err, whose one-line message
// (as printed after "tempora: ") is msg.
func newErrorObject(err error, msg string) errorObject {
	o := errorObject{Kind: kindOther, Message: msg, Detail: msg}
	var (
		de  *tempora.DataError
		u   usageError
		sig interruptError
	)
	switch {
	case errors.As(err, &de):
		o.Kind, o.Detail = string(de.Kind), errmsg.Trim(de.Error())
		o.Instance, o.Feature, o.Timestep = index(de.Instance), index(de.Feature), index(de.Timestep)
		if de.HasValue {
			v := strconv.FormatFloat(de.Value, 'g', -1, 64)
			o.Value = &v
		}
		if de.Count > 0 {
			n := de.Count
			o.Count = &n
		}
		if de.Kind == tempora.KindAlignment {
			lengths, a := de.Lengths, de.Alignment.String()
			o.Lengths, o.Alignment = &lengths, &a
		}
	case errors.As(err, &u):
		o.Kind = kindUsage
	case errors.As(err, &sig):
		o.Kind = kindInterrupted
	case errors.Is(err, procmodel.ErrExited), errors.Is(err, procmodel.ErrModel),
		errors.Is(err, procmodel.ErrTimeout), errors.Is(err, procmodel.ErrProtocol):
		o.Kind = kindModel
	}
	return o
}

// index is i as a JSON field: null for −1.
func index(i int) *int {
	if i < 0 {
		return nil
	}
	return &i
}

// writeErrorJSON writes err, whose message is msg, as one line
// {"error": {...}} to w.
func writeErrorJSON(w io.Writer, err error, msg string) {
	b, jerr := json.Marshal(map[string]errorObject{"error": newErrorObject(err, msg)})
	if jerr != nil {
		return // cannot happen: every field marshals
	}
	fmt.Fprintf(w, "%s\n", b)
}
