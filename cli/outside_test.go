package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/experiments"
	"github.com/tempora-dev/tempora/record"
)

// tinyProblems is a grid small enough for tests, with a method-parameter
// axis (permutations), so that two settings share each problem.
var tinyProblems = []string{"-suite", "grid", "-grid", "instances=60;features=3;timesteps=6;permutations=10,20", "-models", "2"}

// TestProblemsMatchRun checks that "tempora problems" writes exactly the
// problems "tempora run" analyses: TIME's explanations from a run, written
// as score files into the problem directories and evaluated as TIME, give
// byte for byte the run's metrics, with the run's record keys and seeds.
func TestProblemsMatchRun(t *testing.T) {
	root := t.TempDir()
	run, probs, ev := filepath.Join(root, "run"), filepath.Join(root, "problems"), filepath.Join(root, "eval")
	mustRun(t, append(append([]string{"run"}, tinyProblems...), "-methods", "TIME", "-workers", "1", "-out", run)...)
	out := mustRun(t, append(append([]string{"problems"}, tinyProblems...), "-out", probs)...)
	if !strings.Contains(out, "wrote 2 problems of suite grid (2 settings × 2 models)") {
		t.Errorf("problems output %q", out)
	}
	idx, err := experiments.ReadIndex(probs)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := experiments.ReadRecords(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Problems) != 4 || len(recs) != 4 {
		t.Fatalf("%d index entries and %d records, want 4 each", len(idx.Problems), len(recs))
	}
	// Settings permutations=10 and 20 share each model's directory; write
	// each setting's TIME explanation under its own file name.
	for _, e := range idx.Problems {
		var rec *record.Record
		for _, r := range recs {
			if r.Model == e.Model && fmt.Sprint(r.Params) == fmt.Sprint(e.Params) {
				rec = r
			}
		}
		if rec == nil || rec.Seed != e.Seed {
			t.Fatalf("index entry %+v has no run record with its seed", e)
		}
		b, err := json.Marshal(rec.Explanation)
		if err != nil {
			t.Fatal(err)
		}
		perms, _ := rec.Param("permutations")
		name := "time-" + perms + ".json"
		if err := os.WriteFile(filepath.Join(probs, filepath.FromSlash(e.Dir), name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Each evaluation writes the records of both settings from one file
	// name; keep the setting that file belongs to.
	for _, p := range []string{"10", "20"} {
		dir := ev + p
		out := mustRun(t, "evaluate", "-problems", probs, "-scores", "time-"+p+".json", "-method", "time", "-out", dir)
		if !strings.Contains(out, "wrote 4 records of TIME") {
			t.Errorf("evaluate output %q", out)
		}
		got, err := experiments.ReadRecords(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			if v, _ := g.Param("permutations"); v != p {
				continue
			}
			for _, r := range recs {
				if r.Key() == g.Key() {
					if fmt.Sprint(g.Metrics) != fmt.Sprint(r.Metrics) || g.Seed != r.Seed {
						t.Errorf("%s: evaluated %v (seed %d), run %v (seed %d)", g.Key(), g.Metrics, g.Seed, r.Metrics, r.Seed)
					}
				}
			}
		}
	}
	// Rerunning keeps the problems; another seed into the same directory
	// is refused.
	mustRun(t, append(append([]string{"problems"}, tinyProblems...), "-out", probs)...)
	if _, _, err := runCmd(t, append(append([]string{"problems"}, tinyProblems...), "-seed", "9", "-out", probs)...); err == nil {
		t.Error("problems with another seed into the same directory: no error")
	}
}

// TestOutsideScores runs the loop of an outside tool without Python:
// problems, a score file per problem, evaluate, then report and merge
// beside a run of the same suite.
func TestOutsideScores(t *testing.T) {
	root := t.TempDir()
	probs, ext, run := filepath.Join(root, "problems"), filepath.Join(root, "ext"), filepath.Join(root, "run")
	mustRun(t, append(append([]string{"problems"}, tinyProblems...), "-out", probs)...)
	idx, err := experiments.ReadIndex(probs)
	if err != nil {
		t.Fatal(err)
	}
	// The outside "method" scores feature j at timestep t by j+t: a CSV
	// file of D rows of L numbers.
	for _, e := range idx.Problems {
		var b strings.Builder
		for j := range e.Features {
			for tt := range e.Timesteps {
				if tt > 0 {
					b.WriteString(",")
				}
				fmt.Fprint(&b, j+tt)
			}
			b.WriteString("\n")
		}
		if err := os.WriteFile(filepath.Join(probs, filepath.FromSlash(e.Dir), "mine.csv"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, "evaluate", "-problems", probs, "-scores", "mine.csv", "-method", "mine", "-out", ext)
	mustRun(t, append(append([]string{"run"}, tinyProblems...), "-methods", "TIME", "-out", run)...)
	report := filepath.Join(root, "report")
	mustRun(t, "report", "-in", ext+","+run, "-out", report)
	table, err := os.ReadFile(filepath.Join(report, "tables", "suite-grid.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| TIME |", "| mine |"} {
		if !strings.Contains(string(table), want) {
			t.Errorf("suite-grid.md lacks %q:\n%s", want, table)
		}
	}
	merged := filepath.Join(root, "merged")
	mustRun(t, "merge", "-out", merged, ext, run)
	m, err := experiments.ReadManifest(merged)
	if err != nil || strings.Join(m.Methods, ",") != "mine,TIME" {
		t.Errorf("merged manifest %+v, %v", m, err)
	}
	// A run of other problems is refused by merge and by report.
	other := filepath.Join(root, "other")
	mustRun(t, append(append([]string{"run"}, tinyProblems...), "-methods", "TIME", "-seed", "7", "-out", other)...)
	if _, _, err := runCmd(t, "merge", "-out", filepath.Join(root, "bad"), ext, other); err == nil {
		t.Error("merging runs of different seeds: no error")
	}
	if _, _, err := runCmd(t, "report", "-in", ext+","+other, "-out", filepath.Join(root, "bad-report")); err == nil ||
		!strings.Contains(err.Error(), "different problems") {
		t.Errorf("reporting runs of different seeds together: error %v", err)
	}
	// Bad command lines.
	for _, args := range [][]string{
		{"evaluate", "-problems", probs, "-scores", "mine.csv", "-out", ext},
		{"evaluate", "-problems", probs, "-scores", "mine.csv", "-method", "my method", "-out", ext},
		{"evaluate", "-problems", probs, "-problem", probs, "-scores", "x", "-method", "m", "-out", ext},
		{"problems", "-suite", "nope", "-out", probs},
		{"problems", "-suite", "table1"},
	} {
		_, _, err := runCmd(t, args...)
		if exitStatus(err) != 2 {
			t.Errorf("tempora %s: error %v, want a usage error", strings.Join(args, " "), err)
		}
	}
	if _, _, err := runCmd(t, "evaluate", "-problems", probs, "-scores", "absent.csv", "-method", "m", "-out", filepath.Join(root, "x")); exitStatus(err) != 1 {
		t.Errorf("missing score files: error %v, want a failure", err)
	}
}

// TestPythonScorer runs examples/python/score_problems.py on a suite's
// problems, with this test binary as its tempora, and checks its records
// and the report beside TIME's. It needs Debian's /usr/bin/python3 with
// NumPy and pandas (the script uses the tempora package of python/).
func TestPythonScorer(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import numpy, pandas").Run(); err != nil {
		t.Skipf("needs %s with NumPy and pandas (apt-get install python3-numpy python3-pandas): %v", python, err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cmd := exec.Command(python, filepath.Join("..", "examples", "python", "score_problems.py"),
		"--suite", "grid", "--grid", tinyProblems[3], "--models", "2", "--compare", "TIME", "--dir", root, "--tempora", exe)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("score_problems.py: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ext") || !strings.Contains(string(out), "TIME") || !strings.Contains(string(out), "timestep-auprc_se") {
		t.Errorf("score_problems.py printed no ext and TIME rows with standard errors:\n%s", out)
	}
	recs, err := experiments.ReadRecords(filepath.Join(root, "runs", "ext"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Errorf("%d records of ext, want 4 (2 settings × 2 models)", len(recs))
	}
	for _, r := range recs {
		// Mean occlusion makes one model call per cell plus one, on all 60
		// instances each time.
		if r.ModelCalls != 3*6+1 || r.InstanceEvals != 60*r.ModelCalls || r.RuntimeSeconds <= 0 {
			t.Errorf("%s: accounting %d calls, %d evaluations, %v s", r.Key(), r.ModelCalls, r.InstanceEvals, r.RuntimeSeconds)
		}
	}
	table, _ := os.ReadFile(filepath.Join(root, "report", "tables", "suite-grid.md"))
	if !strings.Contains(string(table), "| ext |") || !strings.Contains(string(table), "| TIME |") {
		t.Errorf("suite-grid.md lacks the ext or TIME rows:\n%s", table)
	}
}
