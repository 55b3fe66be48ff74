package experiments

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tempora-dev/tempora/record"
)

// TestCorrelatedSuite runs the correlated suite with TIME on one model per
// setting and checks the records: the settings of one (ρ, box) share their
// problem whatever the truth and the test; and at ρ = 0.9 with the
// spreading black box, marginal TIME reports B (feature FDR ½ against the
// data-centric truth, power 1 against the model-centric one) while
// conditional TIME reports A only (FDR 0, power 1 against the data-centric
// truth). One model: the calibration is tested statistically in package
// explain (TestConditionalCalibration); this checks the plumbing, on a
// problem where each outcome has probability above 0.97 there.
func TestCorrelatedSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a suite")
	}
	out := t.TempDir()
	if err := Run(context.Background(), Options{Suite: "correlated", Quick: true, Models: 1, Methods: []string{"TIME"}, Out: out, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	recs, err := record.ReadAll(filepath.Join(out, "records"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 32 {
		t.Fatalf("%d records, want 32 (4 ρ × 2 boxes × 2 truths × 2 tests)", len(recs))
	}
	seeds := map[string]uint64{}
	got := map[string]float64{}
	for _, r := range recs {
		p := map[string]string{}
		for _, q := range r.Params {
			p[q.Key] = q.Value
		}
		k := p["rho"] + "/" + p["box"]
		if s, ok := seeds[k]; ok && s != r.Seed {
			t.Errorf("%s: seeds %d and %d: settings of one (ρ, box) analyse different problems", r.Key(), s, r.Seed)
		}
		seeds[k] = r.Seed
		if wantTest := map[string]string{"true": "conditional", "false": ""}[p["conditional"]]; r.Explanation == nil || r.Explanation.Test != wantTest {
			t.Errorf("%s: explanation test not %q", r.Key(), wantTest)
		}
		if k == "0.9/spread" {
			for _, m := range []string{"feature-power", "feature-fdr"} {
				v, _ := r.Get(m)
				got[p["truth"]+"/"+p["conditional"]+"/"+m] = v
			}
		}
	}
	if _, err := WriteProblems(context.Background(), Options{Suite: "correlated", Quick: true, Out: t.TempDir()}); err == nil {
		t.Error("WriteProblems wrote the correlated world, which has no saved form")
	}
	for k, want := range map[string]float64{
		"data/false/feature-fdr": 0.5, "model/false/feature-power": 1, "model/false/feature-fdr": 0,
		"data/true/feature-fdr": 0, "data/true/feature-power": 1, "model/true/feature-power": 0.5,
	} {
		if got[k] != want {
			t.Errorf("ρ = 0.9, spreading box, %s = %v, want %v", k, got[k], want)
		}
	}
}
