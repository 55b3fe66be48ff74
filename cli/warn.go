package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// warnTo returns a function that writes a warning to w as one line,
// "tempora: warning: …".
func warnTo(w io.Writer) func(string) {
	return func(msg string) { fmt.Fprintf(w, "tempora: warning: %s\n", msg) }
}

// countSets makes fs count the times each flag is set while it parses (Go's
// flag package lets a later -x override an earlier one without a word) and
// returns the function that puts the flags' values back and describes the
// first flag given more than once ("" for none).
func countSets(fs *flag.FlagSet) func() string {
	var saved []*flag.Flag
	var values []flag.Value
	var order []string
	seen := map[string][]string{}
	fs.VisitAll(func(f *flag.Flag) {
		saved, values = append(saved, f), append(values, f.Value)
		c := countedValue{Value: f.Value, set: func(s string) {
			if len(seen[f.Name]) == 1 {
				order = append(order, f.Name)
			}
			seen[f.Name] = append(seen[f.Name], s)
		}}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.Value = countedBool{c}
		} else {
			f.Value = c
		}
	})
	return func() string {
		for k, f := range saved {
			f.Value = values[k]
		}
		if len(order) == 0 {
			return ""
		}
		vals := seen[order[0]]
		return fmt.Sprintf("-%s given %d times (%s)", order[0], len(vals), strings.Join(quoteAll(vals), ", then "))
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for k, s := range ss {
		out[k] = strconv.Quote(s)
	}
	return out
}

// countedValue is a flag value that reports each Set.
type countedValue struct {
	flag.Value
	set func(string)
}

func (c countedValue) Set(s string) error {
	c.set(s)
	return c.Value.Set(s)
}

// countedBool is a countedValue of a boolean flag (-x without a value).
type countedBool struct{ countedValue }

func (countedBool) IsBoolFlag() bool { return true }
