package synth

import (
	"slices"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestInstanceTruthDesigned checks InstanceTruth on a hand-made model: a
// relevant Max feature (its argmax cells, all of them when tied), a
// relevant Average feature (its whole window) and an irrelevant Max
// feature (nothing).
func TestInstanceTruthDesigned(t *testing.T) {
	feats := []FeatureFunction{
		{Window: tempora.Window{Start: 1, End: 3}, Aggregator: Max, SD: 1, Coefficient: 1, Relevant: true},
		{Window: tempora.Window{Start: 0, End: 1}, Aggregator: Average, SD: 1, Coefficient: 1, Relevant: true},
		{Window: tempora.Window{Start: 0, End: 3}, Aggregator: Max, SD: 1, Coefficient: 1},
	}
	m, err := NewModel(tempora.Regression, 3, 4, 1, 0, feats)
	if err != nil {
		t.Fatal(err)
	}
	x := &tempora.Tensor{M: 2, D: 3, L: 4, Data: []float64{
		// instance 0: feature 0's maximum at t = 2 (t = 0 is outside the window)
		9, 1, 5, 2, 0, 0, 0, 0, 1, 2, 3, 4,
		// instance 1: feature 0 tied at t = 1 and 3
		0, 7, 3, 7, 1, 2, 3, 4, 5, 5, 5, 5,
	}}
	got := make([]bool, 2*3*4)
	if err := m.InstanceTruth(got, x); err != nil {
		t.Fatal(err)
	}
	want := []bool{
		false, false, true, false, true, true, false, false, false, false, false, false,
		false, true, false, true, true, true, false, false, false, false, false, false,
	}
	if !slices.Equal(got, want) {
		t.Errorf("truth %v, want %v", got, want)
	}
	if err := m.InstanceTruth(got[:5], x); err == nil {
		t.Error("no error for a short destination")
	}
	if err := m.InstanceTruth(got, &tempora.Tensor{M: 1, D: 2, L: 4, Data: make([]float64, 8)}); err == nil {
		t.Error("no error for data of the wrong shape")
	}
}

// TestInstanceTruthMovesOutput checks the definition on generated Max
// worlds: raising a true cell by 1 changes the noise-free output F_0 of its
// instance, while lowering any other cell of a relevant feature's window by
// 1 leaves it exactly unchanged. It also checks that Aggregator fixes every
// feature's aggregator.
func TestInstanceTruthMovesOutput(t *testing.T) {
	agg := Max
	p, err := Generate(Config{Instances: 50, Features: 6, Timesteps: 10, FractionRelevant: 0.5, Aggregator: &agg}, 7)
	if err != nil {
		t.Fatal(err)
	}
	x := p.Data.X
	truth := make([]bool, len(x.Data))
	if err := p.Model.InstanceTruth(truth, x); err != nil {
		t.Fatal(err)
	}
	base := make([]float64, x.M)
	if err := p.Model.Polynomial(base, x, 0); err != nil {
		t.Fatal(err)
	}
	one := make([]float64, 1)
	changed, kept := 0, 0
	for j := range x.D {
		f := p.Model.Feature(j)
		if f.Aggregator != Max {
			t.Fatalf("feature %d has aggregator %v, want max", j, f.Aggregator)
		}
		if !f.Relevant {
			continue
		}
		for i := range x.M {
			xi := x.Rows(i, i+1).Clone()
			for s := f.Window.Start; s <= f.Window.End; s++ {
				k := j*x.L + s
				v := xi.Data[k]
				if truth[i*x.D*x.L+k] {
					xi.Data[k] = v + 1
				} else {
					xi.Data[k] = v - 1
				}
				if err := p.Model.Polynomial(one, xi, 0); err != nil {
					t.Fatal(err)
				}
				xi.Data[k] = v
				if moved := one[0] != base[i]; moved != truth[i*x.D*x.L+k] {
					t.Errorf("instance %d feature %d timestep %d: true %v, output moved %v", i, j, s, truth[i*x.D*x.L+k], moved)
				}
				if truth[i*x.D*x.L+k] {
					changed++
				} else {
					kept++
				}
			}
		}
	}
	if changed == 0 || kept == 0 {
		t.Errorf("%d true and %d other window cells: the check did not exercise both", changed, kept)
	}
}
