package baselines

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/method"
)

// horizonsModel is a model with K horizon outputs in which output k reads
// feature k alone: (k+1) times its mean over wins[k]. Feature K, the last,
// is read by no output.
type horizonsModel struct{ wins []tempora.Window }

func (f horizonsModel) Predict(dst []float64, x *tempora.Tensor) error {
	k := len(f.wins)
	for i := range x.M {
		for c, w := range f.wins {
			var s float64
			for t := w.Start; t <= w.End; t++ {
				s += x.At(i, c, t)
			}
			dst[i*k+c] = float64(c+1) * s / float64(w.Len())
		}
	}
	return nil
}

// one returns output c of f as a model with one output.
func (f horizonsModel) one(c int) tempora.Model {
	return tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		all := make([]float64, x.M*len(f.wins))
		if err := f.Predict(all, x); err != nil {
			return err
		}
		for i := range x.M {
			dst[i] = all[i*len(f.wins)+c]
		}
		return nil
	})
}

// horizonsWins are the windows of the outputs of the test problems.
var horizonsWins = []tempora.Window{{Start: 0, End: 2}, {Start: 2, End: 4}, {Start: 3, End: 5}}

// horizonsProblem returns m standard normal instances of K+1 features × 6
// timesteps (K = len(horizonsWins)) whose K targets are horizonsModel's
// outputs plus N(0, 0.1²) noise, the outputs named "h+1", "h+2", ….
func horizonsProblem(m int, seed uint64) (*tempora.Dataset, horizonsModel) {
	k := len(horizonsWins)
	f := horizonsModel{wins: horizonsWins}
	sd := make([]float64, (k+1)*6)
	for c := range sd {
		sd[c] = 1
	}
	x := gaussian(m, k+1, 6, nil, sd, seed)
	y := make([]float64, m*k)
	if err := f.Predict(y, x); err != nil {
		panic(err)
	}
	rng := tempora.NewRand(seed, "test-targets")
	for i := range y {
		y[i] += 0.1 * rng.NormFloat64()
	}
	names := make([]string, k)
	for c := range names {
		names[c] = fmt.Sprintf("h+%d", c+1)
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression,
		Outputs: &tempora.Outputs{Kind: tempora.Horizons, K: k, Names: names}}, f
}

// oneOutput returns output c of data (Horizons or Steps) as data with one
// output: its targets, without Outputs.
func oneOutput(data *tempora.Dataset, c int) *tempora.Dataset {
	k := data.K()
	y := make([]float64, data.X.M)
	for i := range y {
		y[i] = data.Y[i*k+c]
	}
	return &tempora.Dataset{X: data.X, Y: y, Task: data.Task}
}

// concentrationRatio bounds, for the cells of output k of horizonsModel,
// the score of every feature but k relative to feature k's: those
// features do not move output k, so their scores are 0 for the methods
// that score a change of output k (OCC, PERM, SAGE, TimeSHAP without
// pruning) up to rounding, and LIME's are the ridge regression's leakage
// between sampled columns, below 1e−3 of the own feature's at 2000
// samples on these problems.
const concentrationRatio = 0.01

// checkConcentrated checks that the cells of output c concentrate on
// feature c.
func checkConcentrated(t *testing.T, what string, cells []float64, d, l, c int) {
	t.Helper()
	own := method.FeatureScore(cells[c*l : (c+1)*l])
	if !(own > 0) {
		t.Errorf("%s: output %d's own feature %d scores %v", what, c, c, own)
		return
	}
	for j := range d {
		if s := method.FeatureScore(cells[j*l : (j+1)*l]); j != c && s > concentrationRatio*own {
			t.Errorf("%s: output %d: feature %d scores %.4g, more than %.2g × its own feature %d's %.4g", what, c, j, s, concentrationRatio, c, own)
		}
	}
}

