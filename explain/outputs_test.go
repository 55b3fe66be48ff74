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

var _ = math.NaN
