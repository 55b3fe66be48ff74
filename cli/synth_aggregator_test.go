package cli

import (
	"path/filepath"
	"testing"

	"github.com/tempora-dev/tempora/synth"
)

// TestSynthAggregator checks that -aggregator fixes every feature's
// aggregator and that an unknown one is a usage error.
func TestSynthAggregator(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	mustRun(t, "synth", "-out", dir, "-instances", "40", "-features", "5", "-timesteps", "6", "-aggregator", "average")
	p, err := synth.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 5 {
		if a := p.Model.Feature(j).Aggregator; a != synth.Average {
			t.Errorf("feature %d: aggregator %v, want average", j, a)
		}
	}
	if p.Config.Aggregator == nil || *p.Config.Aggregator != synth.Average {
		t.Errorf("problem.json's config has aggregator %v, want average", p.Config.Aggregator)
	}
	if _, _, err := runCmd(t, "synth", "-out", dir+"2", "-aggregator", "median"); exitStatus(err) != 2 {
		t.Errorf("-aggregator median: error %v, want a usage error (status 2)", err)
	}
}