// outputExplainers are the baselines configured for the tests of models
// with several outputs, each with an Output to set: small budgets,
// TimeSHAP without pruning (its pruned block shares its value among
// every feature's cells) and SAGE run to a fixed number of permutations
// (a threshold it cannot reach), so that a run on one output and the run
// on the whole model make the same walks.
func outputExplainers(o explain.Output, workers int) map[string]tempora.Explainer {
	return map[string]tempora.Explainer{
		"LIME":     LIME{Samples: 2000, Instances: 8, Seed: 3, Output: o, Workers: workers},
		"OCC":      Occlusion{Width: 2, Stride: 1, Output: o, Workers: workers},
		"TimeSHAP": TimeSHAP{Recent: 6, Instances: 6, Seed: 3, Output: o, Workers: workers},
		"SAGE-m":   SAGE{Imputer: Mean, MaxPermutations: 256, BatchSize: 64, Threshold: 1e-9, Seed: 3, Output: o, Workers: workers},
		"PERM":     PERM{Permutations: 99, Tests: explain.FixedTests, Seed: 3, Output: o, Workers: workers},
	}
}

// predictionMethods are the methods whose whole-model cells are the mean
// of the outputs' cells.
var predictionMethods = map[string]bool{"LIME": true, "OCC": true, "TimeSHAP": true}

// TestOutputs checks every baseline on horizonsModel (output k reads
// feature k): on the whole model the explanation holds each output's
// cells, which concentrate on the output's feature, and (for the methods
// that explain predictions) whose mean are its cells; on one output its
// cells are the whole model's run's cells of that output, bit for bit
// (the same samples, windows, coalitions, walks or draws), and it names
// the output.
func TestOutputs(t *testing.T) {
	data, f := horizonsProblem(60, 11)
	d, l, k := data.X.D, data.X.L, data.K()
	ctx := context.Background()
	whole := outputExplainers(explain.WholeModel, 2)
	for name, ex := range whole {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, err := ex.Explain(ctx, f, data)
			if err != nil {
				t.Fatal(err)
			}
			if e.Output != "" || e.Outputs == nil || len(e.Outputs.Outputs) != k {
				t.Fatalf("whole model: Output %q, Outputs %v, want every one of %d outputs", e.Output, e.Outputs, k)
			}
			mean := make([]float64, d*l)
			for c, o := range e.Outputs.Outputs {
				if o.Name != data.Outputs.Name(c) {
					t.Errorf("output %d is named %q, want %q", c, o.Name, data.Outputs.Name(c))
				}
				checkConcentrated(t, name+" whole model", o.Cells, d, l, c)
				for j, fr := range o.Features {
					if want := method.FeatureScore(o.Cells[j*l : (j+1)*l]); fr.Score != want || !fr.Tested {
						t.Errorf("output %d feature %d: score %v (tested %v), want its cells' %v", c, j, fr.Score, fr.Tested, want)
					}
				}
				for i, v := range o.Cells {
					mean[i] += v
				}
			}
			if predictionMethods[name] {
				for i := range mean {
					mean[i] /= float64(k)
				}
				if !sameFloats(e.Cells, mean) {
					t.Errorf("whole model's cells %v, want the mean of the outputs' %v", e.Cells, mean)
				}
			}
			// The feature no output reads scores 0 on the whole model too
			// (up to rounding for TimeSHAP's regression and LIME's
			// leakage).
			if s, top := method.FeatureScore(e.Cells[k*l:]), method.FeatureScore(e.Cells[:l]); s > concentrationRatio*top {
				t.Errorf("whole model: the unread feature %d scores %.4g, feature 0 %.4g", k, s, top)
			}
			for c := range k {
				one, err := outputExplainers(explain.OutputOf(c), 2)[name].Explain(ctx, f, data)
				if err != nil {
					t.Fatal(err)
				}
				if one.Output != data.Outputs.Name(c) || one.Outputs != nil {
					t.Errorf("output %d: Output %q with per-output results %v, want %q alone", c, one.Output, one.Outputs != nil, data.Outputs.Name(c))
				}
				if !sameFloats(one.Cells, e.Outputs.Outputs[c].Cells) {
					t.Errorf("output %d alone: cells %v, want the whole model's run's %v", c, one.Cells, e.Outputs.Outputs[c].Cells)
				}
				checkConcentrated(t, name+" one output", one.Cells, d, l, c)
			}
		})
	}
}

