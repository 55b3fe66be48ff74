package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSynthIrregular checks the irregular flags of tempora synth: they
// reach problem.json under their one name each, and bad values get a
// usage error naming the flag; without them the problem is complete.
func TestSynthIrregular(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	out := mustRun(t, "synth", "-out", dir, "-instances", "50", "-features", "3", "-timesteps", "8",
		"-missing-rate", "0.2", "-length-spread", "2", "-alignment", "end", "-missing-mechanism", "mnar")
	if !strings.Contains(out, "irregular: alignment end, lengths 4 to 8, missing rate 0.2 (mnar)") {
		t.Errorf("output %q", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "problem.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"length_spread":2`, `"alignment":"end"`, `"missing_rate":0.2`, `"missing_mechanism":"mnar"`} {
		if !strings.Contains(strings.ReplaceAll(string(b), " ", ""), want) {
			t.Errorf("problem.json lacks %s", want)
		}
	}
	dense := filepath.Join(t.TempDir(), "d")
	mustRun(t, "synth", "-out", dense, "-instances", "50", "-features", "3", "-timesteps", "8")
	if b, err := os.ReadFile(filepath.Join(dense, "problem.json")); err != nil || strings.Contains(string(b), "irregular") {
		t.Errorf("a complete problem mentions irregular: %v", err)
	}
	for _, c := range [][2]string{
		{"-missing-rate=1", "-missing-rate"}, {"-length-spread=0.5", "-length-spread"},
		{"-alignment=middle", "-alignment"}, {"-missing-mechanism=mar", "-missing-mechanism"},
	} {
		_, errOut, err := runCmd(t, "synth", "-out", filepath.Join(t.TempDir(), "x"), c[0])
		if err == nil || !strings.Contains(err.Error()+errOut, c[1]) {
			t.Errorf("%s: error %v %s", c[0], err, errOut)
		}
	}
}
