package cli

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/procmodel"
)

// badModelEnv makes the test binary serve a broken model over the model
// protocol instead of running tests: its value is the prediction of every
// instance ("+Inf", "NaN", "-3" for a classification model, …).
const badModelEnv = "TEMPORA_CLI_TEST_BAD_MODEL"

// serveBadModel serves a model that predicts v for every instance, and
// exits.
func serveBadModel(v string) {
	pred, err := strconv.ParseFloat(v, 64)
	if err == nil {
		err = procmodel.Serve(os.Stdin, os.Stdout, tempora.ModelFunc(func(dst []float64, _ *tempora.Tensor) error {
			for i := range dst {
				dst[i] = pred
			}
			return nil
		}))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad model server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// errorLine returns what Main prints for err, and the exit status.
func errorLine(err error) (string, int) {
	return "tempora: " + strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " | "), exitStatus(err)
}

// badInputFixtures writes, into the current directory, the files the
// bad-input examples of docs/bad-input.md name: a small problem p, its data
// as x.npy and y.npy, a truncated copy trunc.npy, a run directory "run"
// with a truncated record, and two shards s0 and s1 of one run with
// different copies of one record.
func badInputFixtures(t *testing.T) {
	t.Helper()
	mustRun(t, "synth", "-out", "p", "-instances", "40", "-features", "3", "-timesteps", "4", "-seed", "1")
	x, err := os.ReadFile(filepath.Join("p", "data.npy"))
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(filepath.Join("p", "targets.npy"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"x.npy":     string(x),
		"y.npy":     string(y),
		"trunc.npy": string(x[:300]),
		"run/records/table1/model=0/method=TIME.json": `{"format": "tempora-record/1", "suite": "tab`,
	}
	rec := `{"format": "tempora-record/1", "suite": "table1", "params": [{"key": "instances", "value": "200"}], "model": 0, "seed": 1, "method": "TIME", "metrics": [], "runtime_seconds": %d, "warnings": []}`
	for i := range 2 {
		dir := fmt.Sprintf("s%d", i)
		files[dir+"/manifest.json"] = fmt.Sprintf(`{"format": "tempora-manifest/1", "suite": "table1", "quick": true, "seed": 100000, "models": 1, "methods": ["TIME"], "shard": {"I": %d, "N": 2}}`, i)
		files[dir+"/records/table1/instances=200/model=0/method=TIME.json"] = fmt.Sprintf(rec, i+1)
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Files that are not regular files, and a line longer than the
	// readers take (a sparse file of zeros).
	if err := mkfifo("fifo.npy"); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink("/dev/zero", "zero.json"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("long.csv", nil, 0o644); err != nil || os.Truncate("long.csv", 2<<20) != nil {
		t.Fatal("long.csv:", err)
	}
}

const (
	badInputBegin = "<!-- bad input: checked by go test ./cli -run TestBadInputDoc -->"
	badInputEnd   = "<!-- end of checked section -->"
)

// badInputPath is the page with the table of bad input.
const badInputPath = "../docs/bad-input.md"

// badInputRow is a row of docs/bad-input.md's table of bad input: | class |
// `command` | `message` | status |.
var badInputRow = regexp.MustCompile("^\\| ([^|`]+) \\| `([^`]+)` \\| `([^`]+)` \\| ([0-9]) \\|$")

// TestBadInputDoc runs every example of docs/bad-input.md in a directory holding the files the examples name
// (badInputFixtures) and checks that it prints the message shown ("…"
// stands for any text) and exits with the status shown.
func TestBadInputDoc(t *testing.T) {
	doc, err := os.ReadFile(badInputPath)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(doc, []byte(badInputBegin))
	j := bytes.Index(doc, []byte(badInputEnd))
	if i < 0 || j < i {
		t.Fatalf("docs/bad-input.md lacks the section between %q and %q", badInputBegin, badInputEnd)
	}
	var rows [][]string
	for _, line := range strings.Split(string(doc[i+len(badInputBegin):j]), "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| bad input") || strings.HasPrefix(line, "| ---") {
			continue
		}
		m := badInputRow.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("docs/bad-input.md: bad-input row not in the form | class | `command` | `message` | status |: %s", line)
			continue
		}
		rows = append(rows, m[1:])
	}
	if len(rows) < 15 {
		t.Fatalf("docs/bad-input.md lists only %d bad-input examples", len(rows))
	}
	t.Chdir(t.TempDir())
	badInputFixtures(t)
	statuses := map[int]int{}
	for _, r := range rows {
		class, line, want, status := r[0], r[1], r[2], r[3]
		args, err := procmodel.SplitCommand(line)
		if err != nil || len(args) == 0 || args[0] != "tempora" {
			t.Errorf("%s: example %q is not a tempora command line (%v)", class, line, err)
			continue
		}
		var stdout, stderr bytes.Buffer
		err = run(args[1:], &stdout, &stderr)
		if err == nil {
			t.Errorf("%s: %s succeeded, want %s", class, line, want)
			continue
		}
		got, code := errorLine(err)
		parts := strings.Split(want, "…")
		for k := range parts {
			parts[k] = regexp.QuoteMeta(parts[k])
		}
		if !regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got) {
			t.Errorf("%s: %s\n got %s\nwant %s", class, line, got, want)
		}
		if strconv.Itoa(code) != status {
			t.Errorf("%s: %s: exit status %d, docs/bad-input.md says %s", class, line, code, status)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: %s wrote to standard output: %q", class, line, stdout.String())
		}
		statuses[code]++
	}
	if statuses[1] == 0 || statuses[2] == 0 {
		t.Errorf("the examples exit with statuses %v, want both 1 and 2", statuses)
	}
}

// TestMessages checks the form of errors as the command line prints them
// (issue 12, defect 10): one "tempora: ", then the command's name, and no
// library package prefixes or doubled words.
func TestMessages(t *testing.T) {
	t.Chdir(t.TempDir())
	badInputFixtures(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Library prefixes leaked (synth:, experiments:).
		{[]string{"explain", "-problem", "nowhere"}, "tempora: explain: open nowhere/problem.json: no such file or directory"},
		{[]string{"describe", "nowhere"}, "tempora: describe: open nowhere/problem.json: no such file or directory"},
		{[]string{"evaluate", "-problem", "nowhere", "-scores", "s.csv"}, "tempora: evaluate: open nowhere/truth.json: no such file or directory"},
		{[]string{"serve", "-problem", "nowhere"}, "tempora: serve: open nowhere/problem.json: no such file or directory"},
		{[]string{"explain", "-problem", "p", "-hierarchy", "nowhere.json"}, "tempora: explain: TIME: hierarchy: open nowhere.json: no such file or directory"},
		{[]string{"run", "-suite", "table1", "-methods", "shap", "-out", "o"}, `tempora: run: unknown method "shap" (have TIME, TIME-n, LIME, SAGE, SAGE-m, SAGE-z, PERM, PERM-f, OCC, TimeSHAP)`},
		// The root package's error came out as "tempora: tempora: …".
		{[]string{"run", "-suite", "grid", "-grid", "task=0", "-out", "o"}, "tempora: run: grid task=0, want regression or classification"},
		// "-1 models" said only what was given.
		{[]string{"run", "-suite", "table1", "-models", "-1", "-out", "o"}, "tempora: run: -models -1: want at least 1 (or 0 for the suite's default)"},
		{[]string{"problems", "-suite", "table1", "-models", "-1", "-out", "o"}, "tempora: problems: -models -1: want at least 1 (or 0 for the suite's default)"},
		{[]string{"run", "-suite", "table1", "-workers", "-1", "-out", "o"}, "tempora: run: -workers -1: want 0 (one per CPU) or more"},
		// Commands whose name is also a package's keep it once.
		{[]string{"synth", "-out", "q", "-features", "0"}, "tempora: synth: -features 0: need at least 1 feature"},
		{[]string{"explain", "-problem", "p", "-gamma", "1"}, "tempora: explain: -gamma 1: want a float in (0, 1)"},
		{[]string{"merge", "-out", "m", "nowhere"}, "tempora: merge: merge input nowhere: open nowhere/manifest.json: no such file or directory"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if err == nil {
			t.Errorf("tempora %s: no error", strings.Join(tc.args, " "))
			continue
		}
		if got, _ := errorLine(err); got != tc.want {
			t.Errorf("tempora %s:\n got %s\nwant %s", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// TestBadPredictions explains a model program that predicts +Inf, NaN or
// (for classification) a value outside [0, 1] with every method: each must
// fail with one line naming the value, and the message for an infinite
// prediction must not carry the hint about NaN (issue 12, defect 10).
func TestBadPredictions(t *testing.T) {
	t.Chdir(t.TempDir())
	badInputFixtures(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := "'" + strings.ReplaceAll(exe, "'", `'\''`) + "' -test.run=^$"
	for _, tc := range []struct {
		pred, task, want string
	}{
		{"+Inf", "regression", "model: predicted +Inf for instance 0"},
		{"-Inf", "regression", "model: predicted -Inf for instance 0"},
		{"NaN", "regression", "model: predicted NaN for instance 0"},
		{"1.5", "classification", "model: predicted 1.5 for instance 0, want a probability in [0, 1] for classification"},
	} {
		t.Setenv(badModelEnv, tc.pred)
		targets := "y.npy"
		if tc.task == "classification" {
			os.WriteFile("labels.csv", []byte(strings.Repeat("0\n1\n", 20)), 0o644)
			targets = "labels.csv"
		}
		for _, m := range []string{"TIME", "LIME", "SAGE", "SAGE-m", "SAGE-z", "PERM"} {
			args := []string{"explain", "-data", "x.npy", "-targets", targets, "-task", tc.task, "-model-cmd", cmd, "-method", m,
				"-model-timeout", "1m"}
			_, _, err := runCmd(t, args...)
			if err == nil {
				t.Errorf("%s with a model predicting %s: no error", m, tc.pred)
				continue
			}
			got, code := errorLine(err)
			t.Logf("%s, model predicting %s: %s", m, tc.pred, got)
			if !strings.HasPrefix(got, "tempora: explain: ") || !strings.Contains(got, tc.want) || strings.Contains(got, "\n") || code != 1 {
				t.Errorf("%s with a model predicting %s: %q (exit status %d), want one line containing %q, status 1", m, tc.pred, got, code, tc.want)
			}
			if strings.Contains(got, "model: model") {
				t.Errorf("%s with a model predicting %s: %q says model twice", m, tc.pred, got)
			}
			if !math.IsNaN(mustFloat(tc.pred)) && strings.Contains(got, "NaN") {
				t.Errorf("%s with a model predicting %s: the message speaks of NaN: %q", m, tc.pred, got)
			}
		}
	}
}

func mustFloat(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return v
}