// TestOutputsWorkers checks that the explanations of a model with several
// outputs, per-output results included, do not depend on the workers.
func TestOutputsWorkers(t *testing.T) {
	data, f := horizonsProblem(40, 5)
	for name := range outputExplainers(explain.WholeModel, 1) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var first []byte
			for _, w := range []int{1, 3} {
				e, err := outputExplainers(explain.WholeModel, w)[name].Explain(context.Background(), f, data)
				if err != nil {
					t.Fatal(err)
				}
				e.Accounting.Runtime = 0
				b, err := json.Marshal(e)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = b
				} else if !bytes.Equal(b, first) {
					t.Errorf("%d workers: a different explanation", w)
				}
			}
		})
	}
}

// TestPERMOutputIsOneOutputModel checks that PERM on one output of a
// model with several is PERM on a model with that output alone and its
// targets (the same keys, so the same draws, and the same loss): the same
// scores and p-values bit for bit, for horizons and for classes (class k:
// the binary cross-entropy of its probability against 1{y = k}); and that
// the whole model's run's per-output tests are the same.
func TestPERMOutputIsOneOutputModel(t *testing.T) {
	ctx := context.Background()
	for _, tc := range outputCases(50, 7) {
		for _, tests := range []explain.Tests{explain.FixedTests, explain.BesagCliffordTests} {
			cfg := PERM{Permutations: 199, Tests: tests, Seed: 9}
			all, err := cfg.Analyze(ctx, tc.model, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if len(all.Outputs) != tc.data.K() {
				t.Fatalf("%s: %d per-output results for %d outputs", tc.name, len(all.Outputs), tc.data.K())
			}
			for c := range tc.data.K() {
				d1, m1 := tc.one(c)
				single, err := cfg.Analyze(ctx, m1, d1)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Output = explain.OutputOf(c)
				chosen, err := cfg.Analyze(ctx, tc.model, tc.data)
				cfg.Output = explain.WholeModel
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range []struct {
					what string
					r    *PermResult
				}{{"output alone", chosen}, {"whole model's run", all.Outputs[c]}} {
					if !sameFloats(r.r.Scores, single.Scores) || !sameFloats(r.r.PValues, single.PValues) || r.r.Baseline != single.Baseline {
						t.Errorf("%s %v output %d, %s: scores %v, p-values %v, baseline %v; the one-output model's %v, %v, %v",
							tc.name, tests, c, r.what, r.r.Scores, r.r.PValues, r.r.Baseline, single.Scores, single.PValues, single.Baseline)
					}
				}
				if chosen.OutputName != tc.data.Outputs.Name(c) {
					t.Errorf("%s output %d: OutputName %q", tc.name, c, chosen.OutputName)
				}
			}
			// One key's draws are made once for all its tests: the whole
			// model's run costs no more model calls than its longest
			// family's draws would alone.
			if all.Accounting.Draws[0].MaxDraws != int64(tc.data.X.D*tc.data.X.L*all.Permutations) {
				t.Errorf("%s %v: max draws %d, want one cap per cell, %d", tc.name, tests, all.Accounting.Draws[0].MaxDraws, tc.data.X.D*tc.data.X.L*all.Permutations)
			}
		}
	}
}

// classesModel is a model of K = 3 classes whose logits are the means of
// features 0, 1 and 2: the softmax of (x̄₀, x̄₁, x̄₂).
type classesModel struct{}

func (classesModel) Predict(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		var z [3]float64
		var sum float64
		for c := range z {
			for t := range x.L {
				z[c] += x.At(i, c, t)
			}
			z[c] = math.Exp(z[c] / float64(x.L))
			sum += z[c]
		}
		for c := range z {
			dst[i*3+c] = z[c] / sum
		}
	}
	return nil
}

