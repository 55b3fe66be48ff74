package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEvaluateRefusedLeavesNothing: a refused "evaluate -problems" (here a
// method name too long for a record's path) writes nothing, so that a rerun
// reports its own cause (issue 24; it used to leave OUT/manifest.json).
func TestEvaluateRefusedLeavesNothing(t *testing.T) {
	root := t.TempDir()
	probs, out := filepath.Join(root, "problems"), filepath.Join(root, "eval")
	mustRun(t, append(append([]string{"problems"}, tinyProblems...), "-out", probs)...)
	zeros := "[[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0]]"
	for _, m := range []string{"model=0", "model=1"} {
		dir := filepath.Join(probs, "grid", "instances=60", "features=3", "timesteps=6", m)
		if err := os.WriteFile(filepath.Join(dir, "s.json"), []byte(zeros), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("X", 250)
	_, _, err := runCmd(t, "evaluate", "-problems", probs, "-scores", "s.json", "-method", long, "-out", out)
	if err == nil || !strings.Contains(err.Error(), "longer than 200") {
		t.Fatalf("evaluate with a %d-byte method name: error %v, want one about its length", len(long), err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("refused evaluate left %s behind (%v)", out, err)
	}
	mustRun(t, "evaluate", "-problems", probs, "-scores", "s.json", "-method", "EXT", "-out", out)
}

// TestOutputIsNotInput: explain refuses -json or -csv files that it reads,
// under any name (issue 24), before it does any work, and a -json that is
// a directory is reported without naming a temporary file.
func TestOutputIsNotInput(t *testing.T) {
	dir := t.TempDir()
	prob := filepath.Join(dir, "p")
	mustRun(t, "synth", "-out", prob, "-instances", "40", "-features", "2", "-timesteps", "4", "-relevant", "0.5", "-seed", "1")
	data := filepath.Join(prob, "data.npy")
	link := filepath.Join(dir, "link.npy")
	if err := os.Link(data, link); err != nil {
		t.Skip("no hard links here:", err)
	}
	truth := filepath.Join(prob, "truth.json")
	before, err := os.ReadFile(truth)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "-problem", prob, "-method", "perm", "-json", truth}, "explain: -json " + truth + " is the input file " + truth + " (-problem)"},
		{[]string{"explain", "-problem", prob, "-method", "perm", "-csv", link}, "explain: -csv " + link + " is the input file " + data + " (-problem)"},
		{[]string{"explain", "-data", link, "-targets", filepath.Join(prob, "targets.npy"), "-task", "regression", "-model-cmd", "false", "-json", data},
			"explain: -json " + data + " is the input file " + link + " (-data)"},
		{[]string{"explain", "-problem", prob, "-method", "perm", "-json", filepath.Join(dir, "j"), "-csv", filepath.Join(dir, "j")}, "explain: -json and -csv name the same file"},
	} {
		_, _, err := runCmd(t, c.args...)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", strings.Join(c.args, " "), err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", strings.Join(c.args, " "), err, c.want)
		}
	}
	if after, _ := os.ReadFile(truth); string(after) != string(before) {
		t.Error("truth.json was overwritten")
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCmd(t, "explain", "-problem", prob, "-method", "perm", "-json", sub)
	if err == nil || strings.Contains(err.Error(), ".tmp") || !strings.Contains(err.Error(), "write "+sub+": is a directory") {
		t.Errorf("-json DIR: error %v, want one saying it is a directory, without a temporary file's name", err)
	}
}

