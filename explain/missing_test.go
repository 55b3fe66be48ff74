package explain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/resident"
)

// packedMean is the model of issue 18's measured bug: like a packed RNN it
// finds each sequence's end at the first NaN of feature 0, and it predicts
// 2·m₀ − m₁, m_j the mean of feature j's observed values before that end
// (0 when there are none). It is blind to the order of the values within
// every sequence.
func packedMean(dst []float64, x *tempora.Tensor) error {
	for i := range dst {
		s0 := x.Series(i, 0)
		n := 0
		for n < len(s0) && s0[n] == s0[n] {
			n++
		}
		var m [2]float64
		for j := range m {
			k := 0
			for _, v := range x.Series(i, j)[:n] {
				if v == v {
					m[j] += v
					k++
				}
			}
			m[j] /= float64(max(k, 1))
		}
		dst[i] = 2*m[0] - m[1]
	}
	return nil
}

// TestTIMEPackedOrdering checks that an order-blind model of sequences of
// different lengths gets no ordering claim: on 10 seeds of 300 sequences
// of lengths 10–20 (start-aligned, NaN padding), TIME finds features 0 and
// 1 important and claims neither the whole-sequence ordering nor any
// window's ordering. Ordering tests permute each series' observed values
// among its observed positions (tempora.PermuteTimestepsObserved), so the
// model's predictions never change and every ordering p-value is 1; the
// dense permutation moved padding into the sequences and claimed the
// ordering in 10 of 10 seeds (issue 18). The windows lie in the features'
// spans.
func TestTIMEPackedOrdering(t *testing.T) {
	const m, d, l = 300, 3, 20
	claims := 0
	for seed := uint64(1); seed <= 10; seed++ {
		x := explain.IrregularData(m, d, l, 0, tempora.AlignStart, seed)
		data := regressionData(t, x, tempora.ModelFunc(packedMean), 0.3, seed)
		obs, err := data.Observe(2)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := explain.TIME{Seed: seed}.Explain(context.Background(), tempora.ModelFunc(packedMean), data)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, ex, explain.DefaultAlpha)
		for j, f := range ex.Features[:2] {
			if !f.Important {
				t.Errorf("seed %d: feature %d not found important (p = %.3g)", seed, j, f.PValue)
			}
			if f.OrderingImportant || f.OrderingPValue != 1 {
				claims++
				t.Errorf("seed %d: feature %d: whole-sequence ordering p = %.3g, important %v; want p = 1", seed, j, f.OrderingPValue, f.OrderingImportant)
			}
			for _, w := range f.Windows {
				if w.OrderingImportant {
					claims++
					t.Errorf("seed %d: feature %d: window %v ordering claimed (p = %.3g)", seed, j, w.Window, w.OrderingPValue)
				}
				if sp := obs.Span[j]; w.Window.Start < sp.Start || w.Window.End > sp.End {
					t.Errorf("seed %d: feature %d: window %v outside the span %v", seed, j, w.Window, sp)
				}
			}
		}
	}
	t.Logf("%d ordering claims in 10 seeds", claims)
}

// TestTIMEMissingModelErrors checks the messages of a model that cannot
// take NaN: they name the instance it fails on and say that tempora passes
// missing values as NaN and never imputes.
func TestTIMEMissingModelErrors(t *testing.T) {
	const m, d, l = 30, 2, 6
	x := explain.IrregularData(m, d, l, 0.2, tempora.AlignStart, 7)
	first := -1 // the first instance with a NaN
	for i := 0; i < m && first < 0; i++ {
		for _, v := range x.Data[i*d*l : (i+1)*d*l] {
			if math.IsNaN(v) {
				first = i
				break
			}
		}
	}
	y := make([]float64, m)
	data := &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}
	refuses := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for _, v := range x.Data {
			if math.IsNaN(v) {
				return errors.New("input contains NaN")
			}
		}
		return nil
	})
	naive := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			dst[i] = 0
			for _, v := range x.Data[i*d*l : (i+1)*d*l] {
				dst[i] += v // NaN propagates
			}
		}
		return nil
	})
	// A model that holds the data (a model process) and fails on the
	// blocks of the draws, after predicting the data itself.
	zeros := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		clear(dst)
		return nil
	})
	blocks := &failingBlocks{holdModel{inner: zeros}}
	for _, tc := range []struct {
		name  string
		model tempora.Model
		held  resident.Model
		want  []string
	}{
		{"error", refuses, nil, []string{"input contains NaN", "instance " + strconv.Itoa(first) + ", which has missing values, fails", "never imputes"}},
		{"blocks", zeros, blocks, []string{"no luck", "never imputes"}},
		{"NaN", naive, nil, []string{"predicted NaN for instance " + strconv.Itoa(first), "instance " + strconv.Itoa(first) + ", which has missing values, is predicted NaN", "never imputes"}},
	} {
		_, err := explain.TIME{}.ExplainHeld(context.Background(), tc.model, tc.held, data)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want one containing %q", tc.name, err, w)
			}
		}
	}
}

