package baselines

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestDeterminism checks that every method gives bitwise-identical cells
// and identical accounting with 1 and 4 workers.
func TestDeterminism(t *testing.T) {
	a := []float64{2, -1, 0.5, 0, 1.5, 0, 1, 0.2}
	sd := []float64{1, 2, 1, 1, 0.5, 3, 1, 1}
	data, f := linearProblem(t, 300, 2, 4, a, nil, sd, 12)
	for _, tc := range []struct {
		name string
		make func(workers int) tempora.Explainer
	}{
		{"LIME", func(w int) tempora.Explainer { return LIME{Samples: 300, Instances: 9, Seed: 5, Workers: w} }},
		{"SP-LIME", func(w int) tempora.Explainer { return LIME{Samples: 300, SPLIME: true, Seed: 5, Workers: w} }},
		{"SAGE", func(w int) tempora.Explainer {
			return SAGE{Background: 20, BatchSize: 77, MaxPermutations: 200, Seed: 5, Workers: w}
		}},
		{"SAGE-m", func(w int) tempora.Explainer {
			return SAGE{Imputer: Mean, BatchSize: 200, MaxPermutations: 1000, Seed: 5, Workers: w}
		}},
		{"SAGE-z", func(w int) tempora.Explainer {
			return SAGE{Imputer: Zero, BatchSize: 200, MaxPermutations: 1000, Seed: 5, Workers: w}
		}},
		{"PERM", func(w int) tempora.Explainer { return PERM{Permutations: 20, Seed: 5, Workers: w} }},
		{"PERM-f", func(w int) tempora.Explainer { return PERM{Filter: true, Permutations: 20, Seed: 5, Workers: w} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e1, err := tc.make(1).Explain(ctx, f, data)
			if err != nil {
				t.Fatal(err)
			}
			e4, err := tc.make(4).Explain(ctx, f, data)
			if err != nil {
				t.Fatal(err)
			}
			if !sameFloats(e1.Cells, e4.Cells) {
				t.Errorf("cells differ:\n1 worker:  %v\n4 workers: %v", e1.Cells, e4.Cells)
			}
			for j := range e1.Features {
				if e1.Features[j].Score != e4.Features[j].Score {
					t.Errorf("feature %d score %v vs %v", j, e1.Features[j].Score, e4.Features[j].Score)
				}
			}
			if e1.Accounting.ModelCalls != e4.Accounting.ModelCalls || e1.Accounting.InstanceEvals != e4.Accounting.InstanceEvals {
				t.Errorf("accounting differs: %+v vs %+v", e1.Accounting, e4.Accounting)
			}
			if e1.Method != e4.Method || e1.Method != tc.name && tc.name != "SP-LIME" {
				t.Errorf("methods %q and %q, want %q", e1.Method, e4.Method, tc.name)
			}
			nonzero := false
			for _, v := range e1.Cells {
				nonzero = nonzero || v != 0
			}
			if !nonzero {
				t.Error("every cell is zero")
			}
		})
	}
}