// TestRehash edits a record's metric by hand (the audit of issue 24 changed
// a LIME record's feature power, and the report's mean moved without a
// word): report and merge refuse the record, a resumed run moves it aside
// and recomputes it, and tempora rehash accepts it.
func TestRehash(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	args := append(append([]string{"run"}, tinyProblems...), "-methods", "PERM", "-workers", "1", "-out", run)
	mustRun(t, args...)
	rel := filepath.Join("grid", "instances=60", "features=3", "timesteps=6", "permutations=10", "model=0", "method=PERM.json")
	p := filepath.Join(run, "records", rel)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), `"name": "feature-power",`+"\n   \"value\": ", `"name": "feature-power",`+"\n   \"value\": 0.123", 1)
	edited = strings.Replace(edited, `0.123`, `0.123e0`, 1) // a new number whatever the old one was
	if edited == string(b) {
		t.Fatalf("no feature-power to edit in\n%s", b)
	}
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{"report", "-in", run, "-out", filepath.Join(root, "report")}, {"merge", "-out", filepath.Join(root, "merged"), run}} {
		if _, _, err := runCmd(t, c...); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Errorf("%s over an edited record: error %v, want a checksum mismatch", c[0], err)
		}
	}
	out := mustRun(t, "rehash", run)
	if want := run + ": rehashed 1 of 4 records\n"; out != want {
		t.Errorf("rehash printed %q, want %q", out, want)
	}
	mustRun(t, "report", "-in", run, "-out", filepath.Join(root, "report"))
	if out := mustRun(t, "rehash", p); out != p+": unchanged\n" {
		t.Errorf("second rehash printed %q", out)
	}
	// An edit without rehash: the resumed run recomputes the record.
	if err := os.WriteFile(p, []byte(strings.Replace(edited, "0.123e0", "0.5e0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCmd(t, args...)
	if err != nil || !strings.Contains(stderr, "damaged record records/grid/"+filepath.ToSlash(rel[len("grid/"):])+" (checksum mismatch") {
		t.Errorf("resumed run: %v\n%s", err, stderr)
	}
}

// TestHostileProblemDirectory puts a named pipe and a link to /dev/zero
// where a problem directory's files should be: explain, describe and
// evaluate fail at once, saying what the file is (issue 24).
func TestHostileProblemDirectory(t *testing.T) {
	root := t.TempDir()
	prob := filepath.Join(root, "p")
	mustRun(t, "synth", "-out", prob, "-instances", "40", "-features", "2", "-timesteps", "4", "-seed", "1")
	probs := filepath.Join(root, "problems")
	mustRun(t, append(append([]string{"problems"}, tinyProblems...), "-out", probs)...)
	type hostile struct {
		file, kind string
		make       func(string) error
	}
	var kinds []hostile
	kinds = append(kinds, hostile{"fifo", "is a named pipe (FIFO), not a regular file", func(p string) error { return mkfifo(p) }})
	if _, err := os.Stat("/dev/zero"); err == nil {
		kinds = append(kinds, hostile{"zero", "is a character device, not a regular file", func(p string) error { return os.Symlink("/dev/zero", p) }})
	}
	for _, k := range kinds {
		for _, c := range []struct {
			file string
			args []string
		}{
			{filepath.Join(prob, "data.npy"), []string{"explain", "-problem", prob}},
			{filepath.Join(prob, "targets.npy"), []string{"explain", "-problem", prob}},
			{filepath.Join(prob, "problem.json"), []string{"describe", prob}},
			{filepath.Join(prob, "truth.json"), []string{"describe", prob}},
			{filepath.Join(prob, "model.json"), []string{"explain", "-problem", prob}},
			{filepath.Join(probs, "index.json"), []string{"evaluate", "-problems", probs, "-scores", "s.json", "-method", "X", "-out", filepath.Join(root, "ev")}},
		} {
			saved := c.file + ".saved"
			if err := os.Rename(c.file, saved); err != nil {
				t.Fatal(err)
			}
			if err := k.make(c.file); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() { _, _, err := runCmd(t, c.args...); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.file+": "+k.kind) {
					t.Errorf("%s with %s a %s: error %v, want one saying %q", c.args[0], c.file, k.file, err, c.file+": "+k.kind)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s with %s a %s: still running after 10 s", c.args[0], c.file, k.file)
			}
			os.Remove(c.file)
			if err := os.Rename(saved, c.file); err != nil {
				t.Fatal(err)
			}
		}
	}
}
