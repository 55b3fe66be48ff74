package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
