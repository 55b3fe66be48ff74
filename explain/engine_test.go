package explain_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// TestExactEnumeration checks the exact ordering test: for a window of
// length w ≤ 4 and P ≥ w!−1 it makes w!−1 draws, uses every non-identity
// ordering exactly once, and reaches the p-value floor 1/w! when every
// reordering increases the loss.
func TestExactEnumeration(t *testing.T) {
	const m, l, start = 5, 6, 1
	for _, tc := range []struct {
		w, perms, draws int
		exact           bool
	}{
		{w: 1, perms: 50, draws: 0, exact: true},
		{w: 2, perms: 50, draws: 1, exact: true},
		{w: 3, perms: 50, draws: 5, exact: true},
		{w: 4, perms: 50, draws: 23, exact: true},
		{w: 4, perms: 23, draws: 23, exact: true},
		{w: 4, perms: 22, draws: 22, exact: false},
		{w: 5, perms: 50, draws: 50, exact: false},
	} {
		t.Run(fmt.Sprintf("w=%d/P=%d", tc.w, tc.perms), func(t *testing.T) {
			// x[i, 0, t] = 10·i + t, so the model can read off the ordering
			// applied to instance 0's window.
			x := tempora.NewTensor(m, 1, l)
			for i := range m {
				for s := range l {
					x.Set(i, 0, s, float64(10*i+s))
				}
			}
			var mu sync.Mutex
			seen := map[string]int{}
			model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
				win := x.Window(0, 0, start, start+tc.w-1)
				key := fmt.Sprint(win)
				mu.Lock()
				seen[key]++
				mu.Unlock()
				// Σ (k+1)·x[i, start+k]: by the rearrangement inequality
				// every non-identity ordering of increasing values lowers
				// it, so every draw is strictly worse than the baseline.
				for i := range dst {
					var v float64
					for k, s := range x.Window(i, 0, start, start+tc.w-1) {
						v += float64(k+1) * s
					}
					dst[i] = v
				}
				return nil
			})
			y := make([]float64, m)
			model(y, x)
			data := &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}
			eng, err := explain.NewEngine(model, data, nil, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			delete(seen, fmt.Sprint(x.Window(0, 0, start, start+tc.w-1))) // the baseline call
			res, err := eng.Run(context.Background(), []explain.Test{{
				Features: []int{0}, Window: tempora.Window{Start: start, End: start + tc.w - 1},
				Kind: explain.WithinWindow{}, Permutations: tc.perms, Key: "order",
			}})
			if err != nil {
				t.Fatal(err)
			}
			r := res[0]
			if r.Draws != tc.draws {
				t.Errorf("draws = %d, want %d", r.Draws, tc.draws)
			}
			if tc.exact {
				if len(seen) != tc.draws {
					t.Errorf("%d distinct non-identity orderings used, want %d", len(seen), tc.draws)
				}
				for k, c := range seen {
					if c != 1 {
						t.Errorf("ordering %s used %d times, want once", k, c)
					}
				}
				// Every draw is worse, so p = 1/(1+draws) = 1/w!.
				if want := 1 / float64(tc.draws+1); r.PValue != want {
					t.Errorf("p = %v, want the floor 1/%d!", r.PValue, tc.w)
				}
			}
			if acc := eng.Accounting(); acc.ModelCalls != int64(1+tc.draws) || acc.InstanceEvals != int64(m*(1+tc.draws)) {
				t.Errorf("accounting %+v, want %d calls of %d instances", acc, 1+tc.draws, m)
			}
		})
	}
}

