package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/internal/examplemodel"
	"github.com/tempora-dev/tempora/procmodel"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// serverEnv makes the test binary serve examplemodel's default model over
// the procmodel protocol instead of running tests, so that the -model-cmd
// path can be tested without building another program.
const serverEnv = "TEMPORA_CMD_TEST_MODEL_SERVER"

// mainEnv makes the test binary run Main on its arguments instead of
// running tests, so that a child process (such as the Python scorer's
// "tempora serve") can run the command line without building it.
const mainEnv = "TEMPORA_CLI_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		Main()
		os.Exit(0)
	}
	if v := os.Getenv(badModelEnv); v != "" {
		serveBadModel(v)
	}
	if kind := os.Getenv(outputsModelEnv); kind != "" {
		serveOutputsModel(kind)
	}
	if os.Getenv(serverEnv) == "1" {
		terms, err := examplemodel.ParseTerms(examplemodel.DefaultTerms)
		if err == nil {
			err = procmodel.Serve(os.Stdin, os.Stdout, &examplemodel.Model{Terms: terms})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "model server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runCmd runs the command line in-process and returns its standard output
// and error.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = run(args, &o, &e)
	return o.String(), e.String(), err
}

// mustRun runs the command line and fails the test on error.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := runCmd(t, args...)
	if err != nil {
		t.Fatalf("tempora %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update if the change is intended):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// smallProblem synthesises a small classification problem (fast to
// explain with every method) into a temporary directory.
func smallProblem(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "problem")
	mustRun(t, "synth", "-out", dir, "-instances", "200", "-features", "4", "-timesteps", "6",
		"-relevant", "0.5", "-task", "classification", "-noise", "auto", "-seed", "3")
	return dir
}

func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		golden string
	}{
		{[]string{"-h"}, "help.stdout"},
		{[]string{"help"}, "help.stdout"},
		{[]string{"synth", "-h"}, "synth-help.stdout"},
		{[]string{"describe", "-h"}, "describe-help.stdout"},
		{[]string{"explain", "-h"}, "explain-help.stdout"},
		{[]string{"methods", "-h"}, "methods-help.stdout"},
		{[]string{"run", "-h"}, "run-help.stdout"},
		{[]string{"merge", "-h"}, "merge-help.stdout"},
		{[]string{"export", "-h"}, "export-help.stdout"},
		{[]string{"problems", "-h"}, "problems-help.stdout"},
		{[]string{"evaluate", "-h"}, "evaluate-help.stdout"},
	} {
		out, errOut, err := runCmd(t, tc.args...)
		if err != nil || errOut != "" {
			t.Errorf("tempora %q: error %v, stderr %q", tc.args, err, errOut)
		}
		golden(t, tc.golden, out)
	}
}

// TestRoundTrip synthesises a problem, describes it and explains it with
// TIME, writing JSON and CSV, and compares every output with its golden
// file.
func TestRoundTrip(t *testing.T) {
	dir := smallProblem(t)
	// The synth summary names the directory; rerun to capture it.
	out := mustRun(t, "synth", "-out", dir, "-instances", "200", "-features", "4", "-timesteps", "6",
		"-relevant", "0.5", "-task", "classification", "-noise", "auto", "-seed", "3")
	golden(t, "synth.stdout", strings.ReplaceAll(out, dir, "DIR"))
	for _, f := range []string{"data.npy", "targets.npy", "model.json", "truth.json", "problem.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("synth did not write %s: %v", f, err)
		}
	}

	golden(t, "describe.stdout", mustRun(t, "describe", dir))

	jsonPath := filepath.Join(t.TempDir(), "time.json")
	csvPath := filepath.Join(t.TempDir(), "time.csv")
	out, errOut, err := runCmd(t, "explain", "-problem", dir, "-json", jsonPath, "-csv", csvPath)
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, errOut)
	}
	golden(t, "explain-time.stdout", out)
	if !strings.Contains(errOut, "tempora: TIME took") {
		t.Errorf("no timing line on stderr: %q", errOut)
	}

	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var e tempora.Explanation
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("-json output does not decode: %v", err)
	}
	if e.Method != "TIME" || e.D != 4 || e.L != 6 || len(e.Features) != 4 {
		t.Errorf("decoded explanation: method %q, %d × %d, %d features", e.Method, e.D, e.L, len(e.Features))
	}
	// The runtime varies; everything else is fixed by the seed.
	golden(t, "explain-time.json", regexp.MustCompile(`"runtime_seconds": [0-9.e-]+`).ReplaceAllString(string(b), `"runtime_seconds": 0`))
	c, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "explain-time.csv", string(c))
}

