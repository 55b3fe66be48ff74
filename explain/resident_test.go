package explain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/resident"
)

// holdModel is an in-process resident.Model around a Model, as a model
// process serves it: it holds the data, applies each block to a working
// copy of it, predicts the block's rows with the inner model and restores
// them. It counts the calls and checks every block.
type holdModel struct {
	inner tempora.Model
	limit int

	mu     sync.Mutex
	held   *tempora.Tensor
	copies []*tempora.Tensor // free working copies
	holds  atomic.Int64
	calls  atomic.Int64 // PredictBlocks requests
	blocks atomic.Int64 // blocks predicted: the model's calls
}

func (h *holdModel) Hold(x *tempora.Tensor) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holds.Add(1)
	if h.held != x {
		h.held, h.copies = x, nil
	}
	return nil
}

func (h *holdModel) BatchLimit() int { return h.limit }

// PredictBlocksFilled has no memory of its own: the values go through
// scratch (resident.FillScratch).
func (h *holdModel) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	return resident.FillScratch(dst, x, blocks, scratch, fill, h.PredictBlocks)
}

func (h *holdModel) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	h.calls.Add(1)
	h.blocks.Add(int64(len(blocks)))
	h.mu.Lock()
	if x != h.held {
		h.mu.Unlock()
		return fmt.Errorf("holdModel: blocks of a tensor it does not hold")
	}
	var w *tempora.Tensor
	if n := len(h.copies); n > 0 {
		w, h.copies = h.copies[n-1], h.copies[:n-1]
	} else {
		w = x.Clone()
	}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.copies = append(h.copies, w)
		h.mu.Unlock()
	}()
	rows := 0
	for k := range blocks {
		rows += blocks[k].Rows()
	}
	if len(dst) != rows || (h.limit > 0 && rows > h.limit) {
		return fmt.Errorf("holdModel: %d predictions for %d rows (limit %d)", len(dst), rows, h.limit)
	}
	at := 0
	for k := range blocks {
		b := &blocks[k]
		if err := b.Check(x.M, x.D, x.L); err != nil {
			return err
		}
		b.Apply(w)
		err := h.inner.Predict(dst[at:at+b.Rows()], w.Rows(b.Lo, b.Hi))
		tempora.RestoreBlock(w, x, b.Features, b.Start, b.End)
		if err != nil {
			return err
		}
		at += b.Rows()
	}
	return nil
}

// residentTests are tests of every perturbation kind, fixed and
// sequential, on the benchmark problem's 10 features.
func residentTests() []explain.Test {
	var tests []explain.Test
	for j := range 10 {
		w := tempora.Window{Start: j, End: j + 6}
		tests = append(tests,
			explain.Test{Features: []int{j}, Window: w, Permutations: 40, Key: "across/" + strconv.Itoa(j)},
			explain.Test{Features: []int{j, (j + 3) % 10}, Window: w, Kind: explain.WithinWindow{}, Permutations: 30, Key: "within/" + strconv.Itoa(j)},
			explain.Test{Features: []int{j}, Window: w, Kind: explain.Conditional{}, Permutations: 20, Key: "cond/" + strconv.Itoa(j)},
			explain.Test{Features: []int{j}, Window: tempora.Window{Start: 0, End: 19}, Permutations: 60, Key: "seq/" + strconv.Itoa(j), Stop: explain.SequentialStop(0.1, 60)})
	}
	return tests
}

// TestResidentMatchesNative checks that the resident path gives the same
// test results, bit for bit, as the native path, for several worker counts
// and batch limits (smaller than one draw, a few draws, none), and that it
// holds the data once and packs draws into fewer calls than draws.
func TestResidentMatchesNative(t *testing.T) {
	data, f := benchProblem(60)
	tests := residentTests()
	native, err := explain.NewEngine(f, data, nil, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, err := native.Run(context.Background(), tests)
	if err != nil {
		t.Fatal(err)
	}
	draws := native.Accounting().ModelCalls - 1
	for _, workers := range []int{1, 3} {
		for _, limit := range []int{0, 25, 60, 200} {
			h := &holdModel{inner: f, limit: limit}
			eng, err := explain.NewEngine(f, data, nil, 7, workers)
			if err != nil {
				t.Fatal(err)
			}
			eng.Hold(h)
			got, err := eng.Run(context.Background(), tests)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if fmt.Sprintf("%#v", got[i]) != fmt.Sprintf("%#v", want[i]) {
					t.Errorf("workers %d, limit %d, test %q: resident %+v, native %+v", workers, limit, tests[i].Key, got[i], want[i])
				}
			}
			if h.holds.Load() != 1 {
				t.Errorf("workers %d, limit %d: %d holds, want 1", workers, limit, h.holds.Load())
			}
			calls := h.calls.Load()
			switch {
			case limit == 25 && calls < 3*draws:
				// A draw of 60 instances takes 3 calls of at most 25.
				t.Errorf("limit 25: %d calls for %d draws, want at least 3 per draw", calls, draws)
			case (limit == 0 || limit == 200) && calls >= draws/2:
				t.Errorf("limit %d: %d calls for %d draws, want draws packed", limit, calls, draws)
			}
			// The accounting counts the model's calls, one per block (a
			// draw cut into blocks of at most the limit is several).
			acc := eng.Accounting()
			if acc.ModelCalls != h.blocks.Load()+1 || acc.InstanceEvals != native.Accounting().InstanceEvals {
				t.Errorf("workers %d, limit %d: accounting %+v, want %d calls and %d instance evaluations", workers, limit, acc, h.blocks.Load()+1, native.Accounting().InstanceEvals)
			}
			if (limit == 0 || limit == 200) && acc.ModelCalls != native.Accounting().ModelCalls {
				t.Errorf("limit %d: %d model calls, native %d: one call per draw on both paths", limit, acc.ModelCalls, native.Accounting().ModelCalls)
			}
		}
	}
}