// one returns class c's probability as a model with one output.
func (f classesModel) one(c int) tempora.Model {
	return tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		all := make([]float64, x.M*3)
		if err := f.Predict(all, x); err != nil {
			return err
		}
		for i := range x.M {
			dst[i] = all[i*3+c]
		}
		return nil
	})
}

// classesProblem returns m instances of 4 features × 6 timesteps with
// labels drawn from classesModel's probabilities.
func classesProblem(m int, seed uint64) (*tempora.Dataset, classesModel) {
	sd := make([]float64, 4*6)
	for c := range sd {
		sd[c] = 2
	}
	x := gaussian(m, 4, 6, nil, sd, seed)
	p := make([]float64, m*3)
	var f classesModel
	if err := f.Predict(p, x); err != nil {
		panic(err)
	}
	rng := tempora.NewRand(seed, "test-labels")
	y := make([]float64, m)
	for i := range y {
		u := rng.Float64()
		switch {
		case u < p[i*3]:
			y[i] = 0
		case u < p[i*3]+p[i*3+1]:
			y[i] = 1
		default:
			y[i] = 2
		}
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Classification,
		Outputs: &tempora.Outputs{Kind: tempora.Classes, K: 3}}, f
}

// oneClass returns data of classes as the binary problem of class c:
// targets 1{y = c}.
func oneClass(data *tempora.Dataset, c int) *tempora.Dataset {
	y := make([]float64, data.X.M)
	for i, v := range data.Y {
		if int(v) == c {
			y[i] = 1
		}
	}
	return &tempora.Dataset{X: data.X, Y: y, Task: tempora.Classification}
}

// TestSAGEOutputTargets checks SAGE on outputs that lack targets in some
// instances: one output's rows are drawn among the instances with a
// target for it, and on the whole model an output's values count only the
// walks of rows with one.
func TestSAGEOutputTargets(t *testing.T) {
	data, f := horizonsProblem(40, 13)
	k := data.K()
	missing := 0
	for i := 0; i < data.X.M; i += 3 { // output 2 has no target in every third instance
		data.Y[i*k+2] = math.NaN()
		missing++
	}
	cfg := SAGE{Imputer: Zero, MaxPermutations: 300, BatchSize: 100, Threshold: 1e-9, Seed: 4}
	r, err := cfg.Estimate(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	// The walks of output 2 are those whose row has a target: the rows
	// are uniform, so about 2/3 of them (binomial SD about 8 of 300).
	n2 := r.OutputPermutations[2]
	if r.OutputPermutations[0] != r.Permutations || r.OutputPermutations[1] != r.Permutations || n2 >= r.Permutations || n2 < 150 {
		t.Errorf("walks per output %v of %d, want all for outputs 0 and 1 and about 2/3 for output 2", r.OutputPermutations, r.Permutations)
	}
	for c, v := range r.OutputValues {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("output %d: value %v", c, x)
			}
		}
	}
	cfg.Output = explain.OutputOf(2)
	one, err := cfg.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	checkConcentrated(t, "SAGE-z output 2 with missing targets", one.Cells, data.X.D, data.X.L, 2)
}

// TestParseOutput checks the output parameter's parsing: names, indices,
// the whole model, and errors.
func TestParseOutput(t *testing.T) {
	data, _ := horizonsProblem(5, 1)
	numbered := *data
	numbered.Outputs = &tempora.Outputs{Kind: tempora.Horizons, K: 3, Names: []string{"2", "b", "c"}}
	one := oneOutput(data, 0)
	for _, tc := range []struct {
		data *tempora.Dataset
		s    string
		want explain.Output
		err  string
	}{
		{data, "", explain.WholeModel, ""},
		{data, "h+2", explain.OutputOf(1), ""},
		{data, "2", explain.OutputOf(2), ""},
		{data, "3", 0, `no output "3"`},
		{data, "-1", 0, `no output "-1"`},
		{data, "h+9", 0, `no output "h+9"`},
		{&numbered, "2", 0, `is the name of output 0 and the index of output 2`},
		{&numbered, "b", explain.OutputOf(1), ""},
		{&numbered, "0", explain.OutputOf(0), ""},
		{one, "0", explain.WholeModel, ""},
		{one, "1", 0, "it has one output, 0"},
		{nil, "h+1", 0, "no data"},
	} {
		got, err := ParseOutput(tc.data, tc.s)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseOutput(%q): %v, %v; want %v", tc.s, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseOutput(%q): %v, %v; want an error containing %q", tc.s, got, err, tc.err)
		}
	}
}

