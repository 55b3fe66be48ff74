package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tempora-dev/tempora/method"
)

const methodsHelpText = `
Methods lists the explanation methods that "tempora explain -method" and
"tempora run -methods" take, with their parameters (flags of "tempora
explain", axes of "tempora run -grid"): the lines "tempora explain -h" shows.

With -json it prints the method table as one JSON object instead (schema %d):
each method's name, description, the method it reuses a run of ("from"),
whether its explanations carry tests, how the benchmark selects its cells
("mode"), and its parameters (name, kind, default, quick-scale default or
null, valid range or "", description; durations in seconds), followed by the
flags of "tempora explain" that are not method parameters ("flags").`

// methodsHelp lists the table's methods and their parameters, each with its
// own description.
func (p *program) methodsHelp() string {
	width := 9
	for _, name := range p.table.Names() {
		width = max(width, len(name)+1)
	}
	indent := strings.Repeat(" ", width+3)
	var b strings.Builder
	b.WriteString("Methods and their parameters (flag, type and valid range, default):\n")
	for _, m := range p.table.Methods() {
		fmt.Fprintf(&b, "  %-*s %s\n", width, m.Name, m.Doc)
		if m.From != nil {
			fmt.Fprintf(&b, "%s(runs %s, with its parameters)\n", indent, m.From.Name)
			continue
		}
		for _, par := range m.Params {
			fmt.Fprintf(&b, "%s-%s: %s (%s; default %s)\n", indent, par.Name, par.Doc, par.Want(), formatDefault(&par, ", quick scale "))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
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

// paramUsage is the usage text of a method-parameter flag of "tempora
// explain": its description and kind, and the methods that take it; where
// methods describe a parameter of the same name differently (TIME's -alpha
// is its FDR level, PERM's the level of PERM-f's filter), each group of
// methods with its own description.
func paramUsage(t *method.Table, tp method.TableParam) string {
	var docs []string
	var who [][]string
	for _, name := range tp.Methods {
		m, err := t.Lookup(name)
		if err != nil {
			continue // tp.Methods come from t
		}
		d := m.Param(tp.Name).Doc
		i := slices.Index(docs, d)
		if i < 0 {
			docs, who = append(docs, d), append(who, nil)
			i = len(docs) - 1
		}
		who[i] = append(who[i], name)
	}
	doc := docs[0]
	if len(docs) > 1 {
		parts := make([]string, len(docs))
		for i, d := range docs {
			parts[i] = strings.Join(who[i], ", ") + ": " + d
		}
		doc = strings.Join(parts, "; ")
	}
	return fmt.Sprintf("%s (`%s` parameter of %s)", doc, tp.Kind(), strings.Join(tp.Methods, ", "))
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
		mj := methodJSON{Name: m.Name, Doc: m.Doc, Tests: m.Tests, Mode: m.Mode.String(), Params: []paramJSON{}}
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
	if fs.NArg() > 0 {
		return usageErrorf("methods: unexpected argument %q (see tempora methods -h)", fs.Arg(0))
	}
	if !*asJSON {
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
