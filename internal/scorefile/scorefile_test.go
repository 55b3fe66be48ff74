package scorefile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestRead reads one 2 × 3 score matrix in each format, with a tool's
// accounting, and refuses malformed files naming them.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := []float64{0, 1, 2, 3, 4, 5}
	for _, p := range []string{
		write("m.json", "[[0, 1, 2], [3, 4, 5]]"),
		write("m.csv", "# a comment\n0,1,2\n\n3, 4, 5\n"),
		write("o.json", `{"cells": [[0, 1, 2], [3, 4, 5]], "accounting": {"runtime_seconds": 1.5, "model_calls": 5, "instance_evaluations": 50}}`),
	} {
		e, err := Read(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if e.D != 2 || e.L != 3 || !slices.Equal(e.Cells, want) || len(e.Features) != 0 {
			t.Errorf("%s: read %+v", p, e)
		}
		if strings.HasPrefix(filepath.Base(p), "o") {
			if a := e.Accounting; a.Runtime.Seconds() != 1.5 || a.ModelCalls != 5 || a.InstanceEvals != 50 {
				t.Errorf("%s: accounting %+v", p, a)
			}
		}
	}
	for name, p := range map[string]string{
		"ragged":       write("r.csv", "1,2\n1\n"),
		"not a number": write("x.csv", "1,x\n"),
		"empty":        write("e.csv", "# nothing\n"),
		"no cells":     write("n.json", `{"scores": [[1]]}`),
		"infinite":     write("i.json", "[[1e999]]"),
		"bad cost":     write("c.json", `{"cells": [[1]], "accounting": {"model_calls": -1}}`),
		"missing":      filepath.Join(dir, "absent.csv"),
	} {
		if _, err := Read(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s", name, err, p)
		}
	}
}

// TestGlobalCells averages the attributions' magnitudes over instances.
func TestGlobalCells(t *testing.T) {
	a := tempora.NewTensor(2, 1, 2)
	copy(a.Data, []float64{1, -2, -3, 0})
	e := GlobalCells(a)
	if e.D != 1 || e.L != 2 || !slices.Equal(e.Cells, []float64{2, 1}) || HasTests(e) {
		t.Errorf("global cells %+v", e)
	}
}
