package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestExplainBudget runs TIME on the small problem with a budget of model
// calls below the full run's: the command succeeds, says on standard error
// and in the report that the budget stopped it and how many features are
// undecided, marks them in the table and in the JSON, and reports its
// estimate; and with -batch auto and -batch 64 it reports the batch size,
// with the full run's results.
func TestExplainBudget(t *testing.T) {
	dir := smallProblem(t)
	full, _, err := runCmd(t, "explain", "-problem", dir)
	if err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(t.TempDir(), "time.json")
	out, errOut, err := runCmd(t, "explain", "-problem", dir, "-max-calls", "100", "-json", jsonPath, "-progress", "json")
	if err != nil {
		t.Fatalf("explain -max-calls: %v\n%s", err, errOut)
	}
	for _, want := range []string{"stopped by the budget (-max-calls)", "undecided", "warning: stopped by the budget (max-calls) of 100 model calls"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "stopped by the budget (-max-calls) with") || !strings.Contains(errOut, `{"estimate":{"after":"baseline"`) {
		t.Errorf("standard error lacks the stop or the estimate:\n%s", errOut)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var e tempora.Explanation
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if e.Accounting.StoppedBy != "max-calls" || !e.Accounting.Incomplete || e.Accounting.ModelCalls > 100 || undecided(&e) == 0 {
		t.Errorf("JSON accounting %+v, %d undecided", e.Accounting, undecided(&e))
	}
	for _, batch := range []string{"auto", "64"} {
		out, errOut, err := runCmd(t, "explain", "-problem", dir, "-batch", batch)
		if err != nil {
			t.Fatalf("explain -batch %s: %v\n%s", batch, err, errOut)
		}
		if !strings.Contains(out, "batch: ") || !strings.Contains(errOut, "estimate after the baseline: at most") {
			t.Errorf("-batch %s: no batch line in the report or no estimate:\n%s\n%s", batch, out, errOut)
		}
		if table(out) != table(full) {
			t.Errorf("-batch %s: results differ from the default run's:\n%s\n%s", batch, out, full)
		}
	}
	if _, _, err := runCmd(t, "explain", "-problem", dir, "-batch", "many"); err == nil || !strings.Contains(err.Error(), "want auto") {
		t.Errorf("-batch many: %v", err)
	}
}

// table returns a report from its features' table on (the results,
// without the settings and the model calls).
func table(report string) string {
	if i := strings.Index(report, "\nrank"); i >= 0 {
		return report[i:]
	}
	return report
}
