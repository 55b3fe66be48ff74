package synth

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/errmsg"
)

// outputWorldConfigs are one small configuration of each world, noise
// free.
var outputWorldConfigs = map[string]OutputsConfig{
	"classes":  {Kind: tempora.Classes, Instances: 300, Features: 6, Timesteps: 12, Outputs: 5},
	"horizons": {Kind: tempora.Horizons, Instances: 300, Features: 6, Timesteps: 12, Outputs: 3, Relevant: 4, Partial: 2},
	"steps":    {Kind: tempora.Steps, Instances: 300, Features: 5, Timesteps: 12, Relevant: 3, Period: 3},
	"peek":     {Kind: tempora.Steps, Instances: 300, Features: 5, Timesteps: 12, Relevant: 3, Period: 4, Peek: true},
	"null":     {Kind: tempora.Horizons, Instances: 300, Features: 4, Timesteps: 10, Outputs: 3, Relevant: 2, NullOutputs: 1},
}

// TestOutputsTruthExact checks each world's truth against its black box
// by perturbation (noise free, so the black box is the targets'
// function): changing one observed cell (instance i, feature j, timestep
// t) changes output k only if (j, t) lies in output k's true window of j,
// and every cell of every true window changes output k for some instance.
// So the truth is the set of cells the outputs read, exactly; for the
// sparse feature, the cells holding the last observation in some
// instance. The null outputs' black box reads more than their truth, so
// the check there compares against the targets: output k of the null
// world's targets never moves.
func TestOutputsTruthExact(t *testing.T) {
	for name, cfg := range outputWorldConfigs {
		for seed := range uint64(3) {
			p, err := GenerateOutputs(cfg, seed)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.NullOutputs > 0 {
				checkNullTargets(t, name, p)
				continue
			}
			moved := perturbations(t, p.Model, p.Data.X)
			x := p.Data.X
			for o, ot := range p.Outputs {
				for j, f := range ot.Features {
					for s := range x.L {
						want := f.Relevant && f.Window.Contains(s)
						if got := moved[(o*x.D+j)*x.L+s]; got != want {
							t.Errorf("%s seed %d: output %d, feature %d, timestep %d: moved %v, truth %v (window %v)", name, seed, o, j, s, got, want, f.Window)
						}
					}
				}
			}
		}
	}
}

// perturbations returns, for every output k, feature j and timestep t
// (index (k·D + j)·L + t), whether adding 1 to cell (i, j, t) changes
// output k for some instance i where the cell is observed.
func perturbations(t *testing.T, m tempora.Model, x *tempora.Tensor) []bool {
	t.Helper()
	spec := m.(*OutputsModel).spec
	k := spec.K
	moved := make([]bool, k*x.D*x.L)
	base := make([]float64, x.M*k)
	if err := m.Predict(base, x); err != nil {
		t.Fatal(err)
	}
	y := x.Clone()
	out := make([]float64, x.M*k)
	for j := range x.D {
		for s := range x.L {
			for i := range x.M {
				if v := x.At(i, j, s); v == v {
					y.Set(i, j, s, v+1)
				}
			}
			if err := m.Predict(out, y); err != nil {
				t.Fatal(err)
			}
			for i := range x.M {
				y.Set(i, j, s, x.At(i, j, s))
				for o := range k {
					if math.Abs(out[i*k+o]-base[i*k+o]) > 1e-12 {
						moved[(o*x.D+j)*x.L+s] = true
					}
				}
			}
		}
	}
	return moved
}

// checkNullTargets checks that the targets' function of the null outputs
// reads nothing (their truth has no relevant feature), while the black
// box reads features there.
func checkNullTargets(t *testing.T, name string, p *OutputsProblem) {
	t.Helper()
	k := p.Data.K()
	for o := k - p.Config.NullOutputs; o < k; o++ {
		for j, f := range p.Outputs[o].Features {
			if f.Relevant {
				t.Errorf("%s: null output %d has relevant feature %d", name, o, j)
			}
		}
		if len(p.Model.spec.Units[o].Reads) == 0 {
			t.Errorf("%s: the black box's null output %d reads nothing", name, o)
		}
	}
}