// TestResidentTIME checks that TIME's explanation through the resident
// path equals the native one, model calls included: the draws are packed
// into fewer requests (when the model takes them whole, limit 0), each
// still one call of the model.
func TestResidentTIME(t *testing.T) {
	data, f := benchProblem(80)
	for _, cond := range []bool{false, true} {
		cfg := explain.TIME{Seed: 3, Workers: 2, Conditional: cond}
		want, err := cfg.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{0, 130} {
			h := &holdModel{inner: f, limit: limit}
			got, err := cfg.ExplainHeld(context.Background(), f, h, data)
			if err != nil {
				t.Fatal(err)
			}
			// At limit 130 a request holds one draw of 80 instances.
			packed := h.calls.Load() < want.Accounting.ModelCalls-1
			if h.calls.Load() == 0 || (limit == 0) != packed || got.Accounting.ModelCalls != h.blocks.Load()+1 {
				t.Errorf("conditional %v, limit %d: resident path made %d model calls (%d blocks in %d PredictBlocks), native %d", cond, limit, got.Accounting.ModelCalls, h.blocks.Load(), h.calls.Load(), want.Accounting.ModelCalls)
			}
			got.Accounting.ModelCalls = want.Accounting.ModelCalls
			got.Accounting.Runtime = want.Accounting.Runtime
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(want)
			if !bytes.Equal(a, b) {
				t.Errorf("conditional %v, limit %d: resident explanation differs from the native one:\n%s\n%s", cond, limit, a, b)
			}
		}
	}
}

// failingBlocks is a resident.Model whose PredictBlocks fails.
type failingBlocks struct{ holdModel }

func (f *failingBlocks) PredictBlocks([]float64, *tempora.Tensor, []resident.Block) error {
	return fmt.Errorf("no luck")
}

func (f *failingBlocks) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	return resident.FillScratch(dst, x, blocks, scratch, fill, f.PredictBlocks)
}

// failingHold is a resident.Model that cannot hold the data.
type failingHold struct{ holdModel }

func (f *failingHold) Hold(*tempora.Tensor) error { return fmt.Errorf("out of memory") }

// TestResidentErrors checks that a failing capability is the model's
// failure, and that an Engine given none, or given one after its first
// Run, takes the native path.
func TestResidentErrors(t *testing.T) {
	data, f := benchProblem(30)
	tests := residentTests()[:4]
	for _, tc := range []struct {
		name string
		held resident.Model
		want string
	}{{"failing PredictBlocks", &failingBlocks{holdModel{inner: f}}, "no luck"}, {"failing Hold", &failingHold{holdModel{inner: f}}, "explain: model: out of memory"}} {
		eng, err := explain.NewEngine(f, data, nil, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		eng.Hold(tc.held)
		if _, err := eng.Run(context.Background(), tests); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	eng, err := explain.NewEngine(f, data, nil, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := eng.Run(context.Background(), tests)
	if err != nil {
		t.Fatal(err)
	}
	h := &holdModel{inner: f}
	eng.Hold(h) // too late: the native path was taken
	got, err := eng.Run(context.Background(), tests)
	if err != nil {
		t.Fatal(err)
	}
	if h.calls.Load() != 0 || h.holds.Load() != 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Hold after Run: %d holds, %d calls; results %v, want %v", h.holds.Load(), h.calls.Load(), got, want)
	}
}

// fillModel is a holdModel with memory of its own: fill writes the values
// there (as into a connection's shared buffer), never into the caller's
// scratch.
type fillModel struct {
	holdModel
	fills atomic.Int64
}

func (f *fillModel) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	f.fills.Add(1)
	filled, vals := resident.Filled(blocks, nil) // fresh memory, not scratch
	if len(scratch) > 0 && len(vals) > 0 && &scratch[0] == &vals[0] {
		return fmt.Errorf("fillModel: got the caller's scratch")
	}
	if err := fill(vals); err != nil {
		return err
	}
	return f.PredictBlocks(dst, x, filled)
}

// TestResidentFilled checks that TIME's explanation through a model with
// memory of its own (the draws gathered straight into the model's memory)
// equals the native one, and that packs too large for one call take the
// PredictBlocks path.
func TestResidentFilled(t *testing.T) {
	data, f := benchProblem(80)
	cfg := explain.TIME{Seed: 3, Workers: 2}
	want, err := cfg.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 130, 50} {
		h := &fillModel{holdModel: holdModel{inner: f, limit: limit}}
		got, err := cfg.ExplainHeld(context.Background(), f, h, data)
		if err != nil {
			t.Fatal(err)
		}
		if fills := h.fills.Load(); (limit == 50) != (fills == 0) {
			t.Errorf("limit %d: %d filled calls; want them exactly when a draw's %d rows fit the limit", limit, fills, data.X.M)
		}
		got.Accounting.ModelCalls = want.Accounting.ModelCalls
		got.Accounting.Runtime = want.Accounting.Runtime
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if !bytes.Equal(a, b) {
			t.Errorf("limit %d: explanation through the model's memory differs from the native one:\n%s\n%s", limit, a, b)
		}
	}
}