// TestJointPermutation checks that one instance permutation moves every
// feature of a group and every timestep of a window together: when two
// permuted columns are equal and the model reads only their difference,
// the joint test changes nothing (score 0, p = 1) while permuting one of
// them does.
func TestJointPermutation(t *testing.T) {
	const m, l = 200, 4
	x := gaussianData(m, 2, l, 3)
	for i := range m {
		copy(x.Series(i, 1), x.Series(i, 0)) // feature 1 = feature 0
		x.Set(i, 0, 3, x.At(i, 0, 2))        // timestep 3 = timestep 2
	}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			dst[i] = 3*(x.At(i, 0, 0)-x.At(i, 1, 0)) + 3*(x.At(i, 0, 2)-x.At(i, 0, 3))
		}
		return nil
	})
	y := make([]float64, m)
	rng := tempora.NewRand(3, "y")
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	eng, err := explain.NewEngine(model, &tempora.Dataset{X: x, Y: y}, nil, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Run(context.Background(), []explain.Test{
		{Features: []int{0, 1}, Window: tempora.Window{Start: 0, End: 0}, Permutations: 50, Key: "group"},
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: 0}, Permutations: 50, Key: "one"},
		{Features: []int{0}, Window: tempora.Window{Start: 2, End: 3}, Permutations: 50, Key: "window"},
		{Features: []int{0}, Window: tempora.Window{Start: 2, End: 2}, Permutations: 50, Key: "step"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 2} {
		if res[k].Score != 0 || res[k].PValue != 1 {
			t.Errorf("joint test %d: %+v, want score 0 and p = 1", k, res[k])
		}
	}
	// Permuting a term of variance 9·2 = 18 on its own raises the mean
	// squared error by about 18 per instance; with M = 200 every one of
	// the 50 draws is worse, so p is the floor 1/51.
	for _, k := range []int{1, 3} {
		if res[k].Score < 9 || res[k].PValue != 1.0/51 {
			t.Errorf("single test %d: %+v, want score > 9 and p = 1/51", k, res[k])
		}
	}
}

// TestRunDeterministic checks that results depend on the tests' keys only:
// not on the number of workers and not on the tests' position in the
// batch.
func TestRunDeterministic(t *testing.T) {
	x := gaussianData(100, 3, 8, 5)
	model := weightedWindow(1, 2, []float64{0.3, -0.2, 0.1})
	data := regressionData(t, x, model, 1, 5)
	tests := []explain.Test{
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: 7}, Permutations: 40, Key: "a"},
		{Features: []int{1}, Window: tempora.Window{Start: 2, End: 4}, Permutations: 30, Key: "b"},
		{Features: []int{1, 2}, Window: tempora.Window{Start: 0, End: 7}, Kind: explain.WithinWindow{}, Permutations: 20, Key: "c"},
		{Features: []int{1}, Window: tempora.Window{Start: 3, End: 3}, Permutations: 25, Key: "d"},
		// A family of the anytime rule, with an exact test (3! − 1 draws).
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: 7}, Permutations: 40, Key: "e", Stop: explain.Anytime{}},
		{Features: []int{1}, Window: tempora.Window{Start: 0, End: 7}, Permutations: 40, Key: "f", Stop: explain.Anytime{}},
		{Features: []int{1}, Window: tempora.Window{Start: 2, End: 4}, Kind: explain.WithinWindow{}, Permutations: 40, Key: "g", Stop: explain.Anytime{}},
	}
	var ref []explain.TestResult
	for _, workers := range []int{1, 2, 4, 7} {
		eng, err := explain.NewEngine(model, data, nil, 9, workers)
		if err != nil {
			t.Fatal(err)
		}
		res, err := runOneFamily(eng, tests)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = res
			continue
		}
		if !reflect.DeepEqual(res, ref) {
			t.Errorf("%d workers: %+v, want %+v", workers, res, ref)
		}
	}
	if !ref[4].Stopped || ref[4].Draws >= 40 || ref[5].Draws != 40 && !ref[5].Stopped || ref[6].Stopped || ref[6].Draws != 5 {
		t.Errorf("anytime family: %+v", ref[4:])
	}
	eng, _ := explain.NewEngine(model, data, nil, 9, 3)
	n := len(tests)
	rev := make([]explain.Test, n)
	for k := range tests {
		rev[k] = tests[n-1-k]
	}
	res, err := runOneFamily(eng, rev)
	if err != nil {
		t.Fatal(err)
	}
	for k := range res {
		if res[k] != ref[n-1-k] {
			t.Errorf("reversed batch, test %q: %+v, want %+v", rev[k].Key, res[k], ref[n-1-k])
		}
	}
	// A different seed gives different draws.
	eng, _ = explain.NewEngine(model, data, nil, 10, 3)
	other, _ := runOneFamily(eng, tests)
	if other[1].Score == ref[1].Score {
		t.Errorf("seeds 9 and 10 give the same score %v", ref[1].Score)
	}
}

