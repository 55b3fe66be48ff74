package method

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/pool"
	"github.com/tempora-dev/tempora/resident"
)

// Mode is how the benchmark turns a score matrix into a selection of
// features and cells (docs/decisions.md, decision 14).
type Mode int

const (
	// TopN selects the n highest scores with n = min(#true items,
	// #non-zero items); ties go to the higher score, then the lower index.
	// It is the mode of TIME-n and of every baseline.
	TopN Mode = iota
	// AllNonZero selects every item with a non-zero score. It is TIME's
	// mode.
	AllNonZero
)

// String returns "top-n" or "all-non-zero".
func (m Mode) String() string {
	switch m {
	case TopN:
		return "top-n"
	case AllNonZero:
		return "all-non-zero"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "top-n" or "all-non-zero".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "top-n":
		return TopN, nil
	case "all-non-zero":
		return AllNonZero, nil
	}
	return 0, fmt.Errorf("method: unknown mode %q (want top-n or all-non-zero)", s)
}

// NearZero is the magnitude below which a cell score counts as zero
// (docs/decisions.md, decision 14).
const NearZero = 1e-10

// FeatureScore returns the score of a feature with the given cell scores:
// the mean |score| over the cells with |score| ≥ NearZero, 0 when there are
// none. NaN scores count as zero.
func FeatureScore(cells []float64) float64 {
	var sum float64
	var n int
	for _, v := range cells {
		if a := math.Abs(v); a >= NearZero {
			sum += a
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// FeatureScores sets the Score of every feature of e to FeatureScore of
// its row of cells (e.Cells[j·L : (j+1)·L]) and marks it Tested: the
// feature scores of every baseline, and what the benchmark computes from
// any method's cells.
func FeatureScores(e *tempora.Explanation) {
	for j := range e.Features {
		f := &e.Features[j]
		f.Score = FeatureScore(e.Cells[j*e.L : (j+1)*e.L])
		f.Tested = true
	}
}

// Workers returns w if it is positive, otherwise GOMAXPROCS: the number of
// goroutines a Config.Workers of w asks for. It is pool.Workers, the
// project's one worker pool's rule, for methods outside the module.
func Workers(w int) int { return pool.Workers(w) }

// Parallel runs work(w, k) for k = 0, …, n−1 on the given number of
// goroutines (at most n; w is the goroutine's index in [0, workers), for
// per-worker buffers). Items are handed out in increasing order; after the
// first error, or once ctx is cancelled, no new item starts. It returns the
// error of the lowest-numbered failed item, so that the reported error does
// not depend on scheduling when items fail deterministically, or else, if
// ctx is cancelled, ctx.Err() wrapped (errors.Is(err, context.Canceled)
// holds). It is the project's one worker pool (internal/pool) for methods
// outside the module.
func Parallel(ctx context.Context, workers, n int, work func(w, k int) error) error {
	var failed atomic.Bool
	err := pool.Run(ctx, workers, n, func(w, k int) error {
		err := work(w, k)
		if err != nil {
			failed.Store(true)
		}
		return err
	})
	if failed.Load() {
		return err // an item's own error, unwrapped
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("method: %w", err)
	}
	return nil
}

// Meter is a tempora.Model that passes every call to Model, counting calls
// and instances predicted, and checks the predictions with
// tempora.CheckOutputs for Task and Outputs (nil: one output per
// instance), so that a broken model is reported rather than explained;
// Held does the same for the model's held data capability, counting into
// the same totals. It is safe for concurrent use if Model is.
type Meter struct {
	Model   tempora.Model
	Task    tempora.Task
	Outputs *tempora.Outputs
	calls   atomic.Int64
	evals   atomic.Int64
}

// Predict implements tempora.Model. Model's errors are returned unchanged.
func (m *Meter) Predict(dst []float64, x *tempora.Tensor) error {
	m.calls.Add(1)
	m.evals.Add(int64(x.M))
	if err := m.Model.Predict(dst, x); err != nil {
		return err
	}
	return tempora.CheckOutputs(m.Task, m.Outputs, dst)
}

// Held returns h, the held data capability of Model, metered: its block
// calls (PredictBlocks, PredictBlocksFilled) are counted as model calls
// of their rows and their predictions checked, as Predict's are. It
// returns nil for a nil h.
func (m *Meter) Held(h resident.Model) resident.Model {
	if h == nil {
		return nil
	}
	return &meteredHeld{meter: m, held: h}
}

// meteredHeld is a held data capability behind a Meter.
type meteredHeld struct {
	meter *Meter
	held  resident.Model
}

func (h *meteredHeld) Hold(x *tempora.Tensor) error { return h.held.Hold(x) }
func (h *meteredHeld) BatchLimit() int              { return h.held.BatchLimit() }

func (h *meteredHeld) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	return h.count(dst, blocks, h.held.PredictBlocks(dst, x, blocks))
}

func (h *meteredHeld) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	return h.count(dst, blocks, h.held.PredictBlocksFilled(dst, x, blocks, scratch, fill))
}

// count counts a block call of len(dst)/K rows in its blocks that returned
// err, as one model call per block (the model predicts each block by
// itself, resident.Model), and checks each block's predictions, as
// Predict does, naming the held data's instance (resident.CheckBlocks).
func (h *meteredHeld) count(dst []float64, blocks []resident.Block, err error) error {
	h.meter.calls.Add(int64(len(blocks)))
	h.meter.evals.Add(int64(len(dst) / h.meter.Outputs.Len()))
	if err != nil {
		return err
	}
	return resident.CheckBlocks(h.meter.Task, h.meter.Outputs, dst, blocks)
}

// Calls returns the number of Predict calls so far.
func (m *Meter) Calls() int64 { return m.calls.Load() }

// Evals returns the number of instances predicted so far, summed over
// calls.
func (m *Meter) Evals() int64 { return m.evals.Load() }

// Measure is MeasureHeld without a held data capability.
func Measure(ctx context.Context, ex tempora.Explainer, model tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	return MeasureHeld(ctx, ex, model, nil, data)
}

// MeasureHeld runs ex on model and data with the model behind a Meter, checks
// the explanation with CheckExplanation, and returns it with its
// Accounting's ModelCalls, InstanceEvals and Runtime set to what the Meter
// and the wall clock measured, whatever the explainer reported (its
// WindowProbes and Incomplete are kept), and its Alignment and Data set to
// the data's alignment and summary (tempora.Observation.Summary: nil for
// complete data). This is how the command line and the benchmark run every
// explainer, so an explainer need not count for itself nor describe the
// data: these facts have this one owner, the same for every method (PERM,
// whose explanation is built from its per-cell results without the data,
// used to report every dataset as start-aligned).
//
// held is model's held data capability, or nil: when it is not nil and ex
// can use it (a resident.Explainer: TIME, PERM), ex runs with it, metered
// too (Meter.Held); the explanation is the same, only its model calls
// differ. Any other explainer runs on model alone.
func MeasureHeld(ctx context.Context, ex tempora.Explainer, model tempora.Model, held resident.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	return measure(data, model, func(meter *Meter) (*tempora.Explanation, error) {
		if hx, ok := ex.(resident.Explainer); ok && held != nil {
			return hx.ExplainHeld(ctx, meter, meter.Held(held), data)
		}
		return ex.Explain(ctx, meter, data)
	})
}

// measure runs run with model behind a Meter and does the rest of
// MeasureHeld's work on its explanation: the check, the accounting and
// the data's alignment and summary.
func measure(data *tempora.Dataset, model tempora.Model, run func(meter *Meter) (*tempora.Explanation, error)) (*tempora.Explanation, error) {
	if data == nil || data.X == nil {
		return nil, fmt.Errorf("method: no data to explain")
	}
	meter := &Meter{Model: model, Task: data.Task, Outputs: data.Outputs}
	start := time.Now()
	e, err := run(meter)
	elapsed := time.Since(start)
	if err != nil {
		return nil, err
	}
	if err := CheckExplanation(e, data); err != nil {
		return nil, err
	}
	e.Accounting.ModelCalls = meter.Calls()
	e.Accounting.InstanceEvals = meter.Evals()
	e.Accounting.Runtime = elapsed
	// Observing the data is one pass over it, next to the explainer's
	// model calls on all of it; data the explainer took but Observe does
	// not (an outside method's) gets no summary rather than an error.
	e.Alignment, e.Data = data.Alignment, nil
	if obs, err := data.Observe(1); err == nil {
		e.Data = obs.Summary()
	}
	return e, nil
}

// CheckExplanation returns an error unless e explains data's D features ×
// L timesteps: D·L finite cell scores, and one feature result per feature
// in index order with the data's feature name and a finite score.
func CheckExplanation(e *tempora.Explanation, data *tempora.Dataset) error {
	if e == nil {
		return fmt.Errorf("method: the explainer returned no explanation and no error")
	}
	d, l := data.X.D, data.X.L
	name := e.Method
	if name == "" {
		name = "explanation"
	}
	if e.D != d || e.L != l || len(e.Cells) != d*l {
		return fmt.Errorf("method: %s is %d × %d with %d cells, want %d features × %d timesteps", name, e.D, e.L, len(e.Cells), d, l)
	}
	for k, v := range e.Cells {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("method: %s: cell (%d, %d) is %v", name, k/l, k%l, v)
		}
	}
	if len(e.Features) != d {
		return fmt.Errorf("method: %s has %d feature results for %d features (tempora.NewExplanation makes them; FeatureScores fills their scores)", name, len(e.Features), d)
	}
	for j, f := range e.Features {
		if f.Index != j || f.Name != data.Name(j) {
			return fmt.Errorf("method: %s: feature result %d is feature %d (%q), want %q", name, j, f.Index, f.Name, data.Name(j))
		}
		if math.IsNaN(f.Score) || math.IsInf(f.Score, 0) {
			return fmt.Errorf("method: %s: feature %s has score %v", name, f.Name, f.Score)
		}
	}
	return nil
}
