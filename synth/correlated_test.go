package synth

import (
	"math"
	"reflect"
	"testing"
)

// TestCorrelated checks the correlated world: B's correlation with A at a
// timestep is ρ (5 SE of the sample correlation at M = 4000: (1−ρ²)/√M ≤
// 0.016), the truths in both senses, the black boxes and determinism.
func TestCorrelated(t *testing.T) {
	for _, rho := range []float64{0, 0.5, 0.9, 0.99} {
		for _, spread := range []bool{false, true} {
			p, err := Correlated(CorrelatedConfig{Instances: 4000, Rho: rho, Spread: spread}, 3)
			if err != nil {
				t.Fatal(err)
			}
			x := p.Data.X
			if x.D != 5 || x.L != 10 || p.Data.FeatureNames[1] != "B" {
				t.Fatalf("shape %d×%d×%d, names %v", x.M, x.D, x.L, p.Data.FeatureNames)
			}
			var sa, sb, saa, sbb, sab float64
			n := float64(x.M)
			for i := range x.M {
				a, b := x.At(i, 0, 4), x.At(i, 1, 4)
				sa, sb, saa, sbb, sab = sa+a, sb+b, saa+a*a, sbb+b*b, sab+a*b
			}
			c := (sab/n - sa*sb/n/n) / math.Sqrt((saa/n-sa*sa/n/n)*(sbb/n-sb*sb/n/n))
			if tol := 5 * max(1-rho*rho, 0.02) / math.Sqrt(n); math.Abs(c-rho) > max(tol, 0.001) {
				t.Errorf("rho=%v: sample correlation %.4f", rho, c)
			}
			for j := range x.D {
				if p.DataTruth[j].Relevant != (j == 0) {
					t.Errorf("rho=%v spread=%v: data truth of feature %d relevant %v", rho, spread, j, p.DataTruth[j].Relevant)
				}
				if want := j == 0 || j == 1 && spread; p.ModelTruth[j].Relevant != want {
					t.Errorf("rho=%v spread=%v: model truth of feature %d relevant %v, want %v", rho, spread, j, p.ModelTruth[j].Relevant, want)
				}
			}
			pred := make([]float64, x.M)
			if err := p.Model.Predict(pred, x); err != nil {
				t.Fatal(err)
			}
			// The mean over the window, written out here rather than
			// through the model's own helper.
			w := correlatedWindow(x.L)
			mean := func(i, j int) float64 {
				var s float64
				for t := w.Start; t <= w.End; t++ {
					s += x.Data[(i*x.D+j)*x.L+t]
				}
				return s / float64(w.End-w.Start+1)
			}
			for i := range 5 {
				want := mean(i, 0)
				if spread {
					want = 0.5*want + 0.5*mean(i, 1)
				}
				if math.Abs(pred[i]-want) > 1e-12 {
					t.Errorf("prediction %d: %v, want %v", i, pred[i], want)
				}
			}
		}
	}
	a, _ := Correlated(CorrelatedConfig{Instances: 50, Rho: 0.9, Nonlinear: true}, 9)
	b, _ := Correlated(CorrelatedConfig{Instances: 50, Rho: 0.9, Nonlinear: true}, 9)
	if !reflect.DeepEqual(a.Data, b.Data) {
		t.Error("same seed, different data")
	}
}

func TestCorrelatedErrors(t *testing.T) {
	for _, c := range []CorrelatedConfig{
		{Rho: 1}, {Rho: -0.1}, {Rho: math.NaN()}, {Instances: 1}, {Timesteps: 3}, {Others: -2}, {Noise: -2}, {Noise: math.Inf(1)},
		{Instances: 1 << 20, Timesteps: 1 << 10},
	} {
		if _, err := Correlated(c, 1); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