// runOneFamily runs tests as one family at level 0.1 (only its tests that
// stop by their family's decision are settled together).
func runOneFamily(eng *explain.Engine, tests []explain.Test) ([]explain.TestResult, error) {
	res, err := eng.RunFamilies(context.Background(), []explain.Family{{Alpha: 0.1, Tests: tests}})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

func TestRunErrors(t *testing.T) {
	x := gaussianData(10, 3, 5, 1)
	model := weightedWindow(0, 0, []float64{1})
	data := regressionData(t, x, model, 1, 1)
	eng, err := explain.NewEngine(model, data, nil, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	w := tempora.Window{Start: 0, End: 4}
	for _, tc := range []struct {
		name string
		test explain.Test
		want string
	}{
		{"no features", explain.Test{Window: w, Permutations: 5}, "permutes no features"},
		{"feature out of range", explain.Test{Features: []int{3}, Window: w, Permutations: 5}, "permutes feature 3"},
		{"negative feature", explain.Test{Features: []int{-1}, Window: w, Permutations: 5}, "permutes feature -1"},
		{"repeated feature", explain.Test{Features: []int{1, 1}, Window: w, Permutations: 5}, "feature 1 twice"},
		{"window past end", explain.Test{Features: []int{0}, Window: tempora.Window{Start: 2, End: 5}, Permutations: 5}, "window [2, 5]"},
		{"reversed window", explain.Test{Features: []int{0}, Window: tempora.Window{Start: 3, End: 2}, Permutations: 5}, "window [3, 2]"},
		{"no permutations", explain.Test{Features: []int{0}, Window: w}, "0 permutations"},
		{"bad stop", explain.Test{Features: []int{0}, Window: w, Permutations: 5, Stop: explain.BesagClifford{}}, "stops after 0 hits"},
		{"anytime without a family", explain.Test{Features: []int{0}, Window: w, Permutations: 5, Stop: explain.Anytime{}}, "in no family"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eng.Run(context.Background(), []explain.Test{{Features: []int{0}, Window: w, Permutations: 1}, tc.test})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "explain: test 1") {
				t.Errorf("error %v, want one about test 1 containing %q", err, tc.want)
			}
		})
	}
	anytime := explain.Test{Features: []int{0}, Window: w, Permutations: 5, Stop: explain.Anytime{}}
	for _, alpha := range []float64{0, 1.5, math.NaN()} {
		fams := []explain.Family{{Alpha: 0.1, Tests: []explain.Test{anytime}}, {Alpha: alpha, Tests: []explain.Test{anytime}}}
		if _, err := eng.RunFamilies(context.Background(), fams); err == nil || !strings.Contains(err.Error(), "family 1 has level") {
			t.Errorf("a family of level %v: error %v", alpha, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := eng.Run(ctx, []explain.Test{{Features: []int{0}, Window: w, Permutations: 5}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: error %v, want context.Canceled", err)
	}
	// A cancelled run fails whatever the number of draws per worker, also
	// when every worker takes at most one draw of the batch.
	for _, workers := range []int{1, 2, 8} {
		eng, err := explain.NewEngine(model, data, nil, 1, workers)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []int{1, 2, 20} {
			_, err := eng.Run(ctx, []explain.Test{{Features: []int{0}, Window: w, Permutations: p}})
			if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "explain: ") {
				t.Errorf("cancelled run of %d draws on %d workers: error %v, want explain: context canceled", p, workers, err)
			}
		}
	}
}

// TestPValueFormula checks p = (1 + #{draws not worse}) / (1 + P) and the
// score on a model whose perturbed losses are known: permuting feature 0
// either leaves the loss unchanged (half of the draws, chosen by the
// model) or raises it.
func TestPValueFormula(t *testing.T) {
	const m = 4
	x := gaussianData(m, 1, 1, 2)
	var mu sync.Mutex
	call := 0
	// Calls after the baseline alternate between an unchanged prediction
	// (0) and a prediction of 1 for every instance; the targets are 0, so
	// the losses are 0 and 1.
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		mu.Lock()
		c := call
		call++
		mu.Unlock()
		for i := range dst {
			dst[i] = float64(c % 2)
		}
		return nil
	})
	data := &tempora.Dataset{X: x, Y: make([]float64, m)}
	eng, err := explain.NewEngine(model, data, nil, 1, 1) // one worker: calls in draw order
	if err != nil {
		t.Fatal(err)
	}
	res, err := eng.Run(context.Background(), []explain.Test{{Features: []int{0}, Window: tempora.Window{}, Permutations: 9, Key: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	// Draws 0..8 are calls 1..9: losses 1,0,1,0,1,0,1,0,1 → 4 not worse.
	if want := (1.0 + 4) / (1 + 9); res[0].PValue != want {
		t.Errorf("p = %v, want %v", res[0].PValue, want)
	}
	if want := 5.0 / 9; math.Abs(res[0].Score-want) > 1e-15 {
		t.Errorf("score = %v, want %v", res[0].Score, want)
	}
}

// TestBlocksRestored checks that a worker's copy of the data differs from
// the original only in the block of the draw being evaluated, across
// tests, batches and workers.
func TestBlocksRestored(t *testing.T) {
	const m, l = 30, 6
	x := gaussianData(m, 3, l, 6)
	orig := x.Clone()
	blocks := [][3]int{{0, 0, 1}, {1, 2, 3}, {2, 0, 5}} // feature, start, end
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		changed := map[int]bool{}
		for i := range m {
			for j := range 3 {
				for s := range l {
					if x.At(i, j, s) == orig.At(i, j, s) {
						continue
					}
					b := blocks[j]
					if s < b[1] || s > b[2] {
						return fmt.Errorf("cell (%d, %d, %d) outside block %v changed", i, j, s, b)
					}
					changed[j] = true
				}
			}
		}
		if len(changed) > 1 {
			return fmt.Errorf("blocks of features %v changed together", changed)
		}
		for i := range dst {
			dst[i] = x.At(i, 0, 0) + x.At(i, 1, 2) + x.At(i, 2, 5)
		}
		return nil
	})
	data := regressionData(t, x, model, 1, 6)
	for _, workers := range []int{1, 3} {
		eng, err := explain.NewEngine(model, data, nil, 1, workers)
		if err != nil {
			t.Fatal(err)
		}
		var tests []explain.Test
		for k := range 7 {
			b := blocks[k%3]
			kinds := []explain.Perturbation{explain.AcrossInstances{}, explain.WithinWindow{}}
			kind := kinds[k%2]
			tests = append(tests, explain.Test{Features: []int{b[0]}, Window: tempora.Window{Start: b[1], End: b[2]}, Kind: kind, Permutations: 6, Key: fmt.Sprint(k)})
		}
		for range 2 { // a second batch starts from a clean copy
			if _, err := eng.Run(context.Background(), tests); err != nil {
				t.Fatalf("%d workers: %v", workers, err)
			}
		}
	}
}
