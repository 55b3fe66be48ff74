package method_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/resident"
)

// heldCells is countCells that also predicts one block of all rows per
// feature through the held data capability it is given, when it has one.
type heldCells struct{ countCells }

func (c heldCells) ExplainHeld(ctx context.Context, m tempora.Model, held resident.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	if held == nil {
		return c.Explain(ctx, m, data)
	}
	if err := held.Hold(data.X); err != nil {
		return nil, err
	}
	x := data.X
	for j := range x.D {
		b := []resident.Block{{Lo: 0, Hi: x.M, Features: []int{j}, Start: 0, End: 0, Values: make([]float64, x.M)}}
		if err := held.PredictBlocks(make([]float64, x.M), x, b); err != nil {
			return nil, err
		}
	}
	// One filled call of two rows.
	b := []resident.Block{{Lo: 0, Hi: 2, Features: []int{0}, Start: 0, End: 0}}
	if err := held.PredictBlocksFilled(make([]float64, 2), x, b, nil, func([]float64) error { return nil }); err != nil {
		return nil, err
	}
	return c.Explain(ctx, m, data)
}

// fakeHeld is a held data capability predicting value for every row.
type fakeHeld struct {
	value float64
	holds int
}

func (f *fakeHeld) Hold(*tempora.Tensor) error { f.holds++; return nil }
func (f *fakeHeld) BatchLimit() int            { return 0 }
func (f *fakeHeld) PredictBlocks(dst []float64, _ *tempora.Tensor, _ []resident.Block) error {
	for i := range dst {
		dst[i] = f.value
	}
	return nil
}
func (f *fakeHeld) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	return resident.FillScratch(dst, x, blocks, scratch, fill, f.PredictBlocks)
}

// TestMeasureHeld checks that MeasureHeld passes the held data capability
// to an explainer that can use it, metered: its block calls count as model
// calls of their rows beside the plain ones, and their predictions are
// checked; an explainer that cannot use it runs on the model alone, and
// Measure passes none.
func TestMeasureHeld(t *testing.T) {
	data, model := testData() // 4 × 3 × 2
	h := &fakeHeld{}
	e, err := method.MeasureHeld(context.Background(), heldCells{countCells{"cc"}}, model, h, data)
	if err != nil {
		t.Fatal(err)
	}
	// 3 plain calls of 4 rows, 3 block calls of 4 rows, 1 filled call of 2.
	if e.Accounting.ModelCalls != 7 || e.Accounting.InstanceEvals != 26 || h.holds != 1 {
		t.Errorf("accounting %+v, %d holds; want 7 calls, 26 instance evaluations, 1 hold", e.Accounting, h.holds)
	}
	for name, run := range map[string]func() (*tempora.Explanation, error){
		"Measure": func() (*tempora.Explanation, error) {
			return method.Measure(context.Background(), heldCells{countCells{"cc"}}, model, data)
		},
		"an explainer without ExplainHeld": func() (*tempora.Explanation, error) {
			return method.MeasureHeld(context.Background(), countCells{"cc"}, model, h, data)
		},
	} {
		h.holds = 0
		e, err := run()
		if err != nil {
			t.Fatal(err)
		}
		if e.Accounting.ModelCalls != 3 || e.Accounting.InstanceEvals != 12 || h.holds != 0 {
			t.Errorf("%s: accounting %+v, %d holds; want the plain path's 3 calls, 12 evaluations", name, e.Accounting, h.holds)
		}
	}
	h.value = math.NaN()
	if _, err := method.MeasureHeld(context.Background(), heldCells{countCells{"cc"}}, model, h, data); err == nil || !strings.Contains(err.Error(), "predicted NaN") {
		t.Errorf("NaN through the held path: error %v", err)
	}
	if (&method.Meter{}).Held(nil) != nil {
		t.Error("Meter.Held(nil) is not nil")
	}
}

// nanHeld predicts 0 for every row except row 7 of block 3, NaN.
type nanHeld struct{ fakeHeld }

func (f *nanHeld) PredictBlocks(dst []float64, _ *tempora.Tensor, blocks []resident.Block) error {
	at := 0
	for n := range blocks {
		for r := range blocks[n].Rows() {
			dst[at+r] = 0
			if n == 3 && r == 7 {
				dst[at+r] = math.NaN()
			}
		}
		at += blocks[n].Rows()
	}
	return nil
}

// TestHeldPredictionErrorNamesTheInstance: a NaN predicted for row 7 of
// the fourth block of a call of four blocks of 200 rows is reported at the
// data's instance 7 and at block 3, not at row 607 of the call (issue 33).
func TestHeldPredictionErrorNamesTheInstance(t *testing.T) {
	x := tempora.NewTensor(200, 2, 3)
	meter := &method.Meter{Model: tempora.ModelFunc(func([]float64, *tempora.Tensor) error { return nil }), Task: tempora.Regression}
	var blocks []resident.Block
	for range 4 {
		blocks = append(blocks, resident.Block{Lo: 0, Hi: 200, Features: []int{0}, Start: 0, End: 0, Values: make([]float64, 200)})
	}
	err := meter.Held(&nanHeld{}).PredictBlocks(make([]float64, 800), x, blocks)
	if err == nil || !strings.Contains(err.Error(), "predicted NaN for instance 7") {
		t.Fatalf("error %v, want one at instance 7", err)
	}
	var be *resident.BlockError
	var de *tempora.DataError
	if !errors.As(err, &be) || be.Block != 3 || !errors.As(err, &de) || de.Instance != 7 || de.Row != 7 {
		t.Errorf("error %#v: want block 3, instance 7, row 7", err)
	}
}