// TestOutputBadConfig checks that an output the model does not have is an
// error of every baseline, before its work.
func TestOutputBadConfig(t *testing.T) {
	data, f := horizonsProblem(20, 2)
	for _, o := range []explain.Output{explain.OutputOf(3), -1} {
		for name, ex := range outputExplainers(o, 1) {
			if _, err := ex.Explain(context.Background(), f, data); err == nil || !strings.Contains(err.Error(), "outputs") {
				t.Errorf("%s with %v of 3 outputs: %v, want an error", name, o, err)
			}
		}
	}
}

// TestOutputsJSON checks that the per-output results and the name of the
// one output explained survive the JSON form.
func TestOutputsJSON(t *testing.T) {
	data, f := horizonsProblem(20, 3)
	for _, o := range []explain.Output{explain.WholeModel, explain.OutputOf(1)} {
		e, err := Occlusion{Output: o}.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back tempora.Explanation
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		b2, err := json.Marshal(&back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Errorf("%v: the JSON does not round-trip:\n%s\n%s", o, b, b2)
		}
		if got := bytes.Contains(b, []byte(`"per_output"`)); got != (o == explain.WholeModel) {
			t.Errorf("%v: per_output in the JSON %v", o, got)
		}
		if got := bytes.Contains(b, []byte(`"output":"h+2"`)); got != (o != explain.WholeModel) {
			t.Errorf("%v: \"output\":\"h+2\" in the JSON %v", o, got)
		}
	}
}

// TestPredictionOutputIsOneOutputModel checks that LIME, OCC and TimeSHAP
// on one output of a model with several explain that output's prediction
// (a class's probability for classes) as on a model of that output alone:
// the same cells bit for bit.
func TestPredictionOutputIsOneOutputModel(t *testing.T) {
	ctx := context.Background()
	for _, tc := range outputCases(30, 17) {
		for c := range tc.data.K() {
			d1, m1 := tc.one(c)
			for name := range predictionMethods {
				chosen, err := outputExplainers(explain.OutputOf(c), 2)[name].Explain(ctx, tc.model, tc.data)
				if err != nil {
					t.Fatal(err)
				}
				single, err := outputExplainers(explain.WholeModel, 2)[name].Explain(ctx, m1, d1)
				if err != nil {
					t.Fatal(err)
				}
				if !sameFloats(chosen.Cells, single.Cells) {
					t.Errorf("%s %s output %d: cells %v, the one-output model's %v", tc.name, name, c, chosen.Cells, single.Cells)
				}
			}
		}
	}
}

// outputCase is a model with several outputs, its data, and for output c
// the model of that output alone with its data.
type outputCase struct {
	name  string
	data  *tempora.Dataset
	model tempora.Model
	one   func(c int) (*tempora.Dataset, tempora.Model)
}

// outputCases returns the horizons and classes problems of n instances
// from seed as outputCases.
func outputCases(n int, seed uint64) []outputCase {
	hdata, hf := horizonsProblem(n, seed)
	cdata, cf := classesProblem(n, seed)
	return []outputCase{
		{"horizons", hdata, hf, func(c int) (*tempora.Dataset, tempora.Model) { return oneOutput(hdata, c), hf.one(c) }},
		{"classes", cdata, cf, func(c int) (*tempora.Dataset, tempora.Model) { return oneClass(cdata, c), cf.one(c) }},
	}
}
