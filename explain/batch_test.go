package explain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// TestBatchSameResults checks that the batch size changes the model calls
// and nothing else: TIME with batch sizes given or chosen, on the native
// and the resident path, gives the explanation of the default run, and a
// given size b makes ⌈M/b⌉ calls per draw and for the baseline.
func TestBatchSameResults(t *testing.T) {
	data, f := benchProblem(80)
	cfg := explain.TIME{Seed: 3, Workers: 2}
	want, err := cfg.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	encode := func(ex *tempora.Explanation) []byte {
		e := *ex
		e.Accounting = tempora.Accounting{Draws: ex.Accounting.Draws}
		b, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	wantJSON := encode(want)
	for _, held := range []bool{false, true} {
		for _, batch := range []int{7, 33, 80, 1000, explain.BatchAuto} {
			c := cfg
			c.Batch = batch
			var got *tempora.Explanation
			if held {
				got, err = c.ExplainHeld(context.Background(), f, &holdModel{inner: f}, data)
			} else {
				got, err = c.Explain(context.Background(), f, data)
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := encode(got); !bytes.Equal(g, wantJSON) {
				t.Errorf("held %v, batch %d: explanation differs from the default run's:\n%s\n%s", held, batch, g, wantJSON)
			}
			b := got.Accounting.Batch
			if b == nil || b.Auto != (batch == explain.BatchAuto) || (batch > 0 && b.Size != min(batch, 80)) {
				t.Fatalf("held %v, batch %d: accounting's batch %+v", held, batch, b)
			}
			if batch == explain.BatchAuto {
				// A pass of this model takes far less than 5 ms: it is
				// timed at its largest size only, which it keeps.
				if len(b.Costs) != 1 || b.Costs[0].Size != 80 || b.Size != 80 {
					t.Errorf("held %v: timed sizes %+v, want 80 alone", held, b)
				}
				continue
			}
			draws := got.Accounting.TotalDraws().Draws
			per := int64((80 + b.Size - 1) / b.Size)
			if got.Accounting.ModelCalls != per*(1+draws) || got.Accounting.InstanceEvals != want.Accounting.InstanceEvals {
				t.Errorf("held %v, batch %d: %d model calls and %d instance evaluations, want %d·(1+%d) and %d", held, batch,
					got.Accounting.ModelCalls, got.Accounting.InstanceEvals, per, draws, want.Accounting.InstanceEvals)
			}
		}
	}
}

// sleepModel is a model of 0 on every instance whose calls take
// perCall + perRow2·rows² of wall time.
func sleepModel(perCall, perRow2 time.Duration) tempora.ModelFunc {
	return func(dst []float64, x *tempora.Tensor) error {
		time.Sleep(perCall + time.Duration(x.M*x.M)*perRow2)
		for i := range dst {
			dst[i] = x.At(i, 0, 0)
		}
		return nil
	}
}

// TestTuneBatch checks the choice of the batch size: a model whose cost
// per instance grows with the batch gets the smallest size timed, one
// whose cost is per call keeps the whole draw (no batch size), and one
// whose predictions depend on the batch is refused.
func TestTuneBatch(t *testing.T) {
	x := gaussianData(256, 2, 3, 1)
	y := make([]float64, x.M)
	data := &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}
	for _, tc := range []struct {
		name  string
		model tempora.ModelFunc
		want  int
	}{
		{"quadratic", sleepModel(0, 2*time.Microsecond), 32},
		{"per call", sleepModel(10*time.Millisecond, 0), 256},
	} {
		eng, err := explain.NewEngine(tc.model, data, nil, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := eng.TuneBatch(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b.Size != tc.want || eng.BatchSize() != tc.want || len(b.Costs) != 4 || !b.Auto {
			t.Errorf("%s: chose %+v (engine's batch size %d), want size %d of 4 timed", tc.name, b, eng.BatchSize(), tc.want)
		}
		// Four passes over the data after the baseline.
		if acc := eng.Accounting(); acc.InstanceEvals != 5*256 || acc.ModelCalls != 1+1+2+4+8 {
			t.Errorf("%s: tuning cost %+v", tc.name, acc)
		}
	}
	dependent := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		time.Sleep(6 * time.Millisecond) // slow enough to be timed at several sizes
		for i := range dst {
			dst[i] = float64(x.M)
		}
		return nil
	})
	eng, err := explain.NewEngine(dependent, data, nil, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.TuneBatch(context.Background()); err == nil || !strings.Contains(err.Error(), "depend on the batch") {
		t.Errorf("a model whose predictions depend on the batch: %v", err)
	}
	// A model that rounds differently by batch, as a float32 network
	// does (a relative 1e-9 per instance of the call: 2.6e-7 between
	// calls of 256 and 32): its batch is chosen, and the run equals one
	// with that size given.
	rounding := roundingModel([]int{0, 1})
	for i := range y {
		y[i] = x.At(i, 0, 0) + x.At(i, 1, 2)
	}
	cfg := explain.TIME{Seed: 2, Batch: explain.BatchAuto, Permutations: 9, Tests: explain.FixedTests, Windows: 1}
	auto, err := cfg.Explain(context.Background(), rounding, data)
	if err != nil || auto.Accounting.Batch == nil || auto.Accounting.Batch.Size != 32 {
		t.Fatalf("batch auto on a model that rounds by batch: %v, %+v", err, auto.Accounting.Batch)
	}
	cfg.Batch = 32
	given, err := cfg.Explain(context.Background(), rounding, data)
	if err != nil {
		t.Fatal(err)
	}
	auto.Accounting, given.Accounting = tempora.Accounting{}, tempora.Accounting{}
	a, _ := json.Marshal(auto)
	g, _ := json.Marshal(given)
	if !bytes.Equal(a, g) {
		t.Errorf("batch auto (32) and batch 32 differ:\n%s\n%s", a, g)
	}
	ex, err := explain.TIME{Batch: explain.BatchAuto, Permutations: 9, Tests: explain.FixedTests}.Explain(context.Background(), dependent, data)
	if err != nil || ex.Accounting.Batch != nil || !strings.Contains(strings.Join(ex.Warnings, "\n"), "depend on the batch") {
		t.Errorf("TIME with batch auto on such a model: %v, batch %+v, warnings %q", err, ex.Accounting.Batch, ex.Warnings)
	}
	if _, err := (explain.TIME{Batch: -2}).Explain(context.Background(), dependent, data); err == nil {
		t.Errorf("batch -2 accepted")
	}
}

// roundingModel returns a model of the sum of the features feats at
// their last timestep that rounds by its call's size, as a float32
// network's blocked matrix products do (a relative 1e-9 per instance of
// the call), and whose cost per instance grows with the call, so that
// batch auto chooses the smallest size timed.
func roundingModel(feats []int) tempora.ModelFunc {
	return func(dst []float64, x *tempora.Tensor) error {
		time.Sleep(time.Duration(x.M*x.M) * 2 * time.Microsecond)
		for i := range dst {
			v := 0.0
			for _, j := range feats {
				v += x.At(i, j, x.L-1)
			}
			dst[i] = v * (1 + float64(x.M)*1e-9)
		}
		return nil
	}
}

// TestBatchAutoKeepsTies checks that batch auto keeps the exact ties of a
// feature the model ignores, for a model that rounds by batch: the chosen
// size's predictions are the baseline's and a draw's calls cut the data
// at the same instances, so every draw of the ignored feature leaves
// every prediction as it was (score 0, every draw a hit, p-value 1).
// With the baseline kept from the whole-data call, the draws' predictions
// would differ from it by 2.2e-7 of a prediction and the ties would be
// lost.
func TestBatchAutoKeepsTies(t *testing.T) {
	x := gaussianData(256, 3, 3, 5)
	y := make([]float64, x.M)
	for i := range y {
		y[i] = x.At(i, 0, 2) + x.At(i, 1, 2)
	}
	data := &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}
	cfg := explain.TIME{Seed: 4, Batch: explain.BatchAuto, Permutations: 19, Tests: explain.FixedTests, Windows: 1}
	ex, err := cfg.Explain(context.Background(), roundingModel([]int{0, 1}), data)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Accounting.Batch == nil || ex.Accounting.Batch.Size >= x.M {
		t.Fatalf("batch auto chose %+v, want a size below %d", ex.Accounting.Batch, x.M)
	}
	f := ex.Features[2]
	if f.Score != 0 || f.PValue != 1 || f.Important {
		t.Errorf("ignored feature under batch auto (size %d): score %v, p-value %v, important %v; want 0, 1, false",
			ex.Accounting.Batch.Size, f.Score, f.PValue, f.Important)
	}
	for _, j := range []int{0, 1} {
		if !ex.Features[j].Important {
			t.Errorf("feature %d the model reads: not important (p-value %v)", j, ex.Features[j].PValue)
		}
	}
}
