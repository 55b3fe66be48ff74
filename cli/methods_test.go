package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

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
			ps = append(ps, "`-"+par.Name+"` "+formatDefault(&par, "; "))
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

// TestMethods checks "tempora methods": the text is the method list of
// "tempora explain -h", and the JSON (testdata/methods.json) follows the
// contract with the Python package: every method of the table with its own
// parameters ([] for a method made from another), durations in seconds,
// null for no quick-scale default, and explain's own flags, none of which
// is a method parameter.
func TestMethods(t *testing.T) {
	text := mustRun(t, "methods")
	help := mustRun(t, "explain", "-h")
	if !strings.Contains(help, text) {
		t.Errorf("tempora methods prints lines that tempora explain -h does not:\n%s", text)
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
// meanings shows each method's own description in explain -h: TIME's
// -alpha is its FDR level, PERM's the level of PERM-f's filter.
func TestParamUsagePerMethod(t *testing.T) {
	newer := func(method.Config) (tempora.Explainer, error) { return nil, nil }
	p, err := newProgram([]method.Method{{Name: "X", New: newer, Params: []method.Param{{Name: "alpha", Doc: "X's own alpha", Default: 0.5}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range p.table.Params() {
		if tp.Name != "alpha" {
			continue
		}
		timeM, _ := p.table.Lookup("TIME")
		perm, _ := p.table.Lookup("PERM")
		timeDoc, permDoc := timeM.Param("alpha").Doc, perm.Param("alpha").Doc
		if timeDoc == permDoc {
			t.Fatalf("TIME and PERM describe -alpha alike: %q", timeDoc)
		}
		got := paramUsage(p.table, tp)
		want := "TIME, TIME-n: " + timeDoc + "; PERM, PERM-f: " + permDoc + "; X: X's own alpha (`float` parameter of TIME, TIME-n, PERM, PERM-f, X)"
		if got != want {
			t.Errorf("-alpha usage:\n%s\nwant\n%s", got, want)
		}
	}
}
