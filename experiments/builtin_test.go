package experiments

import (
	"context"
	"testing"
)

// tinyGrid is a real synthetic problem small enough for unit tests.
const tinyGrid = "instances=60;features=3;timesteps=6;permutations=10"

// TestBuiltinWorkers runs every built-in method on tiny synthetic problems
// with 1 and 3 workers: the records must be identical (apart from runtime).
func TestBuiltinWorkers(t *testing.T) {
	var files []map[string]string
	for _, w := range []int{1, 3} {
		out := t.TempDir()
		o := Options{Suite: "grid", Grid: tinyGrid, Quick: true, Models: 2, Methods: AllMethods, Workers: w, Out: out}
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
