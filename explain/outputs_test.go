package explain_test

import (
	"context"
	"math"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// horizonModel is a forecaster of K = len(reads) horizons: horizon h reads
// feature reads[h].j with weights reads[h].c from timestep reads[h].start.
type read struct {
	j, start int
	c        []float64
}

func horizonModel(reads []read) tempora.ModelFunc {
	return func(dst []float64, x *tempora.Tensor) error {
		k := len(reads)
		for i := range x.M {
			for h, r := range reads {
				s := x.Window(i, r.j, r.start, r.start+len(r.c)-1)
				var v float64
				for q, w := range r.c {
					v += w * s[q]
				}
				dst[i*k+h] = v
			}
		}
		return nil
	}
}

// multiData returns data whose K targets are the model's outputs plus
// N(0, noise²) noise.
func multiData(t *testing.T, x *tempora.Tensor, f tempora.ModelFunc, o *tempora.Outputs, noise float64, seed uint64) *tempora.Dataset {
	t.Helper()
	y := make([]float64, x.M*o.K)
	if err := f(y, x); err != nil {
		t.Fatal(err)
	}
	rng := tempora.NewRand(seed, "noise")
	for i := range y {
		y[i] += noise * rng.NormFloat64()
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression, Outputs: o}
}

// TestTIMEHorizons explains a forecaster whose three horizons read three
// different features over different windows, and a fourth feature none
// reads: the whole model finds the three features; each feature's output
// family finds exactly the horizon that reads it; each (feature, horizon)
// window is exact, with its lag from the horizon's anchor; and the
// feature tests cost about what they cost for one output.
func TestTIMEHorizons(t *testing.T) {
	const m, d, l = 400, 4, 12
	reads := []read{{0, 2, []float64{1, 1, 1}}, {1, 6, []float64{1, -1}}, {2, 9, []float64{2, 1, 1}}}
	model := horizonModel(reads)
	o := &tempora.Outputs{Kind: tempora.Horizons, K: len(reads)}
	for seed := range uint64(3) {
		data := multiData(t, gaussianData(m, d, l, 70+seed), model, o, 0.5, 70+seed)
		ex, err := explain.TIME{Seed: seed}.Explain(context.Background(), model, data)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, ex, explain.DefaultAlpha)
		if ex.Outputs == nil || len(ex.Outputs.Outputs) != len(reads) {
			t.Fatalf("seed %d: outputs %+v", seed, ex.Outputs)
		}
		for j := range d {
			if want := j < 3; ex.Features[j].Important != want {
				t.Errorf("seed %d: feature %d important %v, want %v", seed, j, ex.Features[j].Important, want)
			}
		}
		for h, r := range reads {
			out := ex.Outputs.Outputs[h]
			for j := range d {
				f := out.Features[j]
				if want := j == r.j; f.Important != want {
					t.Errorf("seed %d horizon %d: feature %d important %v (p %.3g), want %v", seed, h, j, f.Important, f.PAdjusted, want)
				}
			}
			f := out.Features[r.j]
			want := tempora.Window{Start: r.start, End: r.start + len(r.c) - 1}
			if len(f.Windows) != 1 || f.Windows[0].Window != want || !f.Windows[0].Significant {
				t.Errorf("seed %d horizon %d: windows %v, want %v significant", seed, h, f.Windows, want)
				continue
			}
			lag := tempora.Window{Start: l + h - want.End, End: l + h - want.Start}
			if w := f.Windows[0]; w.Lag == nil || *w.Lag != lag {
				t.Errorf("seed %d horizon %d: lag %v, want %v", seed, h, w.Lag, lag)
			}
		}
		if ex.Outputs.CausalChecked {
			t.Errorf("seed %d: a causal check for horizons, whose anchors lie after the sequence", seed)
		}
		// The feature tests of three outputs against those of one: the
		// output families reuse the feature family's draws.
		one := &tempora.Dataset{X: data.X, Task: tempora.Regression, Y: make([]float64, m)}
		for i := range m {
			one.Y[i] = data.Y[i*o.K]
		}
		ex1, err := explain.TIME{Seed: seed}.Explain(context.Background(), tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			all := make([]float64, x.M*o.K)
			if err := model(all, x); err != nil {
				return err
			}
			for i := range dst {
				dst[i] = all[i*o.K]
			}
			return nil
		}), one)
		if err != nil {
			t.Fatal(err)
		}
		feat := func(ex *tempora.Explanation) int64 {
			n := ex.Accounting.Draws[0].Draws
			if len(ex.Accounting.Draws) > 5 {
				n += ex.Accounting.Draws[5].Draws
			}
			return n
		}
		t.Logf("seed %d: feature tests %d draws with 3 outputs (overall %d, outputs %d), %d with one; model calls %d and %d", seed, feat(ex), ex.Accounting.Draws[0].Draws, ex.Accounting.Draws[5].Draws, feat(ex1), ex.Accounting.ModelCalls, ex1.Accounting.ModelCalls)
	}
}

