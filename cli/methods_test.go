package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// The markers around README.md's table of methods.
const (
	methodsBegin = "<!-- methods:begin -->"
	methodsEnd   = "<!-- methods:end -->"
)

// readmeMethods returns README.md's table of the methods of t.
func readmeMethods(t *method.Table) string {
	var b strings.Builder
	b.WriteString("| method | what it does | parameters (default; at quick scale) |\n| --- | --- | --- |\n")
	for _, m := range t.Methods() {
		var ps []string
		for _, par := range m.Params {
			if par.Deprecated == "" {
				ps = append(ps, "`-"+par.Name+"` "+formatDefault(&par, "; "))
			}
		}
		params := strings.Join(ps, ", ")
		if m.From != nil {
			params = m.From.Name + "'s (one run serves both)"
		}
		b.WriteString("| `" + m.Name + "` | " + mdCell(m.Doc) + " | " + mdCell(params) + " |\n")
	}
	return b.String()
}

// TestREADMEMethods checks that README.md's table of methods, between
// methodsBegin and methodsEnd, is the one the built-in method table
// generates; -update rewrites it.
func TestREADMEMethods(t *testing.T) {
	doc, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newProgram(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := replaceSection(t, doc, methodsBegin, methodsEnd, readmeMethods(p.table))
	if bytes.Equal(doc, want) {
		return
	}
	if !*update {
		t.Fatalf("README.md's table of methods is out of date; run go test ./cli -run TestREADMEMethods -update")
	}
	if err := os.WriteFile(readmePath, want, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMethods checks "tempora methods": the text lists every method and
// its parameter flags, "tempora explain -h" lists the methods, a bad
// method name is a usage error, and the JSON (testdata/methods.json) follows the
// contract with the Python package: every method of the table with its own
// parameters ([] for a method made from another), durations in seconds,
// null for no quick-scale default, and explain's own flags, none of which
// is a method parameter.
func TestMethods(t *testing.T) {
	text := mustRun(t, "methods")
	help := mustRun(t, "explain", "-h")
	p0, err := newProgram(nil)
	if err != nil {
		t.Fatal(err)
	}
	if list := p0.methodList(); !strings.Contains(help, list) {
		t.Errorf("tempora explain -h does not list the methods:\n%s", list)
	}
	for _, m := range p0.table.Methods() {
		if !strings.Contains(text, "\n  "+m.Name+" ") {
			t.Errorf("tempora methods does not list %s:\n%s", m.Name, text)
		}
		for _, par := range m.Params {
			if !strings.Contains(text, " -"+par.Name+"\n") && !strings.Contains(text, " -"+par.Name+" ") {
				t.Errorf("tempora methods does not list %s's parameter -%s", m.Name, par.Name)
			}
		}
	}
	for _, args := range [][]string{{"methods", "nosuch"}, {"methods", "-json", "TIME"}, {"methods", "TIME", "LIME"}} {
		if _, _, err := runCmd(t, args...); exitStatus(err) != 2 {
			t.Errorf("tempora %s: error %v, want a usage error", strings.Join(args, " "), err)
		}
	}
	out := mustRun(t, "methods", "-json")
	golden(t, "methods.json", out)

	var got struct {
		Schema  int `json:"schema"`
		Methods []struct {
			Name, From string
			Params     []struct {
				Name, Kind     string
				Default, Quick any
			}
		}
		Flags []struct{ Name, Kind string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	p, err := newProgram(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != methodsSchema || len(got.Methods) != len(p.table.Methods()) {
		t.Fatalf("schema %d with %d methods, want %d with %d", got.Schema, len(got.Methods), methodsSchema, len(p.table.Methods()))
	}
	for i, m := range p.table.Methods() {
		g := got.Methods[i]
		if g.Name != m.Name || (m.From == nil) != (g.From == "") || len(g.Params) != len(m.Params) {
			t.Errorf("method %d: %s from %q with %d params, want %s with %d", i, g.Name, g.From, len(g.Params), m.Name, len(m.Params))
			continue
		}
		for k, par := range m.Params {
			gp := g.Params[k]
			if gp.Name != par.Name || gp.Kind != par.Kind().String() || (gp.Quick == nil) != (par.Quick == nil) {
				t.Errorf("%s: param %+v, want %s (%s)", m.Name, gp, par.Name, par.Kind())
			}
			if par.Kind() == method.Duration && gp.Default != par.Default.(interface{ Seconds() float64 }).Seconds() {
				t.Errorf("%s -%s: default %v, want seconds", m.Name, par.Name, gp.Default)
			}
		}
	}
	own := explainOwnFlags(p.table.Names())
	n := 0
	own.VisitAll(func(*flag.Flag) { n++ })
	if len(got.Flags) != n || n == 0 {
		t.Errorf("%d flags, want explain's %d own flags", len(got.Flags), n)
	}
	for _, f := range got.Flags {
		for _, tp := range p.table.Params() {
			if tp.Name == f.Name {
				t.Errorf("flag -%s is a method parameter", f.Name)
			}
		}
	}
}

// TestParamUsagePerMethod checks that a parameter name with different
// meanings shows each method's own description in "tempora methods NAME":
// TIME's -alpha is its FDR level, PERM's the level of PERM-f's filter, an
// extra method's its own.
func TestParamUsagePerMethod(t *testing.T) {
	newer := func(method.Config) (tempora.Explainer, error) { return nil, nil }
	p, err := newProgram([]method.Method{{Name: "X", New: newer, Params: []method.Param{{Name: "alpha", Doc: "X's own alpha", Default: 0.5}}}})
	if err != nil {
		t.Fatal(err)
	}
	timeM, _ := p.table.Lookup("TIME")
	perm, _ := p.table.Lookup("PERM")
	timeDoc, permDoc := timeM.Param("alpha").Doc, perm.Param("alpha").Doc
	if timeDoc == permDoc {
		t.Fatalf("TIME and PERM describe -alpha alike: %q", timeDoc)
	}
	for _, c := range []struct{ method, doc string }{
		{"TIME", timeDoc}, {"TIME-n", timeDoc}, {"PERM", permDoc}, {"PERM-f", permDoc}, {"X", "X's own alpha"},
	} {
		var out bytes.Buffer
		if err := p.runContext(t.Context(), []string{"methods", c.method}, &out, &out); err != nil {
			t.Fatal(err)
		}
		help := strings.Join(strings.Fields(out.String()), " ")
		if !strings.Contains(help, "-alpha float (default ") || !strings.Contains(help, ") "+c.doc) {
			t.Errorf("tempora methods %s does not describe -alpha as %q:\n%s", c.method, c.doc, out.String())
		}
		for _, other := range []string{timeDoc, permDoc, "X's own alpha"} {
			if other != c.doc && strings.Contains(help, other) {
				t.Errorf("tempora methods %s shows another method's -alpha: %q", c.method, other)
			}
		}
	}
}

// TestHelpLayout checks the help of "tempora explain" and "tempora methods
// NAME": every line at most helpWidth characters (but explain's synopsis
// and example command, which are printed as they are), both under 80 lines,
// and explain's help lists every method but none of their parameters,
// which "tempora methods NAME" lists instead, each with its type, default
// and range as the table has them.
func TestHelpLayout(t *testing.T) {
	p, err := newProgram(nil)
	if err != nil {
		t.Fatal(err)
	}
	show := func(args ...string) []string {
		var out bytes.Buffer
		if err := p.runContext(t.Context(), args, &out, &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) >= 80 {
			t.Errorf("tempora %s: %d lines, want under 80", strings.Join(args, " "), len(lines))
		}
		for _, l := range lines {
			if utf8.RuneCountInString(l) > helpWidth && !strings.HasPrefix(l, "Usage: ") && !strings.HasPrefix(l, "\t") {
				t.Errorf("tempora %s: line of %d characters: %s", strings.Join(args, " "), utf8.RuneCountInString(l), l)
			}
		}
		return lines
	}
	explainHelp := strings.Join(show("explain", "-h"), "\n")
	show("methods")
	for _, m := range p.table.Methods() {
		if !strings.Contains(explainHelp, "\n  "+m.Name+" ") {
			t.Errorf("explain -h does not list %s", m.Name)
		}
		for _, par := range m.Params {
			if strings.Contains(explainHelp, "\n  -"+par.Name+" ") {
				t.Errorf("explain -h lists the parameter -%s of %s", par.Name, m.Name)
			}
		}
		help := strings.Join(show("methods", m.Name), "\n")
		params := m.Params
		if m.From != nil {
			params = m.From.Params
		}
		for _, par := range params {
			head := fmt.Sprintf("\n  -%s %s (default %s", par.Name, par.Kind(), formatDefault(&par, "; at quick scale "))
			if par.Range != "" {
				head += "; in " + par.Range
			}
			if !strings.Contains(help, head+")\n") {
				t.Errorf("tempora methods %s lacks the line %q", m.Name, head[1:]+")")
			}
		}
	}
}
