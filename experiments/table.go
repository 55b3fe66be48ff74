package experiments

import (
	"fmt"
	"slices"

	"github.com/tempora-dev/tempora/builtins"
	"github.com/tempora-dev/tempora/method"
)

// Table returns the table of the built-in methods (builtins.Methods)
// followed by extra. Beside method.NewTable's checks, an extra parameter
// must not be named like a problem parameter of the grid suite
// (ProblemParams), since both are grid axes.
func Table(extra ...method.Method) (*method.Table, error) {
	for _, m := range extra {
		for _, p := range m.Params {
			if slices.ContainsFunc(ProblemParams, func(g GridParam) bool { return g.Name == p.Name }) {
				return nil, fmt.Errorf("experiments: method %s: parameter %s is a problem parameter of the grid suite", m.Name, p.Name)
			}
		}
	}
	t, err := method.NewTable(append(builtins.Methods(), extra...)...)
	if err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	return t, nil
}
