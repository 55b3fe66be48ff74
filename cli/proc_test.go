package cli

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
)

// TestRehashUnknownField adds a field this version does not know to a
// record: report refuses it and says to run rehash, and rehash then
// rehashes it, keeping the field, so that report accepts it (issue 33).
func TestRehashUnknownField(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	mustRun(t, append(append([]string{"run"}, tinyProblems...), "-methods", "PERM", "-workers", "1", "-out", run)...)
	p := filepath.Join(run, "records", "grid", "instances=60", "features=3", "timesteps=6", "permutations=10", "model=0", "method=PERM.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "{", `{"note": "checked by hand",`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	report := []string{"report", "-in", run, "-out", filepath.Join(root, "report")}
	if _, _, err := runCmd(t, report...); err == nil || !strings.Contains(err.Error(), "run tempora rehash") {
		t.Fatalf("report over a record with an unknown field: error %v, want one saying to run tempora rehash", err)
	}
	if out, want := mustRun(t, "rehash", run), run+": rehashed 1 of 4 records\n"; out != want {
		t.Errorf("rehash printed %q, want %q", out, want)
	}
	mustRun(t, report...)
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), `"note": "checked by hand"`) {
		t.Errorf("rehash dropped the field:\n%s", b)
	}
	if out := mustRun(t, "rehash", p); out != p+": unchanged\n" {
		t.Errorf("second rehash printed %q", out)
	}
}

// TestExplainOutputsAllOrNothing: a -csv that cannot be written leaves no
// -json either, and a -json that existed as it was (issue 33).
func TestExplainOutputsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	prob := filepath.Join(dir, "p")
	mustRun(t, "synth", "-out", prob, "-instances", "40", "-features", "2", "-timesteps", "4", "-seed", "1")
	j := filepath.Join(dir, "e.json")
	args := []string{"explain", "-problem", prob, "-method", "perm", "-permutations", "10", "-json", j, "-csv", filepath.Join(dir, "nodir", "e.csv")}
	if _, _, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), "-csv") {
		t.Fatalf("error %v, want one about -csv", err)
	}
	if _, err := os.Lstat(j); err == nil {
		t.Error("the -json file was written though -csv failed")
	}
	if err := os.WriteFile(j, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, args...); err == nil {
		t.Fatal("no error")
	}
	if b, _ := os.ReadFile(j); string(b) != "old\n" {
		t.Errorf("the -json file holds %q, want it as it was", b)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary %s left behind", e.Name())
		}
	}
}

// TestReportRemovesStaleTemporaries: report removes the temporaries a
// report killed midway left below its output (named after a process no
// longer running), and keeps those of a running process (issue 33).
func TestReportRemovesStaleTemporaries(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	mustRun(t, append(append([]string{"run"}, tinyProblems...), "-methods", "PERM", "-workers", "1", "-out", run)...)
	out := filepath.Join(root, "report")
	mustRun(t, "report", "-in", run, "-out", out)
	dead := filepath.Join(out, "tables", ".grid.md.tmp999999999-1")
	live := filepath.Join(out, "tables", ".grid.md.tmp"+strconv.Itoa(os.Getpid())+"-1")
	for _, p := range []string{dead, live} {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, "report", "-in", run, "-out", out)
	if _, err := os.Lstat(dead); err == nil {
		t.Error("the temporary of a process no longer running is still there")
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("the temporary of a running process was removed: %v", err)
	}
}

// TestAcceptedWithAWarning: what tempora reads as it is but warns of, and
// what it now refuses (issue 33).
func TestAcceptedWithAWarning(t *testing.T) {
	dir := t.TempDir()
	x := tempora.NewTensor(30, 2, 4)
	for k := range x.Data {
		x.Data[k] = float64(k % 7)
	}
	x.Data[x.Index(3, 1, 2)] = math.NaN()
	mask := make([]float64, len(x.Data))
	for k := range mask {
		mask[k] = 1
	}
	mask[x.Index(5, 0, 0)] = 0
	xp, mp, yp := filepath.Join(dir, "x.npy"), filepath.Join(dir, "m.npy"), filepath.Join(dir, "y.csv")
	if err := dataio.WriteTensorNPY(xp, x); err != nil {
		t.Fatal(err)
	}
	if err := dataio.WriteTensorNPY(mp, &tempora.Tensor{M: 30, D: 2, L: 4, Data: mask}); err != nil {
		t.Fatal(err)
	}
	ones := make([]float64, x.M)
	for i := range ones {
		ones[i] = 1
	}
	if err := dataio.WriteVectorCSV(yp, ones); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCmd(t, "describe", "-data", xp, "-mask", mp)
	if want := "tempora: warning: " + mp + " marks 1 cell observed where " + xp + " holds NaN (the first at instance 3, feature 1, timestep 2): they are missing"; err != nil || !strings.Contains(stderr, want) {
		t.Errorf("describe: %v, stderr %q, want %q", err, stderr, want)
	}
	_, stderr, _ = runCmd(t, "explain", "-data", xp, "-targets", yp, "-task", "classification", "-model-cmd", "false")
	if want := "tempora: warning: every label in " + yp + " is 1: the labels are all one class"; !strings.Contains(stderr, want) {
		t.Errorf("explain: stderr %q, want %q", stderr, want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"synth", "-out", filepath.Join(dir, "p"), "-seed", "1", "-seed", "2"}, `synth: -seed given 2 times ("1", then "2") (give each flag once`},
		{[]string{"describe", "-data", xp, "-data", xp}, "describe: -data given 2 times"},
		{append(append([]string{"export"}, tinyProblems...), "-shards", "100000", "-out", "o", "slurm"), "export: -shards 100000 for a suite of 4 items: want at most 4"},
		{append(append([]string{"run"}, tinyProblems...), "-shard", "7/100000", "-out", filepath.Join(dir, "r")), "run: -shard 7/100000 of a suite of 4 items holds no item: want n at most 4"},
	} {
		_, _, err := runCmd(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitStatus(err) != 2 {
			t.Errorf("%s: error %v, want a usage error containing %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}

// withFlags returns base (a command, then "-flag value" pairs) with the
// flags of more given there instead: a flag is given once (parseFlags
// refuses a repeat).
func withFlags(base []string, more ...string) []string {
	given := map[string]bool{}
	for _, a := range more {
		if strings.HasPrefix(a, "-") {
			given[a] = true
		}
	}
	out := []string{base[0]}
	for k := 1; k < len(base); k++ {
		if given[base[k]] && k+1 < len(base) {
			k++
			continue
		}
		out = append(out, base[k])
	}
	return append(out, more...)
}
