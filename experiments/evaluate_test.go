package experiments

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

// checkMetrics compares ms with want; the expected values are ratios of
// small integers, so only the rounding of one division and one subtraction
// (well below 1e-12) separates them from the computed ones.
func checkMetrics(t *testing.T, name string, ms []record.Metric, want map[string]float64) {
	t.Helper()
	got := map[string]float64{}
	for _, m := range ms {
		got[m.Name] = m.Value
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: no metric %s", name, k)
			continue
		}
		if math.Abs(g-w) > 1e-12 {
			t.Errorf("%s: %s = %v, want %v", name, k, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d metrics, want %d", name, len(got), len(want))
	}
}

func TestEvaluateFiles(t *testing.T) {
	// The score matrix of TestDetectionMetrics, in two hand-made formats,
	// scored against the same truth (testdata/problem/truth.json).
	detection := map[string]float64{
		"feature-power": 0.5, "feature-fdr": 0.5, "timestep-power": 0.5, "timestep-fdr": 0.5,
		"feature-power-all": 1, "feature-fdr-all": 1.0 / 3, "timestep-power-all": 1, "timestep-fdr-all": 1.0 / 3,
		// Feature scores 0.8, 0.55, 0.2 against truth {0, 2}: one of the two
		// (true, false) pairs is ordered, AP = ½·1 + ½·⅔. Cells: the true
		// 0.8, 0.8, 0.2, 0.2 against the false 0.9, 0.2 and six zeros:
		// (2·7 + 2·6.5)/32 ordered pairs; AP = ½·⅔ + ½·4/6.
		"feature-auroc": 0.5, "feature-auprc": 5.0 / 6, "timestep-auroc": 27.0 / 32, "timestep-auprc": 2.0 / 3,
	}
	for _, f := range []string{"scores.csv", "scores.json"} {
		rec, err := EvaluateFiles("testdata/problem", filepath.Join("testdata", f), "", method.TopN, false)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		checkMetrics(t, f, rec.Metrics, detection)
		// The feature scores are filled from the cells.
		if got := rec.Explanation.Features[0].Score; math.Abs(got-0.8) > 1e-15 {
			t.Errorf("%s: feature 0 score %v, want 0.8 (mean |cell| of its non-zero cells)", f, got)
		}
	}

	// A hand-made TIME explanation, scored in TIME's mode: features {0, 1}
	// and cells {1, 2, 3, 4} are selected against true features {0, 2} and
	// cells {1, 2, 8, 9}. Ordering: truth {0, 2}, selected {0}. Window
	// ordering over the identified {0, 1}: nothing true, {1} selected.
	// Average window over {0}: [1, 3] against [1, 2].
	rec, err := EvaluateFiles("testdata/problem", "testdata/explanation.json", "", method.AllNonZero, true)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "explanation.json", rec.Metrics, map[string]float64{
		"feature-power": 0.5, "feature-fdr": 0.5, "timestep-power": 0.5, "timestep-fdr": 0.5,
		"feature-power-all": 0.5, "feature-fdr-all": 0.5, "timestep-power-all": 0.5, "timestep-fdr-all": 0.5,
		"ordering-power": 0.5, "ordering-fdr": 0,
		"window-ordering-power": 1, "window-ordering-fdr": 1,
		"avg-window-power": 1, "avg-window-fdr": 1.0 / 3,
		// Feature scores 0.8, 0.5, 0 against truth {0, 2}; cells: the true
		// 0.8, 0.8, 0, 0 against the false 0.8, 0.5 and six zeros:
		// (2·7.5 + 2·3)/32 ordered pairs, AP = ½·⅔ + ½·4/12.
		"feature-auroc": 0.5, "feature-auprc": 5.0 / 6, "timestep-auroc": 21.0 / 32, "timestep-auprc": 0.5,
	})
}

func TestEvaluateFilesErrors(t *testing.T) {
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
		if _, err := EvaluateFiles("testdata/problem", path, "", method.TopN, false); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := EvaluateFiles(dir, "testdata/scores.csv", "", method.TopN, false); err == nil {
		t.Error("problem directory without truth.json: no error")
	}
	// A method with tests needs an explanation with test outcomes.
	if _, err := EvaluateFiles("testdata/problem", "testdata/scores.csv", "", method.AllNonZero, true); err == nil {
		t.Error("scores only, scored with tests: no error")
	}
	bad := write("acc.json", `{"cells": [[0,1,0,0],[0,0,0,0],[0,0,0,0]], "accounting": {"runtime_seconds": -1}}`)
	if _, err := EvaluateFiles("testdata/problem", bad, "", method.TopN, false); err == nil {
		t.Error("negative runtime: no error")
	}
}

func TestReadScoresAccounting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(p, []byte(`{"cells": [[0, 2], [1, 0]], "accounting": {"runtime_seconds": 1.5, "model_calls": 5, "instance_evaluations": 50}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := readScores(p)
	if err != nil {
		t.Fatal(err)
	}
	if a := e.Accounting; a.Runtime.Seconds() != 1.5 || a.ModelCalls != 5 || a.InstanceEvals != 50 || e.D != 2 || e.L != 2 || len(e.Features) != 2 {
		t.Errorf("read %+v", e)
	}
}
