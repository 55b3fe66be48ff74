package main

import (
	"slices"
	"strings"
	"testing"
)

func TestGroup(t *testing.T) {
	for _, tc := range []struct {
		path  string
		group string
		ok    bool
	}{
		{"tempora", groupRoot, true},
		{"tempora/synth", "synth", true},
		{"tempora/explain/internal/perm", "explain", true},
		{"tempora/internal/npy", groupInternal, true},
		{"tempora/cmd/tempora", groupCmd, true},
		{"temporal/x", "", false}, // a prefix of the module path is not the module
		{"gonum.org/v1/gonum/stat", "", false},
		{"fmt", "", false},
	} {
		g, ok := group("tempora", tc.path)
		if g != tc.group || ok != tc.ok {
			t.Errorf("group(%q) = %q, %v; want %q, %v", tc.path, g, ok, tc.group, tc.ok)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		pkg  Package
		want []string // offending imports, "kind:path"
	}{
		{"root may import internal and the standard library",
			Package{ImportPath: "tempora", Imports: []string{"fmt", "tempora/internal/npy"}}, nil},
		{"root must not import synth",
			Package{ImportPath: "tempora", Imports: []string{"tempora/synth"}}, []string{":tempora/synth"}},
		{"root's external tests may import root",
			Package{ImportPath: "tempora", XTestImports: []string{"tempora"}}, nil},
		{"synth may import root, internal and other modules",
			Package{ImportPath: "tempora/synth", Imports: []string{"tempora", "tempora/internal/seed", "gonum.org/v1/gonum/stat"}}, nil},
		{"synth must not import explain",
			Package{ImportPath: "tempora/synth", Imports: []string{"tempora/explain"}}, []string{":tempora/explain"}},
		{"explain must not import synth, not even in tests",
			Package{ImportPath: "tempora/explain", Imports: []string{"tempora"}, TestImports: []string{"tempora/synth"}, XTestImports: []string{"tempora/explain", "tempora/synth"}},
			[]string{"test:tempora/synth", "external test:tempora/synth"}},
		{"explain must not import baselines",
			Package{ImportPath: "tempora/explain", Imports: []string{"tempora/baselines"}}, []string{":tempora/baselines"}},
		{"baselines may import explain",
			Package{ImportPath: "tempora/baselines", Imports: []string{"tempora", "tempora/explain", "tempora/internal/bh"}}, nil},
		{"baselines must not import synth or experiments",
			Package{ImportPath: "tempora/baselines", Imports: []string{"tempora/synth", "tempora/experiments"}}, []string{":tempora/synth", ":tempora/experiments"}},
		{"experiments may join everything but results and cmd",
			Package{ImportPath: "tempora/experiments", Imports: []string{"tempora", "tempora/synth", "tempora/explain", "tempora/baselines", "tempora/internal/x"}}, nil},
		{"experiments must not import results",
			Package{ImportPath: "tempora/experiments", Imports: []string{"tempora/results"}}, []string{":tempora/results"}},
		{"results must not import experiments",
			Package{ImportPath: "tempora/results", Imports: []string{"tempora", "tempora/experiments"}}, []string{":tempora/experiments"}},
		{"procmodel may import root and internal only",
			Package{ImportPath: "tempora/procmodel", Imports: []string{"tempora", "tempora/internal/x", "tempora/explain"}}, []string{":tempora/explain"}},
		{"subpackages share their parent's rule",
			Package{ImportPath: "tempora/synth/markov", Imports: []string{"tempora/synth", "tempora/baselines"}}, []string{":tempora/baselines"}},
		{"internal must not import public packages other than root",
			Package{ImportPath: "tempora/internal/testutil", Imports: []string{"tempora", "tempora/internal/npy", "tempora/synth"}}, []string{":tempora/synth"}},
		{"the command may import everything",
			Package{ImportPath: "tempora/cmd/tempora", Imports: []string{"tempora", "tempora/synth", "tempora/explain", "tempora/baselines", "tempora/experiments", "tempora/results", "tempora/procmodel"}}, nil},
		{"packages outside the module are ignored",
			Package{ImportPath: "example.com/other", Imports: []string{"tempora/synth"}}, nil},
		{"method, what a new explainer imports, sees nothing but the root package",
			Package{ImportPath: "tempora/method", Imports: []string{"tempora", "tempora/metrics", "tempora/record", "tempora/synth"}},
			[]string{":tempora/metrics", ":tempora/record", ":tempora/synth"}},
		{"the contract test kit must not import synth",
			Package{ImportPath: "tempora/explainertest", Imports: []string{"tempora", "tempora/method", "tempora/synth"}}, []string{":tempora/synth"}},
		{"baselines may use method's building blocks",
			Package{ImportPath: "tempora/baselines", Imports: []string{"tempora", "tempora/method"}}, nil},
		{"a new top-level package needs a rule",
			Package{ImportPath: "tempora/newpkg", Imports: []string{"fmt"}}, []string{":"}},
		{"example programs may import everything",
			Package{ImportPath: "tempora/examples/gomodel", Imports: []string{"tempora", "tempora/procmodel", "tempora/internal/examplemodel", "tempora/synth"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range check("tempora", []Package{tc.pkg}) {
				got = append(got, v.Kind+":"+v.Import)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestViolationMessage(t *testing.T) {
	vs := check("tempora", []Package{{ImportPath: "tempora/explain", XTestImports: []string{"tempora/synth"}}})
	if len(vs) != 1 {
		t.Fatalf("got %d violations, want 1", len(vs))
	}
	const want = "importcheck: tempora/explain (external test) imports tempora/synth: explain may import only the root package, resident, internal/... of this module"
	if got := vs[0].String(); got != want {
		t.Errorf("message\n got %q\nwant %q", got, want)
	}
}

func TestDecodePackages(t *testing.T) {
	const stream = `{"ImportPath": "tempora", "Imports": ["fmt"]}
{"ImportPath": "tempora/synth", "Imports": ["tempora"], "XTestImports": ["tempora/synth"]}`
	pkgs, err := decodePackages(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 2 || pkgs[1].ImportPath != "tempora/synth" || !slices.Equal(pkgs[1].XTestImports, []string{"tempora/synth"}) {
		t.Errorf("decoded %+v", pkgs)
	}
	if _, err := decodePackages(strings.NewReader(`{"ImportPath": `)); err == nil {
		t.Error("truncated stream: no error")
	}
}

func TestUnknownGroupMessage(t *testing.T) {
	vs := check("tempora", []Package{{ImportPath: "tempora/newpkg"}})
	const want = `importcheck: tempora/newpkg: package group "newpkg" has no import rule; add one to internal/tools/importcheck/rules.go and docs/decisions.md`
	if len(vs) != 1 || vs[0].String() != want {
		t.Errorf("got %v, want %q", vs, want)
	}
}
