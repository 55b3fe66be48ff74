// Command importcheck enforces tempora's import rules (see
// docs/decisions.md and the layout in README.md): which of the module's own
// packages each package, and its tests, may import.
//
// Usage, from the module root:
//
//	go run ./internal/tools/importcheck
//
// It lists every package of the module with `go list -e -json`, checks the
// project imports of each package, of its in-package tests and of its
// external (_test package) tests, prints one line per violation and exits
// with status 1 if there is any. Imports from the standard library and from
// other modules are not restricted.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	if err := run(os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(stdout, stderr io.Writer) error {
	module, err := goList("-m")
	if err != nil {
		return err
	}
	out, err := goList("-e", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	if err != nil {
		return err
	}
	pkgs, err := decodePackages(bytes.NewReader(out))
	if err != nil {
		return err
	}
	vs := check(strings.TrimSpace(string(module)), pkgs)
	for _, v := range vs {
		fmt.Fprintln(stderr, v)
	}
	if len(vs) > 0 {
		return fmt.Errorf("importcheck: %d import rule violation(s)", len(vs))
	}
	fmt.Fprintf(stdout, "importcheck: %d packages follow the import rules\n", len(pkgs))
	return nil
}

func goList(args ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("importcheck: go list %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// decodePackages reads the stream of JSON objects printed by go list -json.
func decodePackages(r io.Reader) ([]Package, error) {
	var pkgs []Package
	dec := json.NewDecoder(r)
	for {
		var p Package
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return pkgs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("importcheck: decoding go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}
