package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProgressText(t *testing.T) {
	for _, tc := range []struct {
		n, total int64
		exact    bool
		el       time.Duration
		want     string
	}{
		{250_000, 1_000_000, true, 10 * time.Second, "TIME: 250k of 1M instance evaluations (25.0%), 10s elapsed, 25k/s, 30s left"},
		{250_000, 1_000_000, false, 10 * time.Second, "TIME: 250k of at most 1M instance evaluations (25.0%), 10s elapsed, 25k/s, 30s left at most"},
		{0, 1_000_000, true, 0, "TIME: 0 of 1M instance evaluations (0.0%), 0s elapsed, ? left"},
		{5000, 0, false, 2 * time.Second, "TIME: 5000 instance evaluations, 2s elapsed, 2500/s"},
	} {
		if got := progressText("TIME", tc.n, tc.total, tc.exact, tc.el); got != tc.want {
			t.Errorf("progressText(%d, %d, %v, %v) = %q, want %q", tc.n, tc.total, tc.exact, tc.el, got, tc.want)
		}
	}
	if w := largeRunWarning("PERM", largeEvals-1, true); w != "" {
		t.Errorf("warning below the threshold: %q", w)
	}
	w := largeRunWarning("PERM", 3_600_000_000, false)
	if !strings.Contains(w, "PERM will make up to 3.6G instance evaluations") || !strings.Contains(w, "1h0m0s") {
		t.Errorf("warning: %q", w)
	}
}

// TestExplainProgress runs explain with -progress json (lines every half
// second and a final one with the run's count), with -quiet (no progress),
// with the default text progress to a non-terminal (no line in a short run)
// and with a configuration above the warning threshold.
func TestExplainProgress(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	mustRun(t, "synth", "-out", dir, "-instances", "60", "-features", "3", "-timesteps", "5", "-seed", "1")
	_, errOut, err := runCmd(t, "explain", "-problem", dir, "-method", "OCC", "-progress", "json")
	if err != nil {
		t.Fatal(err)
	}
	var last progressLine
	lines := 0
	for _, l := range strings.Split(errOut, "\n") {
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var doc map[string]progressLine
		if err := json.Unmarshal([]byte(l), &doc); err != nil {
			t.Fatalf("progress line %q: %v", l, err)
		}
		last = doc["progress"]
		lines++
	}
	// OCC's estimate is exact: 60 instances × (1 + 3 features × 5 windows).
	if lines == 0 || !last.Done || !last.Exact || last.Total != 60*16 || last.Evals != last.Total {
		t.Errorf("last progress line %+v after %d lines; stderr:\n%s", last, lines, errOut)
	}
	if !strings.Contains(errOut, "960 instance evaluations") {
		t.Errorf("stderr:\n%s", errOut)
	}
	for _, args := range [][]string{{"-quiet"}, nil} {
		_, errOut, err = runCmd(t, append([]string{"explain", "-problem", dir, "-method", "OCC"}, args...)...)
		if err != nil || strings.Contains(errOut, "{") || strings.Contains(errOut, "elapsed") {
			t.Errorf("%v: %v, stderr:\n%s", args, err, errOut)
		}
	}
	_, _, err = runCmd(t, "explain", "-problem", dir, "-progress", "xml")
	if err == nil || !strings.Contains(err.Error(), `-progress "xml": want text or json`) {
		t.Errorf("-progress xml: %v", err)
	}
	// A huge estimate (PERM at 10⁹ permutations per cell) is written
	// without overflow.
	if w := largeRunWarning("PERM", 60*(1+15*1_000_000_000), false); !strings.Contains(w, "900G") {
		t.Errorf("warning: %q", w)
	}
}
