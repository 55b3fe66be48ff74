package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestWindowSearchOracle drives the bisection with a deterministic,
// monotone oracle (a range's score is the number of true-window timesteps
// it contains, the overall score is the window length, θ·|I| < 1), for
// every true window of every length L in a set, and checks exact recovery
// and the probe bound ⌈log₂ L⌉ + ⌈log₂(L − start)⌉ (the search is the
// same under both rules). The
// oracle's scores are exact (no draws), so every probe is sure and the
// ends' ranges are single timesteps.
func TestWindowSearchOracle(t *testing.T) {
	{
		for _, l := range []int{1, 2, 3, 4, 5, 7, 10, 20, 48, 50} {
			for a := 0; a < l; a++ {
				for b := a; b < l; b++ {
					n := &node{res: &tempora.FeatureResult{Score: float64(b - a + 1)}}
					s := &search{n: unit{node: n, res: n.res}, l: l, thr: 0.5 / float64(b-a+1) * n.res.Score, hi: l, sureHi: l}
					s.advance()
					probes := 0
					for !s.done() {
						w, _ := s.probe()
						if w.Start < 0 || w.End >= l || w.Start > w.End {
							t.Fatalf("L=%d window [%d, %d]: probe %v out of range", l, a, b, w)
						}
						lo, hi := max(w.Start, a), min(w.End, b)
						s.update(TestResult{Score: float64(max(0, hi-lo+1)), Draws: 1})
						probes++
					}
					if got := s.window(); got != (tempora.Window{Start: a, End: b}) {
						t.Errorf("L=%d: found %v, want [%d, %d]", l, got, a, b)
					}
					if s.startRange != (tempora.Window{Start: a, End: a}) || s.endRange() != (tempora.Window{Start: b, End: b}) {
						t.Errorf("L=%d window [%d, %d]: ranges %v %v, want single timesteps", l, a, b, s.startRange, s.endRange())
					}
					bound := ceilLog2(l) + ceilLog2(l-a)
					if probes > bound {
						t.Errorf("L=%d window [%d, %d]: %d probes, want at most %d", l, a, b, probes, bound)
					}
				}
			}
		}
	}
}

func ceilLog2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

func TestPerturbationString(t *testing.T) {
	for k, want := range map[Perturbation]string{AcrossInstances{}: "across-instances", WithinWindow{}: "within-window", Conditional{}: "conditional"} {
		if got := fmt.Sprint(k); got != want {
			t.Errorf("%T: %q, want %q", k, got, want)
		}
	}
}

// TestChunkedDraws checks that evaluating draws in chunks of instances
// (data larger than chunkValues) gives exactly the results of evaluating
// them on a full copy, with one model call per chunk, and that TIME's
// explanation is the same apart from the model calls.
func TestChunkedDraws(t *testing.T) {
	const m, d, l = 103, 4, 6
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(2, "chunk data")
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			dst[i] = x.At(i, 0, 1) + 2*x.At(i, 0, 2) - x.At(i, 1, 3)*x.At(i, 2, 3) + 0.5*x.At(i, 3, 5)
		}
		return nil
	})
	y := make([]float64, m)
	model(y, x)
	for i := range y {
		y[i] += rng.NormFloat64()
	}
	data := &tempora.Dataset{X: x, Y: y}
	tests := []Test{
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: 5}, Permutations: 30, Key: "a", Stop: BesagClifford{Hits: 5}},
		{Features: []int{1, 2}, Window: tempora.Window{Start: 2, End: 4}, Permutations: 30, Key: "b"},
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: 4}, Kind: WithinWindow{}, Permutations: 30, Key: "c"},
		{Features: []int{0, 3}, Window: tempora.Window{Start: 1, End: 3}, Kind: WithinWindow{}, Permutations: 30, Key: "exact"},
		{Features: []int{3}, Window: tempora.Window{Start: 0, End: 2}, Permutations: 30, Key: "probe", Stop: Probe{Threshold: 0.1}},
	}
	run := func(values int) ([]TestResult, tempora.Accounting, *tempora.Explanation) {
		t.Helper()
		defer func(v int) { chunkValues = v }(chunkValues)
		chunkValues = values
		eng, err := NewEngine(model, data, nil, 4, 3)
		if err != nil {
			t.Fatal(err)
		}
		// A budget of one chunk per worker: no worker can copy the whole
		// data (unless it is at most a chunk), and every worker's chunk
		// fits.
		budget := int64(3 * 8 * values)
		eng.SetMemoryBudget(budget)
		res, err := eng.Run(context.Background(), tests)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := TIME{Seed: 4, Workers: 3, MemoryBudget: budget}.Explain(context.Background(), model, data)
		if err != nil {
			t.Fatal(err)
		}
		return res, eng.Accounting(), ex
	}
	full, fullAcc, fullEx := run(m * d * l)
	// 10 instances of 24 values per chunk: 11 calls per draw.
	chunked, chunkedAcc, chunkedEx := run(10 * d * l)
	var draws int64
	for k := range full {
		a, b := full[k], chunked[k]
		if math.IsNaN(a.PValue) && math.IsNaN(b.PValue) {
			a.PValue, b.PValue = 0, 0
		}
		if a != b {
			t.Errorf("test %q: chunked %+v, full %+v", tests[k].Key, chunked[k], full[k])
		}
		draws += int64(full[k].Evaluated)
	}
	if fullAcc.ModelCalls != 1+draws || chunkedAcc.ModelCalls != 1+11*draws || chunkedAcc.InstanceEvals != fullAcc.InstanceEvals {
		t.Errorf("accounting: full %+v, chunked %+v for %d draws", fullAcc, chunkedAcc, draws)
	}
	fullEx.Accounting, chunkedEx.Accounting = tempora.Accounting{}, tempora.Accounting{}
	a, _ := json.Marshal(fullEx)
	b, _ := json.Marshal(chunkedEx)
	if string(a) != string(b) {
		t.Errorf("TIME explanations differ:\n%s\n%s", a, b)
	}
	// With the default budget the same data, above chunkValues, is copied
	// whole: one call per draw.
	defer func(v int) { chunkValues = v }(chunkValues)
	chunkValues = 10 * d * l
	eng, err := NewEngine(model, data, nil, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Run(context.Background(), tests); err != nil {
		t.Fatal(err)
	}
	if acc := eng.Accounting(); acc.ModelCalls != fullAcc.ModelCalls || acc.InstanceEvals != fullAcc.InstanceEvals {
		t.Errorf("default budget: accounting %+v, want %+v", acc, fullAcc)
	}
}