// nestedClasses is a three-class classifier built as a nested dichotomy:
// class 0 against the rest by feature 0's mean over [2, 4], then class 1
// against class 2 by feature 1's mean over [6, 8]. Class 0's probability
// depends on feature 0 alone; those of classes 1 and 2 on features 0 and
// 1 (a softmax would couple every class to every feature).
func nestedClasses(beta float64) tempora.ModelFunc {
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	mean := func(s []float64) float64 {
		var v float64
		for _, x := range s {
			v += x
		}
		return v / float64(len(s))
	}
	return func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			a := sig(beta * mean(x.Window(i, 0, 2, 4)))
			b := sig(beta * mean(x.Window(i, 1, 6, 8)))
			dst[i*3], dst[i*3+1], dst[i*3+2] = a, (1-a)*b, (1-a)*(1-b)
		}
		return nil
	}
}

// TestTIMEClasses explains the nested-dichotomy classifier with labels
// drawn from its probabilities: the whole model reads features 0 and 1,
// class 0 feature 0 alone, classes 1 and 2 both, with their windows.
func TestTIMEClasses(t *testing.T) {
	const m, d, l = 600, 3, 10
	model := nestedClasses(4)
	o := &tempora.Outputs{Kind: tempora.Classes, K: 3, Names: []string{"a", "b", "c"}}
	for seed := range uint64(3) {
		x := gaussianData(m, d, l, 80+seed)
		p := make([]float64, 3*m)
		if err := model(p, x); err != nil {
			t.Fatal(err)
		}
		y := make([]float64, m)
		rng := tempora.NewRand(80+seed, "labels")
		for i := range y {
			u := rng.Float64()
			switch {
			case u < p[3*i]:
				y[i] = 0
			case u < p[3*i]+p[3*i+1]:
				y[i] = 1
			default:
				y[i] = 2
			}
		}
		data := &tempora.Dataset{X: x, Y: y, Task: tempora.Classification, Outputs: o}
		ex, err := explain.TIME{Seed: seed}.Explain(context.Background(), model, data)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, ex, explain.DefaultAlpha)
		reads := [][]bool{{true, false, false}, {true, true, false}, {true, true, false}}
		for j := range d {
			if want := j < 2; ex.Features[j].Important != want {
				t.Errorf("seed %d: feature %d important %v, want %v", seed, j, ex.Features[j].Important, want)
			}
		}
		wins := []tempora.Window{{Start: 2, End: 4}, {Start: 6, End: 8}}
		for c, out := range ex.Outputs.Outputs {
			for j := range d {
				f := out.Features[j]
				if f.Important != reads[c][j] {
					t.Errorf("seed %d class %s: feature %d important %v (p adj %.3g), want %v", seed, out.Name, j, f.Important, f.PAdjusted, reads[c][j])
				}
				if f.Important && (len(f.Windows) != 1 || f.Windows[0].Window != wins[j]) {
					t.Errorf("seed %d class %s: feature %d windows %v, want %v", seed, out.Name, j, f.Windows, wins[j])
				}
				if f.Important && f.Windows[0].Lag != nil {
					t.Errorf("seed %d class %s: a lag window %v for a class", seed, out.Name, *f.Windows[0].Lag)
				}
			}
		}
	}
}