// TestOutputsNoiseWeights checks that noise weights change the black box
// only: the data, targets and truth are those of the same world without
// them, and the black box reads every feature at every timestep.
func TestOutputsNoiseWeights(t *testing.T) {
	for name, cfg := range outputWorldConfigs {
		p0, err := GenerateOutputs(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		cfg.NoiseScale = 0.05
		p1, err := GenerateOutputs(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !sameFloats(p0.Data.X.Data, p1.Data.X.Data) || !sameFloats(p0.Data.Y, p1.Data.Y) {
			t.Errorf("%s: noise weights changed the data or the targets", name)
		}
		if b0, b1 := mustJSON(t, p0.Outputs), mustJSON(t, p1.Outputs); !bytes.Equal(b0, b1) {
			t.Errorf("%s: noise weights changed the truth", name)
		}
		for u, unit := range p1.Model.spec.Units {
			if len(unit.Reads) != cfg.Features {
				t.Errorf("%s: unit %d of the noisy black box reads %d features of %d", name, u, len(unit.Reads), cfg.Features)
			}
		}
	}
}

func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(u, v float64) bool { return u == v || u != u && v != v })
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOutputsDeterministic checks that a world depends on its seed only,
// and that its first instances do not depend on the number of instances.
func TestOutputsDeterministic(t *testing.T) {
	for name, cfg := range outputWorldConfigs {
		a, err := GenerateOutputs(cfg, 9)
		if err != nil {
			t.Fatal(err)
		}
		b, err := GenerateOutputs(cfg, 9)
		if err != nil {
			t.Fatal(err)
		}
		if !sameFloats(a.Data.X.Data, b.Data.X.Data) || !sameFloats(a.Data.Y, b.Data.Y) || !bytes.Equal(mustJSON(t, a.Model), mustJSON(t, b.Model)) {
			t.Errorf("%s: two problems of one seed differ", name)
		}
		small := cfg
		small.Instances = 50
		c, err := GenerateOutputs(small, 9)
		if err != nil {
			t.Fatal(err)
		}
		w := a.Data.Outputs.TargetWidth()
		if !sameFloats(c.Data.X.Data, a.Data.X.Rows(0, 50).Data) || !sameFloats(c.Data.Y, a.Data.Y[:50*w]) || !bytes.Equal(mustJSON(t, a.Model), mustJSON(t, c.Model)) {
			t.Errorf("%s: the first 50 instances depend on the number of instances", name)
		}
		if d, err := GenerateOutputs(cfg, 10); err != nil || sameFloats(d.Data.Y, a.Data.Y) {
			t.Errorf("%s: seeds 9 and 10 give the same targets (error %v)", name, err)
		}
	}
}

// TestOutputsWorldShapes checks what each world promises about its
// outputs: class probabilities sum to 1 and labels follow them; horizons
// read the shared features at every horizon and the partial ones at some;
// steps read at fixed lags, the sparse feature is observed once per
// period, and only the peeking world reads the future.
func TestOutputsWorldShapes(t *testing.T) {
	p, err := GenerateOutputs(outputWorldConfigs["classes"], 1)
	if err != nil {
		t.Fatal(err)
	}
	k := p.Data.K()
	pred := make([]float64, p.Data.X.M*k)
	if err := p.Model.Predict(pred, p.Data.X); err != nil {
		t.Fatal(err)
	}
	// The mean probability of each class against its frequency among
	// the labels: within 4 SE of a proportion over M instances.
	for c := range k {
		var mean float64
		n := 0
		for i := range p.Data.X.M {
			mean += pred[i*k+c]
			if int(p.Data.Y[i]) == c {
				n++
			}
		}
		mean /= float64(p.Data.X.M)
		freq := float64(n) / float64(p.Data.X.M)
		if se := math.Sqrt(mean * (1 - mean) / float64(p.Data.X.M)); math.Abs(freq-mean) > 4*se+1e-9 {
			t.Errorf("class %d: frequency %.3f among the labels, mean probability %.3f", c, freq, mean)
		}
	}
	if err := p.Data.CheckPredictions(pred); err != nil {
		t.Errorf("class probabilities: %v", err)
	}

	cfg := outputWorldConfigs["horizons"]
	h, err := GenerateOutputs(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for j := range cfg.Relevant {
		n := 0
		for _, o := range h.Outputs {
			n += b2i(o.Features[j].Relevant)
		}
		if shared := j < cfg.Relevant-cfg.Partial; shared && n != cfg.Outputs || !shared && (n < 1 || n >= cfg.Outputs) {
			t.Errorf("horizons: feature %d read by %d of %d horizons", j, n, cfg.Outputs)
		}
	}

	for _, name := range []string{"steps", "peek"} {
		cfg := outputWorldConfigs[name]
		s, err := GenerateOutputs(cfg, 2)
		if err != nil {
			t.Fatal(err)
		}
		sparse := cfg.Relevant - 1
		for i := range s.Data.X.M {
			obs := 0
			for _, v := range s.Data.X.Series(i, sparse)[:cfg.Period] {
				obs += b2i(v == v)
			}
			if obs != 1 {
				t.Fatalf("%s: instance %d observes the sparse feature %d times in its first period", name, i, obs)
			}
		}
		future := false
		for _, o := range s.Outputs {
			for j := range o.Features {
				future = future || o.ReadsFuture(j)
			}
		}
		if future != cfg.Peek {
			t.Errorf("%s: some output reads the future: %v", name, future)
		}
		// Every output that reads a feature in full (away from the
		// start of the sequence) has the same lag window.
		lags := map[int]tempora.Window{}
		for o := maxStepLag + cfg.Period; o < len(s.Outputs)-1; o++ {
			ot := s.Outputs[o]
			for j, f := range ot.Features {
				if f.Relevant != (j < cfg.Relevant) {
					t.Errorf("%s: output %d reads feature %d: %v", name, o, j, f.Relevant)
				}
				if !f.Relevant {
					continue
				}
				if w, ok := lags[j]; ok && w != ot.Lags[j] {
					t.Errorf("%s: feature %d read at lags %v and %v", name, j, w, ot.Lags[j])
				}
				lags[j] = ot.Lags[j]
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestOutputsConfigErrors checks that bad configurations are refused
// with a message saying what is wrong.
func TestOutputsConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  OutputsConfig
		want string
	}{
		{OutputsConfig{}, "invalid output kind"},
		{OutputsConfig{Kind: tempora.Classes, Outputs: 2}, "want at least 3"},
		{OutputsConfig{Kind: tempora.Classes, Relevant: 5}, "split nodes"},
		{OutputsConfig{Kind: tempora.Classes, Noise: 1}, "noise is not a parameter of classes"},
		{OutputsConfig{Kind: tempora.Classes, Timesteps: 4}, "at least 5"},
		{OutputsConfig{Kind: tempora.Horizons, Outputs: 1, Partial: 1}, "at least 2 horizons"},
		{OutputsConfig{Kind: tempora.Horizons, Period: 3}, "period is not a parameter of horizons"},
		{OutputsConfig{Kind: tempora.Horizons, NullOutputs: 4}, "null outputs"},
		{OutputsConfig{Kind: tempora.Horizons, Relevant: 11}, "relevant features"},
		{OutputsConfig{Kind: tempora.Horizons, Noise: -1}, "finite values"},
		{OutputsConfig{Kind: tempora.Horizons, NoiseScale: math.NaN()}, "finite values"},
		{OutputsConfig{Kind: tempora.Steps, Outputs: 3}, "one output per timestep"},
		{OutputsConfig{Kind: tempora.Steps, Timesteps: 6}, "at least 8"},
		{OutputsConfig{Kind: tempora.Steps, Period: 1}, "period 1"},
		{OutputsConfig{Kind: tempora.Steps, Relevant: 1, Period: 2, Peek: true}, "need 2 relevant"},
		{OutputsConfig{Kind: tempora.Steps, Instances: 1}, "at least 2"},
	} {
		if _, err := GenerateOutputs(tc.cfg, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.cfg, err, tc.want)
		}
	}
}

// TestOutputsModelErrors checks NewOutputsModel's validation and
// Predict's refusals.
func TestOutputsModelErrors(t *testing.T) {
	read := Read{Feature: 0, Window: tempora.Window{Start: 0, End: 1}, Weights: []float64{1, 2}}
	ok := OutputsSpec{Kind: tempora.Classes, K: 3, Features: 2, Timesteps: 3, Units: []Unit{{Reads: []Read{read}}, {}}, Tree: [][2]int{{-1, 1}, {-2, -3}}}
	if _, err := NewOutputsModel(ok); err != nil {
		t.Fatalf("a valid spec: %v", err)
	}
	for _, tc := range []struct {
		edit func(s *OutputsSpec)
		want string
	}{
		{func(s *OutputsSpec) { s.Kind = 0 }, "invalid output kind"},
		{func(s *OutputsSpec) { s.Units = s.Units[:1] }, "1 units for 3 classes"},
		{func(s *OutputsSpec) { s.Tree = [][2]int{{-1, 1}, {-2, -2}} }, "class 1 is 2 leaves"},
		{func(s *OutputsSpec) { s.Tree = [][2]int{{-1, 0}, {-2, -3}} }, "node 0 has child 0"},
		{func(s *OutputsSpec) { s.Tree = [][2]int{{-1, -2}, {-3, -3}} }, "node 1 has 0 parents"},
		{func(s *OutputsSpec) { s.Units[1].Reads = []Read{read, read} }, "reads feature 0 twice"},
		{func(s *OutputsSpec) {
			s.Units[1].Reads = []Read{{Feature: 2, Window: read.Window, Weights: read.Weights}}
		}, "reads feature 2 of 2"},
		{func(s *OutputsSpec) {
			s.Units[1].Reads = []Read{{Feature: 1, Window: tempora.Window{Start: 1, End: 3}, Weights: []float64{1, 1, 1}}}
		}, "outside 0..2"},
		{func(s *OutputsSpec) {
			s.Units[1].Reads = []Read{{Feature: 1, Window: read.Window, Weights: []float64{1}}}
		}, "1 weights"},
		{func(s *OutputsSpec) { s.Units[1].Bias = math.Inf(1) }, "bias"},
		{func(s *OutputsSpec) { s.Carried = []int{1, 1} }, "carried features"},
		{func(s *OutputsSpec) { s.Kind, s.Tree = tempora.Horizons, nil }, "3 horizons"},
	} {
		s := ok.clone()
		tc.edit(&s)
		if _, err := NewOutputsModel(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
	m, _ := NewOutputsModel(ok)
	x := tempora.NewTensor(2, 2, 3)
	x.Set(1, 0, 1, math.NaN())
	if err := m.Predict(make([]float64, 6), x); err == nil || !strings.Contains(err.Error(), "instance 1 has a missing value") {
		t.Errorf("a missing value the model does not carry: %v", err)
	}
	if err := m.Predict(make([]float64, 5), x); err == nil {
		t.Error("5 predictions for 2 instances × 3 classes: no error")
	}
	if err := m.Predict(make([]float64, 6), tempora.NewTensor(2, 3, 3)); err == nil {
		t.Error("data of 3 features for a model of 2: no error")
	}
	// A carried feature's missing values are carried forward.
	ok.Carried = []int{0}
	m, _ = NewOutputsModel(ok)
	dst := make([]float64, 6)
	if err := m.Predict(dst, x); err != nil || math.Abs(dst[3]+dst[4]+dst[5]-1) > 1e-12 {
		t.Errorf("carried feature: %v, probabilities %v", err, dst[3:])
	}
}

// TestOutputsSaveLoad saves a problem of each world, loads it back and
// saves it again: the files are byte-identical and the problem the same.
// Load refuses the directory, naming LoadOutputs; LoadOutputs refuses a
// truth that claims a read the model does not make and a lag that does
// not fit its window.
func TestOutputsSaveLoad(t *testing.T) {
	for name, cfg := range outputWorldConfigs {
		cfg.Instances = 40
		p, err := GenerateOutputs(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), name)
		if err := p.Save(dir); err != nil {
			t.Fatal(err)
		}
		q, err := LoadOutputs(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !sameFloats(q.Data.X.Data, p.Data.X.Data) || !sameFloats(q.Data.Y, p.Data.Y) || q.Seed != p.Seed || q.Config != p.Config {
			t.Errorf("%s: the loaded problem differs", name)
		}
		if !bytes.Equal(mustJSON(t, q.Outputs), mustJSON(t, p.Outputs)) || !bytes.Equal(mustJSON(t, q.Truth), mustJSON(t, p.Truth)) {
			t.Errorf("%s: the loaded truth differs", name)
		}
		dir2 := filepath.Join(t.TempDir(), name)
		if err := q.Save(dir2); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{DataFile, TargetsFile, ModelFile, TruthFile, ProblemFile} {
			a, _ := os.ReadFile(filepath.Join(dir, f))
			b, _ := os.ReadFile(filepath.Join(dir2, f))
			if !bytes.Equal(a, b) {
				t.Errorf("%s: %s differs after a round trip", name, f)
			}
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "LoadOutputs") {
			t.Errorf("%s: Load: %v", name, err)
		}
	}
	// A tampered truth.
	p, err := GenerateOutputs(outputWorldConfigs["horizons"], 3)
	if err != nil {
		t.Fatal(err)
	}
	row := func(j map[string]any, o, f int) map[string]any {
		outs := j["outputs"].(map[string]any)["per_output"].([]any)
		return outs[o].(map[string]any)["features"].([]any)[f].(map[string]any)
	}
	irrelevant := slices.IndexFunc(p.Outputs[0].Features, func(f FeatureTruth) bool { return !f.Relevant })
	for _, tc := range []struct {
		edit func(j map[string]any)
		want string
	}{
		{func(j map[string]any) { row(j, 0, irrelevant)["relevant"] = true }, "the model does not read it there"},
		{func(j map[string]any) { row(j, 0, 0)["lag"] = []int{0, 30} }, "lag [0, 30]"},
		{func(j map[string]any) { j["outputs"].(map[string]any)["kind"] = "steps" }, "want the truth of 3 horizons outputs"},
		{func(j map[string]any) { j["features"].([]any)[0].(map[string]any)["window"] = []int{0, 1} }, "the whole model"},
	} {
		dir := t.TempDir()
		if err := p.Save(dir); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, TruthFile)
		b, _ := os.ReadFile(path)
		var j map[string]any
		if err := json.Unmarshal(b, &j); err != nil {
			t.Fatal(err)
		}
		tc.edit(j)
		if err := os.WriteFile(path, mustJSON(t, j), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadOutputs(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("tampered truth: %v, want an error containing %q", err, tc.want)
		}
	}
}

// TestOutputsOneOutputTruthUnchanged checks that a one-output problem's
// truth.json has no outputs and no lags, so those files are as before.
func TestOutputsOneOutputTruthUnchanged(t *testing.T) {
	p, err := Generate(Config{Instances: 20, Features: 3, Timesteps: 6}, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, TruthFile))
	if bytes.Contains(b, []byte(`"outputs"`)) || bytes.Contains(b, []byte(`"lag"`)) {
		t.Errorf("a one-output truth.json has outputs or lags:\n%s", b)
	}
	if HasOutputs(dir) {
		t.Error("HasOutputs of a one-output problem")
	}
}

// FuzzOutputsModelJSON feeds OutputsModel.UnmarshalJSON arbitrary bytes.
// Properties: no panic; a one-line error with synth's prefix once; on
// success, the model marshals to JSON that unmarshals to a model with the
// same JSON, and both predict the same (bit for bit) on random data of
// their shape.
func FuzzOutputsModelJSON(f *testing.F) {
	for _, name := range []string{"classes", "steps"} {
		cfg := outputWorldConfigs[name]
		cfg.Instances = 5
		p, err := GenerateOutputs(cfg, 1)
		if err != nil {
			f.Fatal(err)
		}
		b, err := json.Marshal(p.Model)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"format": "tempora-synth-outputs-model/1", "kind": "classes", "num_outputs": 3}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var m OutputsModel
		if err := strictUnmarshal(in, &m); err != nil {
			checkSynthError(t, errmsg.Wrap(err, "synth"))
			return
		}
		if m.carried == nil { // JSON null leaves the model untouched
			return
		}
		b, err := json.Marshal(&m)
		if err != nil {
			t.Fatalf("Marshal of an unmarshalled model: %v", err)
		}
		var m2 OutputsModel
		if err := strictUnmarshal(b, &m2); err != nil {
			t.Fatalf("Unmarshal of a marshalled model: %v\n%s", err, b)
		}
		if b2, _ := json.Marshal(&m2); !bytes.Equal(b, b2) {
			t.Fatalf("JSON round trip:\n%s\n%s", b, b2)
		}
		s := m.spec
		if s.Features*s.Timesteps > 1<<14 || s.K > 1<<10 {
			return // too large to evaluate quickly
		}
		x := tempora.NewTensor(2, s.Features, s.Timesteps)
		rng := tempora.NewRand(1, "fuzz-outputs-model")
		for k := range x.Data {
			x.Data[k] = rng.NormFloat64()
		}
		y1, y2 := make([]float64, 2*s.K), make([]float64, 2*s.K)
		err1, err2 := m.Predict(y1, x), m2.Predict(y2, x)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("Predict: %v, after the round trip %v", err1, err2)
		}
		for i := range y1 {
			if math.Float64bits(y1[i]) != math.Float64bits(y2[i]) {
				t.Fatalf("output %d: %v, after the round trip %v", i, y1[i], y2[i])
			}
		}
	})
}
