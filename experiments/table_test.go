package experiments

import (
	"context"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
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

func TestTable(t *testing.T) {
	table, err := Table()
	if err != nil {
		t.Fatal(err)
	}
	// The paper's methods come first, in its order, then the others.
	if got := table.Names(); len(got) < len(paperMethods) || strings.Join(got[:len(paperMethods)], ",") != strings.Join(paperMethods, ",") {
		t.Errorf("built-in names %s, want the paper's order %v first", strings.Join(got, ","), paperMethods)
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
}
