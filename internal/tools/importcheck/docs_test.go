package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docGroup turns a package as docs/decisions.md writes it ("`synth`",
// "root", "`tempora` (root)", "`internal/...`") into its group.
func docGroup(s string) string {
	s = strings.TrimSpace(s)
	if s == "root" || strings.HasSuffix(s, "(root)") {
		return groupRoot
	}
	return strings.TrimSuffix(strings.Trim(s, "`"), "/...")
}

// TestDecisionsTable checks that the import rules of docs/decisions.md
// (section "Layout and import rules") are the rules the check enforces:
// the same packages, each allowed the same others, and "everything" for
// exactly the groups without a rule.
func TestDecisionsTable(t *testing.T) {
	b, err := os.ReadFile("../../../docs/decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "| package | may import (of this module) |\n| --- | --- |\n")
	if !ok {
		t.Fatal("docs/decisions.md has no table of import rules")
	}
	row := regexp.MustCompile(`^\| (.+) \| (.+) \|$`)
	doc := map[string][]string{}
	var everything []string
	for _, l := range strings.Split(section, "\n") {
		m := row.FindStringSubmatch(l)
		if m == nil {
			break
		}
		for _, pkg := range strings.Split(m[1], ",") {
			g := docGroup(pkg)
			if m[2] == "everything" {
				everything = append(everything, g)
				continue
			}
			var may []string
			for _, imp := range strings.Split(m[2], ",") {
				may = append(may, docGroup(imp))
			}
			doc[g] = may
		}
	}
	for g, want := range allowed {
		got, ok := doc[g]
		if !ok {
			t.Errorf("docs/decisions.md has no import rule for %s", g)
			continue
		}
		if !sameSet(got, want) {
			t.Errorf("docs/decisions.md: %s may import %v; rules.go says %v", g, got, want)
		}
	}
	for g := range doc {
		if _, ok := allowed[g]; !ok {
			t.Errorf("docs/decisions.md has a rule for %s, which rules.go does not know", g)
		}
	}
	if want := []string{groupCLI, groupCmd, groupExamples}; !sameSet(everything, want) {
		t.Errorf("docs/decisions.md lets %v import everything, rules.go %v", everything, want)
	}
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