// TestBadInput checks that bad data, configurations and models give clear
// errors naming the offending value.
func TestBadInput(t *testing.T) {
	good, f := linearProblem(t, 50, 2, 3, []float64{1, 0, 0, 0, 0, 1}, nil, []float64{1, 1, 1, 1, 1, 1}, 1)
	nanData := &tempora.Dataset{X: good.X.Clone(), Y: good.Y}
	nanData.X.Set(3, 1, 2, math.NaN())
	shortY := &tempora.Dataset{X: good.X, Y: good.Y[:10]}
	badLabels := &tempora.Dataset{X: good.X, Y: good.Y, Task: tempora.Classification}
	one := &tempora.Dataset{X: good.X.Rows(0, 1), Y: good.Y[:1]}
	failing := tempora.ModelFunc(func([]float64, *tempora.Tensor) error { return errors.New("model exploded") })
	nanModel := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			dst[i] = math.NaN()
		}
		return nil
	})
	labels := make([]float64, 50)
	cls := &tempora.Dataset{X: good.X, Y: labels, Task: tempora.Classification}
	notProb := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			dst[i] = 1.5
		}
		return nil
	})

	for _, tc := range []struct {
		name string
		exp  tempora.Explainer
		m    tempora.Model
		data *tempora.Dataset
		want string
	}{
		{"LIME nil data", LIME{}, f, nil, "nil dataset"},
		{"LIME NaN", LIME{}, f, nanData, "LIME needs complete data, and in this data 1 value is missing (NaN), at instance 3, feature 1, timestep 2"},
		{"LIME targets", LIME{}, f, shortY, "10 targets for 50 instances"},
		{"LIME labels", LIME{}, f, badLabels, "want 0 or 1"},
		{"LIME nil model", LIME{}, nil, good, "nil model"},
		{"LIME one sample", LIME{Samples: 1}, f, good, "Samples is 1"},
		{"LIME negative samples", LIME{Samples: -5}, f, good, "Samples is -5"},
		{"LIME width", LIME{KernelWidth: -1}, f, good, "KernelWidth is -1"},
		{"LIME NaN width", LIME{KernelWidth: math.NaN()}, f, good, "KernelWidth is NaN"},
		{"LIME ridge", LIME{Ridge: math.Inf(1)}, f, good, "Ridge is +Inf"},
		{"LIME instances", LIME{Instances: 51}, f, good, "Instances is 51 but the data has only 50"},
		{"LIME negative instances", LIME{Instances: -1}, f, good, "Instances is -1"},
		{"LIME workers", LIME{Workers: -2}, f, good, "Workers is -2"},
		{"LIME failing model", LIME{Samples: 10}, failing, good, "model exploded"},
		{"LIME NaN model", LIME{Samples: 10}, nanModel, good, "predicted NaN"},
		{"LIME not a probability", LIME{Samples: 10}, notProb, cls, "predicted 1.5"},

		{"SAGE nil data", SAGE{}, f, nil, "nil dataset"},
		// SAGE takes missing values; this model cannot, and says so.
		{"SAGE NaN", SAGE{}, f, nanData, "baselines: model: tempora: predicted NaN for instance 3"},
		{"SAGE nil model", SAGE{}, nil, good, "nil model"},
		{"SAGE background", SAGE{Background: 51}, f, good, "Background of 51 rows exceeds the 50 instances"},
		{"SAGE negative background", SAGE{Background: -1}, f, good, "Background is -1"},
		{"SAGE batch", SAGE{BatchSize: -512}, f, good, "BatchSize is -512"},
		{"SAGE threshold", SAGE{Threshold: -0.05}, f, good, "Threshold is -0.05"},
		{"SAGE NaN threshold", SAGE{Threshold: math.NaN()}, f, good, "Threshold is NaN"},
		{"SAGE permutations", SAGE{MaxPermutations: -1}, f, good, "MaxPermutations is -1"},
		{"SAGE time", SAGE{MaxTime: -1}, f, good, "MaxTime is -1ns"},
		{"SAGE imputer", SAGE{Imputer: 7}, f, good, "unknown SAGE imputer 7"},
		{"SAGE workers", SAGE{Workers: -1}, f, good, "Workers is -1"},
		{"SAGE failing model", SAGE{MaxPermutations: 5}, failing, good, "model exploded"},
		{"SAGE NaN model", SAGE{Imputer: Zero, MaxPermutations: 5}, nanModel, good, "predicted NaN"},
		{"SAGE not a probability", SAGE{Imputer: Mean, MaxPermutations: 5}, notProb, cls, "predicted 1.5"},

		{"PERM nil data", PERM{}, f, nil, "nil dataset"},
		// PERM takes missing values if TIME's engine does, and this model
		// cannot; either way the error names the NaN.
		{"PERM NaN", PERM{}, f, nanData, "NaN"},
		{"PERM one instance", PERM{}, f, one, "1 instances, need at least 2"},
		{"PERM nil model", PERM{}, nil, good, "nil model"},
		{"PERM permutations", PERM{Permutations: -50}, f, good, "Permutations is -50"},
		{"PERM alpha", PERM{Alpha: 1.5}, f, good, "Alpha is 1.5"},
		{"PERM workers", PERM{Workers: -3}, f, good, "Workers is -3"},
		{"PERM failing model", PERM{}, failing, good, "model exploded"},
		{"PERM not a probability", PERM{}, notProb, cls, "predicted 1.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := tc.exp.Explain(context.Background(), tc.m, tc.data)
			if err == nil {
				t.Fatalf("no error (explanation %v)", e)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "baselines: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// TestCancel checks that a cancelled context stops every method with
// context.Canceled.
func TestCancel(t *testing.T) {
	data, f := linearProblem(t, 50, 2, 3, []float64{1, 0, 0, 0, 0, 1}, nil, []float64{1, 1, 1, 1, 1, 1}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, exp := range []tempora.Explainer{LIME{}, SAGE{}, PERM{}} {
		if _, err := exp.Explain(ctx, f, data); !errors.Is(err, context.Canceled) {
			t.Errorf("%T: error %v, want context.Canceled", exp, err)
		}
	}
}
