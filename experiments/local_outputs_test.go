package experiments

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/internal/npy"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/synth"
)

// truthModel is a model of two horizons, "near" and "far", over 3
// features × 4 timesteps, with a hand-built per-instance truth per output
// (InstanceOutputTruther): "near" is the maximum of feature 0 over all
// its timesteps and reads, in each instance, the cell of that maximum;
// "far" is the mean of feature 1 over timesteps 2 and 3, which it reads.
// Feature 2 is read by neither.
type truthModel struct{}

func (truthModel) Predict(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		hi := math.Inf(-1)
		for t := range x.L {
			hi = max(hi, x.At(i, 0, t))
		}
		dst[i*2] = hi
		dst[i*2+1] = (x.At(i, 1, 2) + x.At(i, 1, 3)) / 2
	}
	return nil
}

func (truthModel) InstanceOutputTruth(dst []bool, x *tempora.Tensor) error {
	if x.D != 3 || x.L != 4 || len(dst) != x.M*2*3*4 {
		return os.ErrInvalid
	}
	clear(dst)
	for i := range x.M {
		arg := 0
		for t := range x.L {
			if x.At(i, 0, t) > x.At(i, 0, arg) {
				arg = t
			}
		}
		dst[((i*2+0)*3+0)*4+arg] = true
		dst[((i*2+1)*3+1)*4+2] = true
		dst[((i*2+1)*3+1)*4+3] = true
	}
	return nil
}

// truthProblem returns 12 instances of positive values (so that occluding
// a cell by zero never moves the maximum unless it is the maximum) for
// truthModel, whose outputs are the targets.
func truthProblem() (*tempora.Dataset, truthModel) {
	x := tempora.NewTensor(12, 3, 4)
	rng := tempora.NewRand(2, "truth-problem")
	for k := range x.Data {
		x.Data[k] = 0.1 + math.Abs(rng.NormFloat64())
	}
	var f truthModel
	y := make([]float64, 24)
	_ = f.Predict(y, x)
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression,
		Outputs: &tempora.Outputs{Kind: tempora.Horizons, K: 2, Names: []string{"near", "far"}}}, f
}

// TestInstanceScoresOutputs checks the per-instance metrics of a model
// with several outputs against its per-instance truth per output: exact
// attributions and OCC's (which here find each output's cells exactly)
// score 1 over all outputs and per output; a global explanation's
// per-output cells score as the counting says; an explanation of one
// output is scored on that output alone; and an explanation of the whole
// model without per-output cells is an error.
func TestInstanceScoresOutputs(t *testing.T) {
	data, f := truthProblem()
	perfect := map[string]float64{}
	for _, m := range []string{"instance-timestep-auroc", "instance-timestep-auprc", "instance-feature-auroc", "instance-feature-auprc"} {
		for _, s := range []string{"", "[0]", "[1]"} {
			perfect[m+s] = 1
		}
	}
	truth, err := instanceTruth(f, data, 12)
	if err != nil {
		t.Fatal(err)
	}
	exact := tempora.NewTensor(24, 3, 4)
	for k, b := range truth {
		if b {
			exact.Data[k] = 2
		}
	}
	whole := &tempora.Explanation{D: 3, L: 4, Cells: make([]float64, 12)}
	ms, err := instanceScores(f, data, whole, exact)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "exact", ms, perfect)

	e, local, err := attribute(context.Background(), baselines.Occlusion{}, f, nil, data)
	if err != nil {
		t.Fatal(err)
	}
	if local.M != 24 {
		t.Fatalf("OCC gave %d rows of attributions, want 12 instances × 2 outputs", local.M)
	}
	if ms, err = instanceScores(f, data, e, local); err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "OCC", ms, perfect)

	// Global cells: output 0's are feature 0's four cells, so each
	// instance's one true cell ties with three false ones above eight
	// zeros (AUROC (8 + 3·½)/11, AP ¼); output 1's are its truth.
	global := *whole
	global.Outputs = tempora.NewOutputResults(data.Outputs, data)
	for t := range 4 {
		global.Outputs.Outputs[0].Cells[t] = 1
	}
	global.Outputs.Outputs[1].Cells[4+2], global.Outputs.Outputs[1].Cells[4+3] = 1, 1
	if ms, err = instanceScores(f, data, &global, nil); err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "global", ms, map[string]float64{
		"instance-timestep-auroc": (9.5/11 + 1) / 2, "instance-timestep-auprc": (0.25 + 1) / 2,
		"instance-feature-auroc": 1, "instance-feature-auprc": 1,
		"instance-timestep-auroc[0]": 9.5 / 11, "instance-timestep-auprc[0]": 0.25,
		"instance-feature-auroc[0]": 1, "instance-feature-auprc[0]": 1,
		"instance-timestep-auroc[1]": 1, "instance-timestep-auprc[1]": 1,
		"instance-feature-auroc[1]": 1, "instance-feature-auprc[1]": 1,
	})

	// One output: OCC on "far" alone.
	e, local, err = attribute(context.Background(), baselines.Occlusion{Output: 2}, f, nil, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Output != "far" || local.M != 12 {
		t.Fatalf("OCC on output far: explains %q with %d rows of attributions", e.Output, local.M)
	}
	if ms, err = instanceScores(f, data, e, local); err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "OCC far", ms, map[string]float64{
		"instance-timestep-auroc[1]": 1, "instance-timestep-auprc[1]": 1, "instance-feature-auroc[1]": 1, "instance-feature-auprc[1]": 1,
	})
	// The same output's cells as a global method's.
	if ms, err = instanceScores(f, data, e, nil); err != nil {
		t.Fatal(err)
	}
	if len(ms) != 4 || !strings.HasSuffix(ms[0].Name, "[1]") {
		t.Errorf("global cells of output far: metrics %v, want output 1's four", ms)
	}

	if _, err := instanceScores(f, data, whole, nil); err == nil || !strings.Contains(err.Error(), "without each output's cells") {
		t.Errorf("a whole-model explanation without per-output cells: %v", err)
	}
	if hasInstanceTruth(tempora.ModelFunc(f.Predict), data) {
		t.Error("a model without InstanceOutputTruth has a per-instance truth of several outputs")
	}
}

