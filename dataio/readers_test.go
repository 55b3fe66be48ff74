package dataio

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestReadFilesDataErrors checks what ReadFiles's errors say beyond their
// message: the kind and location of the *tempora.DataError they wrap, for
// every input a program such as the Python package writes (.npy data and
// targets, JSON names, a .npy mask), and that the message still names the
// file.
func TestReadFilesDataErrors(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	x := testTensor() // 3 × 2 × 4
	must(WriteTensorNPY(path("x.npy"), x))
	inf := x.Clone()
	inf.Set(2, 1, 3, math.Inf(-1))
	inf.Set(1, 0, 0, math.Inf(1))
	must(WriteTensorNPY(path("inf.npy"), inf))
	empty := x.Clone()
	for j := range 2 {
		for t := range 4 {
			empty.Set(1, j, t, nan)
		}
	}
	must(WriteTensorNPY(path("empty.npy"), empty))
	must(WriteVectorNPY(path("y.npy"), []float64{0, 1, 1}))
	must(WriteVectorNPY(path("y2.npy"), []float64{0, 1}))
	must(WriteVectorNPY(path("ynan.npy"), []float64{0, nan, math.Inf(1)}))
	must(WriteVectorNPY(path("y05.npy"), []float64{0, 1, 0.5}))
	must(os.WriteFile(path("names.json"), []byte(`["a", "b"]`), 0o644))
	must(os.WriteFile(path("names3.json"), []byte(`["a", "b", "c"]`), 0o644))
	must(os.WriteFile(path("dup.json"), []byte(`["a", "a"]`), 0o644))
	must(os.WriteFile(path("blank.json"), []byte(`["a", " b"]`), 0o644))
	must(os.WriteFile(path("mask.npy"), boolNPY("(3, 2, 3)", make([]bool, 18)), 0o644))
	must(os.WriteFile(path("mask05.npy"), npyFile("<f8", false, "(3, 2, 4)", func() []float64 {
		m := make([]float64, 24)
		for k := range m {
			m[k] = 1
		}
		m[13] = 0.5 // instance 1, feature 1, timestep 1
		return m
	}()), 0o644))
	must(os.WriteFile(path("rank2.npy"), npyFile("<f8", false, "(3, 8)", make([]float64, 24)), 0o644))

	for _, tc := range []struct {
		name                  string
		f                     Files
		kind                  tempora.DataErrorKind
		instance, feature, ts int
		count                 int
		file                  string // a file the message names
	}{
		{"infinite", Files{Data: "inf.npy", Targets: "y.npy"}, tempora.KindInfinite, 1, 0, 0, 2, "inf.npy"},
		{"rank", Files{Data: "rank2.npy", Targets: "y.npy"}, tempora.KindShape, -1, -1, -1, 0, "rank2.npy"},
		{"unobserved instance", Files{Data: "empty.npy", Targets: "y.npy"}, tempora.KindUnobservedInstance, 1, -1, -1, 0, "y.npy"},
		{"targets", Files{Data: "x.npy", Targets: "y2.npy"}, tempora.KindTargets, -1, -1, -1, 2, "y2.npy"},
		{"target not finite", Files{Data: "x.npy", Targets: "ynan.npy"}, tempora.KindTarget, 1, -1, -1, 2, "ynan.npy"},
		{"label", Files{Data: "x.npy", Targets: "y05.npy", Task: tempora.Classification}, tempora.KindTarget, 2, -1, -1, 0, "y05.npy"},
		{"name count", Files{Data: "x.npy", Targets: "y.npy", Names: "names3.json"}, tempora.KindFeatureNames, -1, -1, -1, 3, "names3.json"},
		{"repeated name", Files{Data: "x.npy", Targets: "y.npy", Names: "dup.json"}, tempora.KindFeatureNames, -1, 1, -1, 0, "dup.json"},
		{"blank around a name", Files{Data: "x.npy", Targets: "y.npy", Names: "blank.json"}, tempora.KindFeatureNames, -1, 1, -1, 0, "blank.json"},
		{"mask shape", Files{Data: "x.npy", Targets: "y.npy", Mask: "mask.npy"}, tempora.KindMask, -1, -1, -1, 0, "mask.npy"},
		{"mask value", Files{Data: "x.npy", Targets: "y.npy", Mask: "mask05.npy"}, tempora.KindMask, 1, 1, 1, 0, "mask05.npy"},
	} {
		f := tc.f
		f.Data, f.Targets, f.Names, f.Mask = path(f.Data), path(f.Targets), optPath(dir, f.Names), optPath(dir, f.Mask)
		_, _, err := ReadFiles(f)
		var de *tempora.DataError
		switch {
		case !errors.As(err, &de):
			t.Errorf("%s: %v is not a *tempora.DataError", tc.name, err)
		case de.Kind != tc.kind || de.Instance != tc.instance || de.Feature != tc.feature || de.Timestep != tc.ts || de.Count != tc.count:
			t.Errorf("%s: %q at (%d, %d, %d) count %d, want %q at (%d, %d, %d) count %d (%v)", tc.name,
				de.Kind, de.Instance, de.Feature, de.Timestep, de.Count, tc.kind, tc.instance, tc.feature, tc.ts, tc.count, err)
		case !strings.Contains(err.Error(), path(tc.file)):
			t.Errorf("%s: %v does not name %s", tc.name, err, tc.file)
		default:
			checkOnePrefix(t, err)
		}
	}
	// The names are matched, not only checked: JSON names are the
	// dataset's.
	ds, _, err := ReadFiles(Files{Data: path("x.npy"), Targets: path("y.npy"), Names: path("names.json")})
	if err != nil || ds.Name(1) != "b" {
		t.Errorf("JSON names: %v, %v", ds, err)
	}
}
