package experiments

import (
	"context"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explainertest"
	"github.com/tempora-dev/tempora/method"
)

// tinyGrid is a real synthetic problem small enough for unit tests.
const tinyGrid = "instances=60;features=3;timesteps=6;permutations=10"

// TestBuiltinWorkers runs every built-in method on tiny synthetic problems
// with 1 and 3 workers: the records must be identical (apart from runtime).
func TestBuiltinWorkers(t *testing.T) {
	var files []map[string]string
	for _, w := range []int{1, 3} {
		out := t.TempDir()
		o := Options{Suite: "grid", Grid: tinyGrid, Quick: true, Models: 2, Methods: paperMethods, Workers: w, Out: out}
		if err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		files = append(files, readRecordFiles(t, out))
	}
	if len(files[0]) != 2*8 {
		t.Errorf("%d records, want 16", len(files[0]))
	}
	sameFiles(t, "3 workers vs 1", files[1], files[0])
}

// contractParams keep the contract runs of the built-ins small: SAGE on the
// 15 cells of explainertest's problems would otherwise sample up to its
// quick cap of 32,768 permutations, three worker counts and two tasks
// over.
var contractParams = map[string]map[string]string{
	"SAGE":   {"max-permutations": "512"},
	"SAGE-m": {"max-permutations": "512"},
	"SAGE-z": {"max-permutations": "512"},
	"LIME":   {"samples": "200"},
}

// TestBuiltinContract runs explainertest on every built-in method.
func TestBuiltinContract(t *testing.T) {
	table, err := Table()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range table.Methods() {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			if err := explainertest.Test(m, explainertest.Options{Params: contractParams[m.Name]}); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestTable(t *testing.T) {
	table, err := Table()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(table.Names(), ","); got != strings.Join(paperMethods, ",") {
		t.Errorf("built-in names %s, want the paper's order %v", got, paperMethods)
	}
	for _, name := range []string{"time", "Sage-M", "perm-F"} {
		if _, err := table.Lookup(name); err != nil {
			t.Errorf("Lookup(%q): %v", name, err)
		}
	}
	// An extra method may not clash with a built-in name (in any case) or
	// use a problem parameter's name.
	newer := func(c method.Config) (tempora.Explainer, error) { return nil, nil }
	for _, bad := range []method.Method{
		{Name: "time", New: newer},
		{Name: "X", New: newer, Params: []method.Param{{Name: "noise", Default: 1.0}}},
		{Name: "Y", New: newer, Params: []method.Param{{Name: "alpha", Default: 1}}}, // an int alpha beside TIME's float
	} {
		if _, err := Table(bad); err == nil {
			t.Errorf("Table(%s): no error", bad.Name)
		}
	}
	// Quick-scale defaults.
	lime, _ := table.Lookup("LIME")
	v, err := lime.Values(nil, true)
	if err != nil || v.Int("samples") != QuickLIMESamples {
		t.Errorf("LIME quick samples %v (%v)", v.Describe(), err)
	}
	sagem, _ := table.Lookup("SAGE-m")
	v, _ = sagem.Values(nil, true)
	if v.Int("max-permutations") != SAGEMaxPermutations {
		t.Errorf("SAGE-m quick cap %d, want %d", v.Int("max-permutations"), SAGEMaxPermutations)
	}
}