// writeNPY writes data of the given shape to a .npy file in dir.
func writeNPY(t *testing.T, dir, name string, shape []int, data []float64) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := npy.Write(f, shape, data); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEvaluateAttributionsOutputs checks "tempora evaluate
// -attributions" of a 4-D file, instances × outputs × features ×
// timesteps: for a problem with one output, one output's file scores as
// the 3-D file does; a file of another number of outputs than the
// problem's model has is refused, naming both.
func TestEvaluateAttributionsOutputs(t *testing.T) {
	agg := synth.Max
	p, err := synth.Generate(synth.Config{Instances: 30, Features: 4, Timesteps: 6, FractionRelevant: 0.5, Aggregator: &agg}, 5)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	a := tempora.NewTensor(10, 4, 6)
	rng := tempora.NewRand(5, "attributions")
	for k := range a.Data {
		a.Data[k] = rng.NormFloat64()
	}
	three := filepath.Join(dir, "a3.npy")
	if err := dataio.WriteTensorNPY(three, a); err != nil {
		t.Fatal(err)
	}
	four := writeNPY(t, dir, "a4.npy", []int{10, 1, 4, 6}, a.Data)
	r3, err := EvaluateFiles(dir, "", three, method.TopN, false)
	if err != nil {
		t.Fatal(err)
	}
	r4, err := EvaluateFiles(dir, "", four, method.TopN, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(r3.Metrics) != len(r4.Metrics) {
		t.Fatalf("3-D: %v; 4-D of one output: %v", r3.Metrics, r4.Metrics)
	}
	for i, m := range r3.Metrics {
		if r4.Metrics[i] != m {
			t.Errorf("metric %s: 3-D %v, 4-D of one output %v", m.Name, m.Value, r4.Metrics[i].Value)
		}
	}
	two := writeNPY(t, dir, "a2.npy", []int{5, 2, 4, 6}, a.Data)
	if _, err := EvaluateFiles(dir, "", two, method.TopN, false); err == nil || !strings.Contains(err.Error(), "attributions of 2 outputs, the model of the problem") {
		t.Errorf("attributions of 2 outputs of a one-output problem: %v", err)
	}
	five := writeNPY(t, dir, "a5.npy", []int{1, 10, 1, 4, 6}, a.Data)
	if _, err := EvaluateFiles(dir, "", five, method.TopN, false); err == nil || !strings.Contains(err.Error(), "want instances × features × timesteps, or instances × outputs × features × timesteps") {
		t.Errorf("attributions of rank 5: %v", err)
	}
}
