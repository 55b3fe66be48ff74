package main

import (
	"fmt"
	"slices"
	"strings"
)

// Package is the part of `go list -json` output that the check needs.
type Package struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// Violation is one import that breaks the rules.
type Violation struct {
	Package string // importing package
	Kind    string // "", "test" or "external test"
	Import  string // offending import path
	Reason  string
}

func (v Violation) String() string {
	if v.Import == "" {
		return fmt.Sprintf("importcheck: %s: %s", v.Package, v.Reason)
	}
	from := v.Package
	if v.Kind != "" {
		from += " (" + v.Kind + ")"
	}
	return fmt.Sprintf("importcheck: %s imports %s: %s", from, v.Import, v.Reason)
}

// Groups of packages. A package belongs to the group of its top-level
// directory under the module (subpackages share their parent's rule).
const (
	groupRoot     = "root"
	groupInternal = "internal"
	groupCmd      = "cmd"
	groupExamples = "examples"
	groupCLI      = "cli"
)

// allowed lists, for each group, the groups whose packages it may import.
// groupCmd, groupCLI (the command line as a library) and groupExamples
// (programs) may import everything and are not
// listed. Packages of a group may
// always import other packages of the same group, and tests may import the
// package they test.
var allowed = map[string][]string{
	groupRoot:     {groupInternal},
	groupInternal: {groupRoot, groupInternal},
	// synth's model offers the held-data capability (resident.Model),
	// which the benchmark passes explicitly (docs/decisions.md, decision 28).
	"synth":  {groupRoot, "dataio", "resident", groupInternal},
	"dataio": {groupRoot, groupInternal},
	// resident is the vocabulary of a model that holds its data (blocks,
	// the capability, the explainers that use it): transport, beside the
	// root package and nothing else.
	"resident":  {groupRoot, groupInternal},
	"explain":   {groupRoot, "resident", groupInternal},
	"baselines": {groupRoot, "explain", "method", "resident", groupInternal},
	// builtins wraps the explainers in method values; its tests run the
	// explainer contract (explainertest).
	"builtins":    {groupRoot, "explain", "baselines", "method", "explainertest", "resident", groupInternal},
	"experiments": {groupRoot, "synth", "explain", "baselines", "builtins", "record", "dataio", "method", "metrics", "explainertest", "resident", groupInternal},
	"results":     {groupRoot, "record", "dataio", "method", groupInternal},
	"record":      {groupRoot, groupInternal},
	"procmodel":   {groupRoot, "dataio", "resident", groupInternal},
	// method is what a new explainer needs beside the root package, so it
	// imports nothing else but the held data vocabulary (MeasureHeld): an
	// explainer that uses it sees no ground truth.
	"method":        {groupRoot, "resident", groupInternal},
	"metrics":       {groupRoot, "record", "method", groupInternal},
	"explainertest": {groupRoot, "method", groupInternal},
}

// group returns the group of a project package path, and false for a path
// outside the module.
func group(module, path string) (string, bool) {
	if path == module {
		return groupRoot, true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return "", false
	}
	top, _, _ := strings.Cut(rest, "/")
	return top, true
}

// describe renders a group for messages.
func describe(g string) string {
	switch g {
	case groupRoot:
		return "the root package"
	case groupInternal:
		return "internal/..."
	}
	return g
}

// check returns the violations of the import rules among pkgs, in the order
// of pkgs and of their import lists.
func check(module string, pkgs []Package) []Violation {
	var vs []Violation
	for _, p := range pkgs {
		g, ok := group(module, p.ImportPath)
		if !ok {
			continue
		}
		if g == groupCmd || g == groupExamples || g == groupCLI {
			continue // commands and example programs are wiring and may import everything
		}
		rule, known := allowed[g]
		if !known {
			vs = append(vs, Violation{Package: p.ImportPath, Reason: fmt.Sprintf("package group %q has no import rule; add one to internal/tools/importcheck/rules.go and docs/decisions.md", g)})
			continue
		}
		for _, list := range []struct {
			kind    string
			imports []string
		}{{"", p.Imports}, {"test", p.TestImports}, {"external test", p.XTestImports}} {
			for _, imp := range list.imports {
				ig, ok := group(module, imp)
				if !ok || ig == g || imp == p.ImportPath || slices.Contains(rule, ig) {
					continue
				}
				vs = append(vs, Violation{Package: p.ImportPath, Kind: list.kind, Import: imp, Reason: reason(g, rule)})
			}
		}
	}
	return vs
}

func reason(g string, rule []string) string {
	names := make([]string, len(rule))
	for i, r := range rule {
		names[i] = describe(r)
	}
	return fmt.Sprintf("%s may import only %s of this module", describe(g), strings.Join(names, ", "))
}