// TestExplainMethods runs every method on the small problem with small
// budgets and compares the reports with golden files.
func TestExplainMethods(t *testing.T) {
	dir := smallProblem(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"lime", []string{"-method", "lime", "-samples", "200", "-instances-explained", "20"}},
		{"sage", []string{"-method", "sage", "-max-permutations", "256", "-background", "32"}},
		{"sage-m", []string{"-method", "sage-m", "-max-permutations", "256"}},
		{"sage-z", []string{"-method", "sage-z", "-max-permutations", "256"}},
		{"perm", []string{"-method", "perm", "-permutations", "20"}},
		{"perm-f", []string{"-method", "perm-f", "-permutations", "20", "-alpha", "0.2"}},
		{"time-options", []string{"-permutations", "30", "-alpha", "0.05", "-gamma", "0.9", "-seed", "7"}},
		{"time-conditional", []string{"-conditional"}},
		{"time-tree-fdr", []string{"-tree-fdr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := mustRun(t, append([]string{"explain", "-problem", dir, "-workers", "2"}, tc.args...)...)
			golden(t, "explain-"+tc.name+".stdout", out)
		})
	}
}

// TestExplainWorkersInvariant checks that the report does not depend on
// the number of workers.
func TestExplainWorkersInvariant(t *testing.T) {
	dir := smallProblem(t)
	one := mustRun(t, "explain", "-problem", dir, "-workers", "1", "-permutations", "20")
	three := mustRun(t, "explain", "-problem", dir, "-workers", "3", "-permutations", "20")
	if one != three {
		t.Errorf("1 and 3 workers give different reports:\n%s\n%s", one, three)
	}
}

