package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
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

// TestEvaluateAttributions scores per-instance attributions from the
// command line: zero attributions tie every cell (AUROC ½) and, without
// -scores, give zero cell scores.
func TestEvaluateAttributions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	mustRun(t, "synth", "-out", dir, "-instances", "40", "-features", "4", "-timesteps", "6", "-aggregator", "max", "-seed", "2")
	f := filepath.Join(dir, "a.npy")
	if err := dataio.WriteTensorNPY(f, tempora.NewTensor(10, 4, 6)); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "evaluate", "-problem", dir, "-attributions", f, "-json")
	var m map[string]float64
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if m["instance-timestep-auroc"] != 0.5 || m["timestep-auroc"] != 0.5 || m["feature-power-all"] != 0 {
		t.Errorf("metrics of zero attributions %v, want AUROC ½ and no selection", m)
	}
	if _, ok := m["instance-feature-auprc"]; !ok {
		t.Errorf("no instance-feature-auprc in %v", m)
	}
	if _, _, err := runCmd(t, "evaluate", "-problem", dir); exitStatus(err) != 2 {
		t.Errorf("evaluate without -scores and -attributions: error %v, want a usage error", err)
	}
}
