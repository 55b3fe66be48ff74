package experiments

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/synth"
)

// TestInstanceScoresDesigned scores per-instance attributions on a
// hand-made Max model whose instances have their maxima at different
// timesteps, so that the per-instance truth differs from the global truth.
func TestInstanceScoresDesigned(t *testing.T) {
	feats := []synth.FeatureFunction{
		{Window: tempora.Window{Start: 0, End: 3}, Aggregator: synth.Max, SD: 1, Coefficient: 1, Relevant: true},
		{Window: tempora.Window{Start: 0, End: 3}, Aggregator: synth.Max, SD: 1, Coefficient: 1},
	}
	m, err := synth.NewModel(tempora.Regression, 2, 4, 0, 0, feats)
	if err != nil {
		t.Fatal(err)
	}
	// Instance i has feature 0's maximum at timestep i; feature 1 is noise.
	x := tempora.NewTensor(4, 2, 4)
	for i := range 4 {
		x.Data[i*8+i] = 1
		x.Data[i*8+4+(3-i)] = 1
	}
	data := &tempora.Dataset{X: x, Y: make([]float64, 4), Task: tempora.Regression}

	// Exact attributions: every instance ranks its one true cell first.
	exact := tempora.NewTensor(4, 2, 4)
	for i := range 4 {
		exact.Data[i*8+i] = 2
		for c := range 8 {
			if c != i {
				exact.Data[i*8+c] = 0.5
			}
		}
	}
	ms, err := instanceScores(m, data, &tempora.Explanation{D: 2, L: 4, Cells: make([]float64, 8)}, exact)
	if err != nil {
		t.Fatal(err)
	}
	// Feature level: every instance has one true feature (0) and one false
	// (1), feature scores (2 + 3·0.5)/4 against 0.5: ranked first.
	checkMetrics(t, "exact", ms, map[string]float64{
		"instance-timestep-auroc": 1, "instance-timestep-auprc": 1,
		"instance-feature-auroc": 1, "instance-feature-auprc": 1,
	})

	// The global truth (feature 0's whole window) as every instance's
	// attribution: the true cell ties with the 3 other window cells above
	// 4 zeros, so AUROC = (4 + 3·½)/7 and AP = ¼ (recall 1 at precision ¼).
	global := []float64{1, 1, 1, 1, 0, 0, 0, 0}
	ms, err = instanceScores(m, data, &tempora.Explanation{D: 2, L: 4, Cells: global}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "global", ms, map[string]float64{
		"instance-timestep-auroc": 5.5 / 7, "instance-timestep-auprc": 0.25,
		"instance-feature-auroc": 1, "instance-feature-auprc": 1,
	})

	if _, err := instanceScores(tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error { return nil }), data, &tempora.Explanation{D: 2, L: 4, Cells: global}, nil); err == nil {
		t.Error("no error for a model without per-instance truth")
	}
}

// TestLocalSuite runs the local suite at quick scale with OCC on one
// model: its records carry the per-instance metrics, with values in [0, 1],
// and every feature of the problem is a window maximum.
func TestLocalSuite(t *testing.T) {
	out := t.TempDir()
	o := Options{Suite: "local", Quick: true, Models: 1, Methods: []string{"OCC", "TIME"}, Out: out, Workers: 1}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for _, r := range recs {
		for _, name := range []string{"timestep-auroc", "timestep-auprc", "instance-timestep-auroc", "instance-timestep-auprc"} {
			v, ok := r.Get(name)
			if !ok || math.IsNaN(v) || v < 0 || v > 1 {
				t.Errorf("%s: %s = %v (present %v), want a value in [0, 1]", r.Method, name, v, ok)
			}
		}
	}
	p, err := synthesise(context.Background(), localProblem, 1)
	if err != nil {
		t.Fatal(err)
	}
	for j := range p.Data.X.D {
		if a := p.Model.(*synth.Model).Feature(j).Aggregator; a != synth.Max {
			t.Errorf("feature %d: aggregator %v, want max", j, a)
		}
	}
}

// TestEvaluateAttributions scores attribution files against a saved
// problem: its own per-instance truth scores 1, the global cells derived
// from it score as they should, and a file of the wrong shape is refused.
func TestEvaluateAttributions(t *testing.T) {
	agg := synth.Max
	p, err := synth.Generate(synth.Config{Instances: 30, Features: 4, Timesteps: 6, FractionRelevant: 0.5, Aggregator: &agg}, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	n := 10
	truth, err := instanceTruth(p.Model, p.Data, n)
	if err != nil {
		t.Fatal(err)
	}
	a := tempora.NewTensor(n, 4, 6)
	for k, b := range truth {
		if b {
			a.Data[k] = -1 // signs do not matter
		}
	}
	path := filepath.Join(dir, "attributions.npy")
	if err := dataio.WriteTensorNPY(path, a); err != nil {
		t.Fatal(err)
	}
	rec, err := EvaluateFiles(dir, "", path, method.TopN, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"instance-timestep-auroc", "instance-timestep-auprc", "instance-feature-auroc", "instance-feature-auprc", "feature-auroc", "feature-auprc"} {
		if v, ok := rec.Get(name); !ok || v != 1 {
			t.Errorf("%s = %v (present %v), want 1", name, v, ok)
		}
	}
	// The global cells are the fraction of the n instances whose argmax is
	// the cell: every true cell of the global truth that some instance
	// picks, and no false cell, scores above zero.
	if v, _ := rec.Get("timestep-fdr-all"); v != 0 {
		t.Errorf("timestep-fdr-all %v, want 0", v)
	}
	bad := tempora.NewTensor(2, 4, 5)
	if err := dataio.WriteTensorNPY(path, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := EvaluateFiles(dir, "", path, method.TopN, false); err == nil {
		t.Error("no error for attributions of the wrong shape")
	}
}