// stepModel is a causal sequence-to-sequence model: output s reads feature
// 0 at lags 0, 1 and 2 (timesteps s, s−1, s−2 where they exist) and
// feature 1 at lag 0, and, with peek, feature 1 at timestep s + 1 too.
func stepModel(l int, peek bool) tempora.ModelFunc {
	w := []float64{1, 0.8, 0.6}
	return func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			for s := range l {
				var v float64
				for lag, c := range w {
					if s-lag >= 0 {
						v += c * x.At(i, 0, s-lag)
					}
				}
				v += 0.7 * x.At(i, 1, s)
				if peek && s+1 < l {
					v += 0.7 * x.At(i, 1, s+1)
				}
				dst[i*l+s] = v
			}
		}
		return nil
	}
}

// TestTIMESteps explains the causal step model: every output s ≥ 2 reads
// feature 0 over lags [0, 2], the causal check finds no output that reads
// the future; the same model peeking one step ahead is caught.
func TestTIMESteps(t *testing.T) {
	const m, d, l = 400, 3, 10
	o := &tempora.Outputs{Kind: tempora.Steps, K: l}
	for _, peek := range []bool{false, true} {
		model := stepModel(l, peek)
		data := multiData(t, gaussianData(m, d, l, 90), model, o, 0.5, 90)
		ex, err := explain.TIME{Seed: 3}.Explain(context.Background(), model, data)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, ex, explain.DefaultAlpha)
		if !ex.Outputs.CausalChecked || ex.Outputs.ReadsFuture != peek {
			t.Errorf("peek %v: causal check ran %v, reads future %v", peek, ex.Outputs.CausalChecked, ex.Outputs.ReadsFuture)
		}
		exact, n := 0, 0
		for s := 2; s < l; s++ {
			f := ex.Outputs.Outputs[s].Features[0]
			if !f.Important || ex.Outputs.Outputs[s].Features[2].Important {
				t.Errorf("peek %v output %d: feature 0 important %v, feature 2 %v", peek, s, f.Important, ex.Outputs.Outputs[s].Features[2].Important)
				continue
			}
			n++
			if len(f.Windows) == 1 && f.Windows[0].Lag != nil && *f.Windows[0].Lag == (tempora.Window{Start: 0, End: 2}) {
				exact++
			} else {
				t.Logf("peek %v output %d: feature 0 windows %v", peek, s, f.Windows)
			}
			if f.ReadsFuture {
				t.Errorf("peek %v output %d: feature 0 said to read the future", peek, s)
			}
			if g := ex.Outputs.Outputs[s].Features[1]; peek && s < l-1 && !g.ReadsFuture {
				t.Logf("peek: output %d: feature 1's future p %.3g (adj %.3g) not rejected", s, g.FuturePValue, g.FuturePAdjusted)
			}
		}
		t.Logf("peek %v: feature 0's lag window exact on %d of %d outputs; %d model calls", peek, exact, n, ex.Accounting.ModelCalls)
		if exact < n*8/10 {
			t.Errorf("peek %v: lag window exact on %d of %d outputs, want 80%%", peek, exact, n)
		}
	}
}

