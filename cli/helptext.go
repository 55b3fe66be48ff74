package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// helpWidth is the widest line, in characters, that the wrapped help
// texts ("tempora explain -h", "tempora methods") print.
const helpWidth = 100

// wrap breaks text into lines of at most width characters (a longer word
// keeps a line of its own): the first line starts with first, the others
// with rest. The text's own line breaks are kept as blanks.
func wrap(text, first, rest string, width int) string {
	var b strings.Builder
	line, n := first, utf8.RuneCountInString(first)
	empty := true
	for _, w := range strings.Fields(text) {
		wn := utf8.RuneCountInString(w)
		if !empty && n+1+wn > width {
			b.WriteString(line + "\n")
			line, n, empty = rest, utf8.RuneCountInString(rest), true
		}
		if !empty {
			line, n = line+" ", n+1
		}
		line, n, empty = line+w, n+wn, false
	}
	b.WriteString(line)
	return b.String()
}

// twoColumns writes name and text as help lists do: name in a column of
// the given width after two blanks, then text wrapped to helpWidth with
// its continuation lines under its start.
func twoColumns(w io.Writer, name, text string, width int) {
	first := fmt.Sprintf("  %-*s ", width, name)
	fmt.Fprintln(w, wrap(text, first, strings.Repeat(" ", utf8.RuneCountInString(first)), helpWidth))
}

// nbsp stands for a blank that wrap must not break at.
const nbsp = "\u00a0"

// printFlags writes the flags of fs as flag.PrintDefaults does (the flag
// and its argument's name on one line, the usage below it, the default
// last), with the usage wrapped to helpWidth; "(default …)" is never
// broken, so that it can be read back from the help.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		head := "  -" + f.Name
		if name != "" {
			head += " " + name
		}
		if !isZeroDefault(f) {
			def := f.DefValue
			if _, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok && isStringFlag(f) {
				def = fmt.Sprintf("%q", def)
			}
			usage += " (default" + nbsp + strings.ReplaceAll(def, " ", nbsp) + ")"
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, strings.ReplaceAll(wrap(usage, "        ", "        ", helpWidth), nbsp, " "))
	})
}

// isZeroDefault reports whether f's default is its type's zero value, which
// flag.PrintDefaults does not print.
func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s":
		return true
	}
	return false
}

// isStringFlag reports whether f holds a string, whose default help texts
// quote.
func isStringFlag(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(string)
	return ok
}