func TestExplainHierarchy(t *testing.T) {
	dir := smallProblem(t)
	h := filepath.Join(t.TempDir(), "h.json")
	if err := os.WriteFile(h, []byte(`[{"name": "low", "features": [0, 1]}, {"name": "high", "features": ["2", "3"]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "explain", "-problem", dir, "-hierarchy", h, "-permutations", "20")
	golden(t, "explain-hierarchy.stdout", strings.ReplaceAll(out, h, "h.json")) // the settings line names the file

	if err := os.WriteFile(h, []byte(`[{"name": "x", "features": [9]}]`), 0o644); err == nil {
		_, _, err = runCmd(t, "explain", "-problem", dir, "-hierarchy", h)
		if err == nil {
			t.Error("hierarchy naming feature 9 of 4: no error")
		}
	}
}

// TestExplainModelCommand explains a model served by a child process (this
// test binary, see TestMain) on data read from .npy and .csv files.
func TestExplainModelCommand(t *testing.T) {
	t.Setenv(serverEnv, "1") // inherited by the child, not used by this process after TestMain
	dir := t.TempDir()
	// Uniform data on 40 instances × 8 features × 20 timesteps, the smallest
	// shape examplemodel.DefaultTerms fits; targets are the model's own
	// predictions plus a little Gaussian noise.
	const m, d, l = 40, 8, 20
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(5, "cmd test data")
	for k := range x.Data {
		x.Data[k] = rng.Float64()
	}
	terms, err := examplemodel.ParseTerms(examplemodel.DefaultTerms)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, m)
	if err := (&examplemodel.Model{Terms: terms}).Predict(y, x); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		y[i] += 0.05 * rng.NormFloat64()
	}
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	xPath, yPath, nPath := filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.csv"), filepath.Join(dir, "names.txt")
	if err := dataio.WriteTensorNPY(xPath, x); err != nil {
		t.Fatal(err)
	}
	if err := dataio.WriteVectorCSV(yPath, y); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nPath, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := "'" + strings.ReplaceAll(exe, "'", `'\''`) + "' -test.run=^$"
	jsonPath := filepath.Join(dir, "sub.json")
	out, errOut, err := runCmd(t, "explain", "-data", xPath, "-targets", yPath, "-feature-names", nPath,
		"-task", "regression", "-model-cmd", cmd, "-model-timeout", "1m", "-seed", "3", "-json", jsonPath)
	if err != nil {
		t.Fatalf("explain -model-cmd: %v\n%s", err, errOut)
	}
	// The explanation through the child process must be identical to the
	// same model explained in-process with the same seed (runtime aside).
	var sub tempora.Explanation
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sub); err != nil {
		t.Fatal(err)
	}
	in, err := explain.TIME{Seed: 3}.Explain(context.Background(), &examplemodel.Model{Terms: terms},
		&tempora.Dataset{X: x, Y: y, Task: tempora.Regression, FeatureNames: names})
	if err != nil {
		t.Fatal(err)
	}
	sub.Accounting.Runtime, in.Accounting.Runtime = 0, 0
	// The child holds the data and several draws go in one request, each
	// still one call of the model: the explanation, its model calls
	// included, is the in-process one.
	subJSON, _ := json.Marshal(&sub)
	inJSON, _ := json.Marshal(in)
	if !bytes.Equal(subJSON, inJSON) {
		t.Errorf("explanation through -model-cmd differs from in-process:\n sub %s\n  in %s", subJSON, inJSON)
	}
	golden(t, "explain-model-cmd.stdout", out)
	// The model uses features 0 (a), 3 (d) and 7 (h) on timesteps 10..19,
	// 0..4 and 5..14 (examplemodel.DefaultTerms).
	for _, want := range []string{"a        yes        ", "d        yes        ", "h        yes        "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	_, _, err = runCmd(t, "explain", "-data", xPath, "-targets", yPath, "-task", "regression", "-model-cmd", filepath.Join(dir, "no-such-program"))
	if err == nil {
		t.Error("missing model program: no error")
	}
}

func TestBadUsage(t *testing.T) {
	dir := smallProblem(t)
	out := filepath.Join(t.TempDir(), "p")
	synth := func(extra ...string) []string {
		return withFlags([]string{"synth", "-out", out, "-instances", "20", "-features", "3", "-timesteps", "4"}, extra...)
	}
	explain := func(extra ...string) []string { return append([]string{"explain", "-problem", dir}, extra...) }
	for _, tc := range []struct {
		args  []string
		want  string
		usage bool // a usageError (exit status 2)
	}{
		{nil, "no command given", true},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, true},
		{[]string{"synth", "-instances", "20"}, "missing -out DIR", true},
		{synth("-features", "0"), "-features 0: need at least 1 feature", true},
		{synth("-timesteps", "1"), "-timesteps 1: need at least 2 timesteps", true},
		{synth("-instances", "1"), "-instances 1: need at least 2 instances", true},
		{synth("-relevant", "1.5"), "-relevant 1.5: the fraction of relevant features must be in [0, 1]", true},
		{synth("-relevant", "-0.1"), "-relevant -0.1", true},
		{synth("-relevant", "NaN"), "-relevant NaN", true},
		{synth("-task", "forecast"), `-task "forecast": want regression or classification`, true},
		{synth("-noise", "loud"), `-noise "loud"`, true},
		{synth("-noise", "-1"), `-noise "-1"`, true},
		{synth("-seed", "-1"), "invalid value", true},
		{synth("-bogus"), "flag provided but not defined: -bogus", true},
		{synth("extra"), `unexpected argument "extra"`, true},
		{[]string{"describe"}, "want exactly one problem directory", true},
		{[]string{"describe", filepath.Join(dir, "missing")}, "missing", false},
		{[]string{"explain"}, "missing -problem DIR or -data FILE", true},
		{explain("-method", "shap"), `unknown -method "shap"`, true},
		{explain("-alpha", "0"), "-alpha 0: want a float in (0, 1)", true},
		{explain("-alpha", "1"), "-alpha 1", true},
		{explain("-gamma", "1.5"), "-gamma 1.5: want a float in (0, 1)", true},
		{explain("-gamma", "0"), "-gamma 0", true},
		{explain("-permutations", "-1"), "-permutations -1: want an int in [0, inf)", true},
		{explain("-permutations", "2.5"), "-permutations 2.5: want an int", true},
		{explain("-workers", "-2"), "-workers -2", true},
		{explain("-method", "lime", "-samples", "1"), "-samples 1: want an int in [2, inf)", true},
		{explain("-method", "lime", "-gamma", "0.9"), "-gamma does not apply to -method LIME (only to TIME, TIME-n)", true},
		{explain("-method", "sage", "-samples", "10"), "-samples does not apply to -method SAGE", true},
		{explain("-method", "sage-m", "-background", "10"), "-background does not apply to -method SAGE-m", true},
		{explain("-method", "sage", "-max-time", "-1s"), "-max-time -1s: want a duration in [0, inf)", true},
		{explain("-method", "sage", "-max-time", "10"), "-max-time 10: want a duration", true},
		{explain("-method", "lime", "-alpha", "0.2"), "-alpha does not apply to -method LIME", true},
		{explain("-method", "Time-N", "-samples", "2"), "-samples does not apply to -method TIME-n", true},
		{explain("-task", "regression"), "-task cannot be combined with -problem", true},
		{explain("-hierarchy", filepath.Join(dir, "none.json")), "none.json", false},
		{[]string{"explain", "-data", "x.npy"}, "-data needs -targets FILE", true},
		{[]string{"explain", "-data", "x.npy", "-targets", "y.npy"}, "-data needs -task", true},
		{[]string{"explain", "-data", "x.npy", "-targets", "y.npy", "-task", "regression"}, "-data needs -model-cmd", true},
		{[]string{"explain", "-data", "x.npy", "-targets", "y.npy", "-task", "ranking", "-model-cmd", "m"}, `-task "ranking"`, true},
		{[]string{"explain", "-data", filepath.Join(dir, "nope.npy"), "-targets", "y.npy", "-task", "regression", "-model-cmd", "m"}, "nope.npy", false},
		{[]string{"explain", "-data", filepath.Join(dir, "data.npy"), "-targets", filepath.Join(dir, "targets.npy"), "-task", "regression", "-model-cmd", `"unterminated`}, "-model-cmd", false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, _, err := runCmd(t, tc.args...)
			if stdout != "" {
				t.Errorf("bad usage wrote to stdout:\n%s", stdout)
			}
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want one containing %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans several lines: %q", msg)
			}
			var u usageError
			if errors.As(err, &u) != tc.usage {
				t.Errorf("usage error = %v, want %v", !tc.usage, tc.usage)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a rejected synth command wrote its output directory")
	}
}

func TestSynthOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	// -relevant 0 asks for the fewest relevant features: one, not
	// synth.Config's default fraction.
	out := mustRun(t, "synth", "-out", dir, "-instances", "50", "-features", "6", "-timesteps", "5",
		"-relevant", "0", "-window-independent", "-noise", "0.5", "-seed", "9")
	if !strings.Contains(out, "1 relevant features") || !strings.Contains(out, "β = 0.5") {
		t.Errorf("synth -relevant 0 -noise 0.5: %s", out)
	}
	desc := mustRun(t, "describe", dir)
	if !strings.Contains(desc, "window-independent") || !strings.Contains(desc, "50 instances × 6 features × 5 timesteps") {
		t.Errorf("describe does not reflect the flags:\n%s", desc)
	}
	// The same flags and seed give byte-identical files.
	again := filepath.Join(t.TempDir(), "p")
	mustRun(t, "synth", "-out", again, "-instances", "50", "-features", "6", "-timesteps", "5",
		"-relevant", "0", "-window-independent", "-noise", "0.5", "-seed", "9")
	for _, f := range []string{"data.npy", "targets.npy", "model.json", "truth.json", "problem.json"} {
		a, errA := os.ReadFile(filepath.Join(dir, f))
		b, errB := os.ReadFile(filepath.Join(again, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs with the same seed (%v, %v)", f, errA, errB)
		}
	}
}
