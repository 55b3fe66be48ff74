package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tempora-dev/tempora/method"
)

const methodsHelpText = `
Methods lists the explanation methods that "tempora explain -method" and
"tempora run -methods" take, each with its parameter flags; "tempora methods
NAME" describes the parameters of the method NAME (matched without regard to
case): their flags of "tempora explain" (and axes of "tempora run -grid"),
types, defaults, valid ranges and meanings.

With -json it prints the method table as one JSON object instead (schema
%d): each method's name, description, the method it reuses a run of
("from"), whether its explanations carry tests, how the benchmark selects
its cells ("mode"), whether it gives per-instance attributions ("local"),
and its parameters (name, kind, default, quick-scale default or null, valid
range or "", description; durations in seconds), followed by the flags of
"tempora explain" that are not method parameters ("flags").`

// methodColumn is the width of the column of method names in the lists
// of methods: the longest name of the table, and at least 9.
func (p *program) methodColumn() int {
	width := 9
	for _, name := range p.table.Names() {
		width = max(width, len(name)+1)
	}
	return width
}

// methodList lists the table's methods, one line each (wrapped when the
// description is long): what "tempora explain -h" shows.
func (p *program) methodList() string {
	var b strings.Builder
	b.WriteString("Methods (-method NAME; \"tempora methods NAME\" lists a method's parameters):\n")
	for _, m := range p.table.Methods() {
		twoColumns(&b, m.Name, m.Doc, p.methodColumn())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// methodsHelp lists the table's methods, each with the flags of its
// parameters: what "tempora methods" and "tempora run -list" show.
func (p *program) methodsHelp() string {
	width := p.methodColumn()
	indent := strings.Repeat(" ", width+3)
	var b strings.Builder
	b.WriteString("Methods and their parameter flags (\"tempora methods NAME\" describes a method's parameters):\n")
	for _, m := range p.table.Methods() {
		twoColumns(&b, m.Name, m.Doc, width)
		if m.From != nil {
			fmt.Fprintf(&b, "%s(runs %s, with its parameters)\n", indent, m.From.Name)
			continue
		}
		var flags []string
		for _, par := range m.Params {
			flags = append(flags, "-"+par.Name)
		}
		if len(flags) == 0 {
			flags = []string{"(no parameters)"}
		}
		b.WriteString(wrap(strings.Join(flags, " "), indent, indent, helpWidth) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// methodHelp describes one method and its parameters, each with its flag,
// type, default (and quick-scale default), valid range and description:
// what "tempora methods NAME" shows. A method made from another's run
// shows that method's parameters.
func (p *program) methodHelp(m *method.Method) string {
	var b strings.Builder
	b.WriteString(wrap(m.Name+": "+m.Doc, "", "", helpWidth) + "\n\n")
	about := "Its explanations carry scores only"
	if m.Tests {
		about = "Its explanations carry per-feature tests (p-values, windows, orderings)"
	}
	about += fmt.Sprintf("; the benchmark scores their %s cells.", modeCells(m.Mode))
	if m.Local {
		about += " It gives per-instance attributions (\"tempora explain -attributions\"), which the benchmark scores against each instance's truth."
	}
	params := m.Params
	if m.From != nil {
		about = fmt.Sprintf("It is scored from a run of %s and takes its parameters. ", m.From.Name) + about
		params = m.From.Params
	}
	b.WriteString(wrap(about, "", "", helpWidth) + "\n")
	if len(params) == 0 {
		b.WriteString("\nIt has no parameters.")
		return b.String()
	}
	b.WriteString("\nParameters (flags of \"tempora explain -method " + m.Name + "\", axes of \"tempora run -grid\"):\n")
	var old []method.Param
	for _, par := range params {
		if par.Deprecated != "" {
			old = append(old, par)
			continue
		}
		writeParam(&b, &par)
	}
	if len(old) > 0 {
		b.WriteString("Deprecated spellings, still accepted:\n")
		for _, par := range old {
			writeParam(&b, &par)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeParam writes a parameter's line (flag, type, default, range) and
// its description, as "tempora methods NAME" shows them.
func writeParam(b *strings.Builder, par *method.Param) {
	head := fmt.Sprintf("  -%s %s (default %s", par.Name, par.Kind(), formatDefault(par, "; at quick scale "))
	if par.Range != "" {
		head += "; in " + par.Range
	}
	b.WriteString(head + ")\n")
	b.WriteString(wrap(par.Doc, "        ", "        ", helpWidth) + "\n")
}

// modeCells says which cells the benchmark scores under a mode.
func modeCells(m method.Mode) string {
	if m == method.TopN {
		return "top n"
	}
	return "non-zero"
}

// formatDefault returns a parameter's default as text ("" for the empty
// string), followed by quick and its quick-scale default if it has one.
func formatDefault(par *method.Param, quick string) string {
	def := method.Format(par.Default)
	if def == "" {
		def = `""`
	}
	if par.Quick != nil {
		def += quick + method.Format(par.Quick)
	}
	return def
}

// methodsJSON is the output of "tempora methods -json", the contract with
// the Python package (python/): field order is key order.
type methodsJSON struct {
	Schema  int          `json:"schema"`
	Methods []methodJSON `json:"methods"`
	Flags   []flagJSON   `json:"flags"`
}

// methodsSchema is the "schema" of methodsJSON; it changes when a field
// changes meaning or goes away.
const methodsSchema = 1

type methodJSON struct {
	Name   string      `json:"name"`
	Doc    string      `json:"doc"`
	From   string      `json:"from"`
	Tests  bool        `json:"tests"`
	Mode   string      `json:"mode"`
	Local  bool        `json:"local"`
	Params []paramJSON `json:"params"`
}

type paramJSON struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Default any    `json:"default"`
	Quick   any    `json:"quick"`
	Range   string `json:"range"`
	Doc     string `json:"doc"`
}

type flagJSON struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Default any    `json:"default"`
	Doc     string `json:"doc"`
}

// jsonValue returns a parameter or flag value as JSON shows it: a
// duration in seconds, anything else as it is.
func jsonValue(v any) any {
	if d, ok := v.(time.Duration); ok {
		return d.Seconds()
	}
	return v
}

// methodsTable returns the method table and explain's own flags as
// "tempora methods -json" prints them.
func (p *program) methodsTable() (*methodsJSON, error) {
	out := &methodsJSON{Schema: methodsSchema, Methods: []methodJSON{}, Flags: []flagJSON{}}
	for _, m := range p.table.Methods() {
		mj := methodJSON{Name: m.Name, Doc: m.Doc, Tests: m.Tests, Mode: m.Mode.String(), Local: m.Local, Params: []paramJSON{}}
		if m.From != nil {
			mj.From = m.From.Name
		}
		for _, par := range m.Params {
			pj := paramJSON{Name: par.Name, Kind: par.Kind().String(), Default: jsonValue(par.Default), Range: par.Range, Doc: par.Doc}
			if par.Quick != nil {
				pj.Quick = jsonValue(par.Quick)
			}
			mj.Params = append(mj.Params, pj)
		}
		out.Methods = append(out.Methods, mj)
	}
	var err error
	explainOwnFlags(p.table.Names()).VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok {
			err = fmt.Errorf("methods: explain's flag -%s has no value to report", f.Name)
			return
		}
		v := g.Get()
		kind, ok := flagKind(v)
		if !ok {
			err = fmt.Errorf("methods: explain's flag -%s is a %T", f.Name, v)
			return
		}
		_, usage := flag.UnquoteUsage(f)
		out.Flags = append(out.Flags, flagJSON{Name: f.Name, Kind: kind.String(), Default: jsonValue(v), Doc: usage})
	})
	return out, err
}

// flagKind returns the parameter kind of a flag's value.
func flagKind(v any) (method.Kind, bool) {
	switch v.(type) {
	case int, uint64:
		return method.Int, true
	case float64:
		return method.Float, true
	case bool:
		return method.Bool, true
	case time.Duration:
		return method.Duration, true
	case string:
		return method.String, true
	}
	return method.Invalid, false
}

// methods lists the method table, as text or JSON.
func (p *program) methods(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("methods", fmt.Sprintf(methodsHelpText, methodsSchema), stdout)
	asJSON := fs.Bool("json", false, "print the method table and explain's own flags as JSON")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	switch {
	case fs.NArg() > 1:
		return usageErrorf("methods: unexpected argument %q (see tempora methods -h)", fs.Arg(1))
	case fs.NArg() == 1 && *asJSON:
		return usageErrorf("methods: -json prints the whole table; give no method name")
	case fs.NArg() == 1:
		m, err := p.table.Lookup(fs.Arg(0))
		if err != nil {
			return usageErrorf("methods: unknown method %q (want %s)", fs.Arg(0), strings.Join(p.table.Names(), ", "))
		}
		_, err = fmt.Fprintln(stdout, p.methodHelp(m))
		return err
	case !*asJSON:
		_, err := fmt.Fprintln(stdout, p.methodsHelp())
		return err
	}
	t, err := p.methodsTable()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}
