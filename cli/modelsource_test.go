package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// runtimeField matches the only run-dependent field of an explanation's
// JSON.
var runtimeField = regexp.MustCompile(`"runtime_seconds": [0-9.e+-]+`)

// TestExplainModelProcs checks that the report and the JSON explanation
// (runtime aside) are byte-identical for 1 and 3 model processes, with
// TIME and with a baseline.
func TestExplainModelProcs(t *testing.T) {
	t.Setenv(serverEnv, "1")
	// examplemodel's default terms need 8 features × 20 timesteps.
	p := filepath.Join(t.TempDir(), "p")
	mustRun(t, "synth", "-out", p, "-instances", "60", "-features", "8", "-timesteps", "20", "-task", "regression", "-noise", "auto", "-seed", "4")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := "'" + strings.ReplaceAll(exe, "'", `'\''`) + "' -test.run=^$"
	for _, method := range []string{"time", "perm"} {
		var outs, jsons [2]string
		for k, procs := range []string{"1", "3"} {
			jsonPath := filepath.Join(t.TempDir(), "e.json")
			outs[k] = mustRun(t, "explain", "-data", filepath.Join(p, "data.npy"), "-targets", filepath.Join(p, "targets.npy"),
				"-task", "regression", "-model-cmd", cmd, "-model-procs", procs, "-method", method, "-permutations", "20", "-seed", "2", "-json", jsonPath)
			b, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			jsons[k] = runtimeField.ReplaceAllString(string(b), `"runtime_seconds": 0`)
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: reports differ for 1 and 3 model processes:\n%s\n%s", method, outs[0], outs[1])
		}
		if jsons[0] != jsons[1] {
			t.Errorf("%s: explanations differ for 1 and 3 model processes:\n%s\n%s", method, jsons[0], jsons[1])
		}
	}
}

func TestModelSourceUsage(t *testing.T) {
	p := smallProblem(t)
	data := func(extra ...string) []string {
		return append([]string{"explain", "-data", filepath.Join(p, "data.npy"), "-targets", filepath.Join(p, "targets.npy"), "-task", "classification"}, extra...)
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, tc := range []struct {
		args  []string
		want  string
		usage bool
	}{
		{data("-model-cmd", "m", "-model-fd", "3"), "-model-cmd and -model-fd exclude each other", true},
		{data("-model-cmd", "m", "-model-procs", "0"), "-model-procs 0: must be in [1, 256]", true},
		{data("-model-fd", "3", "-model-procs", "2"), "-model-procs does not apply to -model-fd", true},
		{data("-model-fd", "2"), `"2" is not a file descriptor number ≥ 3`, true},
		{data("-model-fd", "3,x"), `"x" is not a file descriptor`, true},
		{data("-model-fd", "3:3"), "file descriptor 3 given twice", true},
		{data("-model-fd", ""), "-data needs -model-cmd", true},
		{[]string{"explain", "-problem", p, "-model-procs", "2"}, "-model-procs cannot be combined with -problem", true},
		{data("-model-fd", "100000"), "file descriptor 100000", false},
		{data("-model-fd", strconv.Itoa(int(devNull.Fd()))), "is not a socket", false},
	} {
		t.Run(tc.want, func(t *testing.T) {
			var o, e bytes.Buffer
			err := run(tc.args, &o, &e)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			var u usageError
			if errors.As(err, &u) != tc.usage {
				t.Errorf("usage error = %v, want %v", !tc.usage, tc.usage)
			}
		})
	}
	// A descriptor that failed the checks still belongs to its owner.
	if _, err := devNull.Stat(); err != nil {
		t.Errorf("-model-fd closed a descriptor it rejected: %v", err)
	}
}