// TestOutputsCalibration is the null calibration of the output level of
// TIME's hierarchy. The model's three outputs read feature 0 (outputs 0
// and 1) and feature 1 (output 2) over the whole sequence; only output
// 0's targets depend on the data, the other two are noise, so outputs 1
// and 2 are null for every feature, and feature 1 is null for the whole
// model. Over 300 trials the false discovery proportion of the feature
// family (feature 1 among the discoveries) and of feature 0's output
// family (outputs 1 and 2 among its discoveries) must each average at
// most α plus 3 standard errors; feature 0 must be found with output 0.
func TestOutputsCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("300 explanations")
	}
	const (
		trials     = 300
		m, d, l, k = 60, 2, 4, 3
		alpha      = explain.DefaultAlpha
	)
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			var a, b float64
			for s := range l {
				a += x.At(i, 0, s)
				b += x.At(i, 1, s)
			}
			dst[i*k], dst[i*k+1], dst[i*k+2] = a, a, b
		}
		return nil
	})
	o := &tempora.Outputs{Kind: tempora.Horizons, K: k}
	var featFDP, outFDP []float64
	found := 0
	for trial := range trials {
		seed := uint64(2000 + trial)
		x := gaussianData(m, d, l, seed)
		y := make([]float64, m*k)
		if err := model(y, x); err != nil {
			t.Fatal(err)
		}
		rng := tempora.NewRand(seed, "targets")
		for i := range m {
			y[i*k] += rng.NormFloat64()
			y[i*k+1], y[i*k+2] = 2*rng.NormFloat64(), 2*rng.NormFloat64()
		}
		ex, err := explain.TIME{Seed: seed, Workers: 1}.Explain(context.Background(), model, &tempora.Dataset{X: x, Y: y, Task: tempora.Regression, Outputs: o})
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, ex, alpha)
		r, v := 0, 0
		for j, f := range ex.Features {
			if f.Important {
				r++
				if j == 1 {
					v++
				}
			}
		}
		featFDP = append(featFDP, float64(v)/float64(max(r, 1)))
		if !ex.Features[0].Important {
			continue
		}
		r, v = 0, 0
		for c, out := range ex.Outputs.Outputs {
			if out.Features[0].Important {
				r++
				if c > 0 {
					v++
				}
			}
		}
		if ex.Outputs.Outputs[0].Features[0].Important {
			found++
		}
		outFDP = append(outFDP, float64(v)/float64(max(r, 1)))
	}
	check := func(name string, fdp []float64) {
		var mean, sq float64
		for _, v := range fdp {
			mean += v
			sq += v * v
		}
		n := float64(len(fdp))
		mean /= n
		se := math.Sqrt(max(sq/n-mean*mean, 0) / n)
		t.Logf("%s: FDR %.4f (SE %.4f) over %d trials", name, mean, se, len(fdp))
		if mean > alpha+3*se {
			t.Errorf("%s: FDR %.4f above α + 3 SE = %.4f", name, mean, alpha+3*se)
		}
	}
	check("feature family", featFDP)
	check("feature 0's output family", outFDP)
	if found < trials*9/10 {
		t.Errorf("feature 0 found on output 0 in %d of %d trials", found, trials)
	}
}

// TestTIMEStepsIrregular explains the causal step model on sequences of
// different lengths: instance i's inputs end at its length (padding NaN,
// start-aligned) and so do its output steps (targets NaN after it); the
// model reads padding as 0. Feature 0's lag window must still be found on
// the outputs every instance has.
func TestTIMEStepsIrregular(t *testing.T) {
	const m, d, l = 500, 3, 10
	o := &tempora.Outputs{Kind: tempora.Steps, K: l}
	inner := stepModel(l, false)
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		c := x.Clone()
		for k, v := range c.Data {
			if v != v {
				c.Data[k] = 0
			}
		}
		return inner(dst, c)
	})
	x := gaussianData(m, d, l, 95)
	lengths := make([]int, m)
	rng := tempora.NewRand(95, "lengths")
	for i := range m {
		lengths[i] = l/2 + rng.IntN(l-l/2+1)
		for j := range d {
			for s := lengths[i]; s < l; s++ {
				x.Set(i, j, s, math.NaN())
			}
		}
	}
	data := multiData(t, x, model, o, 0.5, 95)
	for i := range m {
		for s := lengths[i]; s < l; s++ {
			data.Y[i*l+s] = math.NaN()
		}
	}
	ex, err := explain.TIME{Seed: 4}.Explain(context.Background(), model, data)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, ex, explain.DefaultAlpha)
	exact := 0
	for s := 2; s < l/2; s++ {
		f := ex.Outputs.Outputs[s].Features[0]
		if f.Important && len(f.Windows) == 1 && f.Windows[0].Lag != nil && *f.Windows[0].Lag == (tempora.Window{Start: 0, End: 2}) {
			exact++
		} else {
			t.Logf("output %d: feature 0 important %v, windows %v", s, f.Important, f.Windows)
		}
	}
	if exact < l/2-2 {
		t.Errorf("lag window exact on %d of the %d outputs every instance has", exact, l/2-2)
	}
	if ex.Outputs.ReadsFuture {
		t.Errorf("the causal model on irregular data said to read the future")
	}
}