// TestWindowsInSpan checks the window search on a feature observed only in
// its first 10 timesteps of 20 (feature 1; feature 0 is complete): a test
// of a block with no observed value makes no draw and no model call (score
// 0, p-value 1), and TIME's windows of the feature lie in its span.
func TestWindowsInSpan(t *testing.T) {
	const m, d, l = 200, 2, 20
	x := gaussianData(m, d, l, 3)
	for i := range m {
		for t := 10; t < l; t++ {
			x.Set(i, 1, t, math.NaN())
		}
	}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			var v float64
			for _, s := range x.Window(i, 1, 2, 6) {
				v += s
			}
			dst[i] = v + 0.5*x.At(i, 0, 15)
		}
		return nil
	})
	data := regressionData(t, x, model, 0.5, 3)
	eng, err := explain.NewEngine(model, data, nil, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	before := eng.Accounting().ModelCalls
	res, err := eng.Run(context.Background(), []explain.Test{
		{Features: []int{1}, Window: tempora.Window{Start: 10, End: 19}, Permutations: 20, Key: "padding"},
		{Features: []int{1}, Window: tempora.Window{Start: 12, End: 15}, Permutations: 20, Key: "probe", Stop: explain.Probe{Threshold: 0.1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Draws != 0 || r.Score != 0 || r.PValue != 1 {
		t.Errorf("test of padding: %+v, want no draw, score 0, p-value 1", r)
	}
	if r := res[1]; r.Draws != 0 || r.Score != 0 || r.SE != 0 {
		t.Errorf("probe of padding: %+v, want no draw, score 0", r)
	}
	if calls := eng.Accounting().ModelCalls - before; calls != 0 {
		t.Errorf("%d model calls for tests of padding, want 0", calls)
	}
	ex, err := explain.TIME{Seed: 3}.Explain(context.Background(), model, data)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, ex, explain.DefaultAlpha)
	f := ex.Features[1]
	if !f.Important || len(f.Windows) == 0 {
		t.Fatalf("feature 1: important %v, windows %v", f.Important, f.Windows)
	}
	for _, w := range f.Windows {
		if w.Window.End > 9 || w.EndRange.End > 9 {
			t.Errorf("feature 1: window %v (end range %v) reaches past its span [0, 9]", w.Window, w.EndRange)
		}
	}
	t.Logf("feature 1: windows %v", f.Windows)
}

// TestResidentMissing checks that on data with missing values TIME's
// explanation through the resident path (a model holding the data)
// equals the native one under every length rule, apart from the model
// calls counted: the blocks it sends are those of the masked draws.
func TestResidentMissing(t *testing.T) {
	x := explain.IrregularData(120, 4, 10, 0.3, tempora.AlignStart, 5)
	f := observedModel("mean", []float64{1.5, -1, 0, 0}, 1)
	data := regressionData(t, x, f, 0.3, 5)
	for _, rule := range []explain.LengthRule{explain.Strata{}, explain.Receiver{}, explain.Donor{}} {
		cfg := explain.TIME{Seed: 5, Workers: 2, LengthRule: rule}
		want, err := cfg.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		h := &holdModel{inner: f}
		got, err := cfg.ExplainHeld(context.Background(), f, h, data)
		if err != nil {
			t.Fatal(err)
		}
		// The draws are packed into fewer requests; each draw is still
		// one call of the model.
		if h.calls.Load() == 0 || h.calls.Load() >= want.Accounting.ModelCalls || got.Accounting.ModelCalls != want.Accounting.ModelCalls {
			t.Errorf("%v: resident path made %d model calls in %d PredictBlocks requests, native %d; want the same calls, packed", rule, got.Accounting.ModelCalls, h.calls.Load(), want.Accounting.ModelCalls)
		}
		got.Accounting.ModelCalls = want.Accounting.ModelCalls
		got.Accounting.Runtime = want.Accounting.Runtime
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if !bytes.Equal(a, b) {
			t.Errorf("%v: resident explanation differs from the native one:\n%s\n%s", rule, a, b)
		}
	}
}
