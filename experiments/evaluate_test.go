package experiments

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEvaluateFile(t *testing.T) {
	// The score matrix of TestDetectionMetrics, in two hand-made formats,
	// scored against the same truth (testdata/problem/truth.json).
	detection := map[string]float64{
		"feature-power": 0.5, "feature-fdr": 0.5, "timestep-power": 0.5, "timestep-fdr": 0.5,
		"feature-power-all": 1, "feature-fdr-all": 1.0 / 3, "timestep-power-all": 1, "timestep-fdr-all": 1.0 / 3,
	}
	for _, f := range []string{"scores.csv", "scores.json"} {
		ms, err := EvaluateFile("testdata/problem", filepath.Join("testdata", f), TopN)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		checkMetrics(t, f, ms, detection)
	}

	// A hand-made TIME explanation, scored in TIME's mode: features {0, 1}
	// and cells {1, 2, 3, 4} are selected against true features {0, 2} and
	// cells {1, 2, 8, 9}. Ordering: truth {0, 2}, selected {0}. Window
	// ordering over the identified {0, 1}: nothing true, {1} selected.
	// Average window over {0}: [1, 3] against [1, 2].
	ms, err := EvaluateFile("testdata/problem", "testdata/explanation.json", AllNonZero)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "explanation.json", ms, map[string]float64{
		"feature-power": 0.5, "feature-fdr": 0.5, "timestep-power": 0.5, "timestep-fdr": 0.5,
		"feature-power-all": 0.5, "feature-fdr-all": 0.5, "timestep-power-all": 0.5, "timestep-fdr-all": 0.5,
		"ordering-power": 0.5, "ordering-fdr": 0,
		"window-ordering-power": 1, "window-ordering-fdr": 1,
		"avg-window-power": 1, "avg-window-fdr": 1.0 / 3,
	})
}

func TestEvaluateFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for name, path := range map[string]string{
		"ragged rows":     "testdata/ragged.csv",
		"wrong shape":     write("small.json", "[[1, 2, 3, 4], [1, 2, 3, 4]]"),
		"not a number":    write("nan.csv", "1,2,3,x\n1,2,3,4\n1,2,3,4\n"),
		"empty":           write("empty.csv", "# nothing\n"),
		"no cells":        write("obj.json", `{"scores": [[1]]}`),
		"missing file":    filepath.Join(dir, "absent.csv"),
		"malformed JSON":  write("bad.json", "[[1, 2"),
		"too many values": write("wide.csv", "1,2,3,4,5\n1,2,3,4,5\n1,2,3,4,5\n"),
	} {
		if _, err := EvaluateFile("testdata/problem", path, TopN); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := EvaluateFile(dir, "testdata/scores.csv", TopN); err == nil {
		t.Error("problem directory without truth.json: no error")
	}
}
