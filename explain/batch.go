package explain

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// Batch sizes. The most instances of one model call follow one rule: the
// memory budget's chunk on the native path (memoryRows, memlimit.ChunkRows)
// or the model's request limit on the resident path (packRows), each at
// most the batch size (SetBatch) when one is set. A draw of more instances
// than that is predicted in several calls (chunks, or blocks of the
// resident path); the predictions are per instance, so the results are
// the same for any batch size and only the accounting's model calls
// differ.
//
// TuneBatch chooses the size: a model's cost per instance can depend on
// the batch (a recurrent network on a CPU is cheaper per instance in
// batches of a few hundred than of thousands), so it times one pass over
// the data at each of a few sizes, the largest first, and keeps the
// cheapest per instance. A model whose pass takes less than minTunedPass
// is timed at the largest size only, and keeps it.

// BatchAuto is TIME's Batch that chooses the batch size by timing the
// model (Engine.TuneBatch).
const BatchAuto = -1

// Tuning's sizes: from the largest a call takes (a draw's M instances, or
// the memory rule's chunk), halving down to at least minTunedBatch
// instances, at most tunedSizes sizes.
const (
	minTunedBatch = 32
	tunedSizes    = 5
)

// tuneGain is how much cheaper per instance a smaller batch must be than
// the best larger one to be chosen: timings of one pass vary by a few
// percent, and a smaller batch makes more calls (more overhead outside
// the model), so a difference within this margin keeps the larger.
const tuneGain = 0.9

// minTunedPass is the shortest pass over the data that tuning compares:
// a cheaper model's timings are within the timer's and the scheduler's
// noise, and its batch size hardly matters, so the first pass ends the
// tuning and the calls keep their default size.
const minTunedPass = 5 * time.Millisecond

// capRows returns rows, at most batch when batch is positive.
func capRows(rows, batch int) int {
	if batch > 0 && batch < rows {
		return batch
	}
	return rows
}

// SetBatch sets the most instances per model call (0: no batch size, the
// memory rule and the model's limit alone; see Batch sizes above). It
// must be called before Run.
func (e *Engine) SetBatch(rows int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.batchRows = max(0, rows)
}

// BatchSize returns the most instances of one model call of a draw: the
// data's M, or fewer by the batch size, the memory rule or the model's
// limit.
func (e *Engine) BatchSize() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.batchSize()
}

func (e *Engine) batchSize() int {
	m := e.data.X.M
	if e.res.decided && e.res.model != nil {
		return min(m, e.blockRows())
	}
	return min(m, e.chunkRows())
}

// predictRows predicts x into dst in calls of at most rows instances.
func (e *Engine) predictRows(dst []float64, x *tempora.Tensor, rows int) error {
	if rows >= x.M {
		return e.predict(dst, x, 0) // no chunk to allocate
	}
	n, k := x.D*x.L, e.data.K()
	for i0 := 0; i0 < x.M; i0 += rows {
		i1 := min(i0+rows, x.M)
		chunk := &tempora.Tensor{M: i1 - i0, D: x.D, L: x.L, Data: x.Data[i0*n : i1*n]}
		if err := e.predict(dst[i0*k:i1*k], chunk, i0); err != nil {
			return err
		}
	}
	return nil
}

// TuneBatch times the model at a few batch sizes (see Batch sizes above),
// each on one pass over the data, sets the cheapest per instance
// (SetBatch) and returns the choice with the measured costs. The passes
// are model calls of the run's accounting and count against its budget.
// A model whose predictions at some size differ from the baseline's (a
// model that does not predict each instance on its own) keeps no batch
// size, with an error that says so; so does a model that fails.
// The chosen size's predictions become the baseline's, so that the run
// equals one with that size given (SetBatch before the baseline). It
// decides the resident path (Hold) first, as the first Run would.
func (e *Engine) TuneBatch(ctx context.Context) (*tempora.Batch, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.resident(); err != nil {
		return nil, err
	}
	e.batchRows = 0
	top := e.batchSize()
	b := &tempora.Batch{Auto: true}
	best := 0
	var preds [][]float64
	for size, k := top, 0; k < tunedSizes && (k == 0 || size >= minTunedBatch); size, k = (size+1)/2, k+1 {
		if k > 0 && size == b.Costs[k-1].Size {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("explain: %w", err)
		}
		cost, pred, err := e.timeBatch(size)
		if err != nil {
			return nil, err
		}
		b.Costs = append(b.Costs, tempora.BatchCost{Size: size, SecondsPerInstance: cost})
		preds = append(preds, pred)
		if cost < tuneGain*b.Costs[best].SecondsPerInstance {
			best = k
		}
		if k == 0 && cost*float64(e.data.X.M) < minTunedPass.Seconds() {
			break
		}
	}
	if best > 0 {
		e.batchRows = b.Costs[best].Size
		if err := e.rebase(preds[best]); err != nil {
			return nil, err
		}
	}
	b.Size = e.batchSize()
	return b, nil
}

// batchTolerance is how closely the predictions of the data at two batch
// sizes must agree, relative to their size (at least 1): a model that
// predicts each instance on its own may still round differently at
// another batch, since its matrix products are blocked by the batch. A
// float32 network rounds at about 6e−8 per operation, and PyTorch's LSTM
// of issue 34 (12 → 32 hidden units over 48 steps) differs by 2.5e−7 of a
// prediction between calls of 1000 and 2000 instances; a model whose
// predictions really depend on the batch (batch normalisation or dropout
// left in training mode, a statistic over the batch) moves them by orders
// of magnitude more. The chosen size's predictions become the baseline
// (rebase) and a draw's calls cut the data at the same instances, so an
// instance a draw leaves unchanged gets the baseline's prediction bit for
// bit, and the run equals one with that batch size given
// (TestBatchAutoKeepsTies).
const batchTolerance = 1e-5

// timeBatch predicts the data in calls of size instances (blocks of the
// data's own values on the resident path, as a draw's), checks that the
// predictions are the baseline's within batchTolerance and returns the
// wall time per instance and the predictions.
func (e *Engine) timeBatch(size int) (float64, []float64, error) {
	x := e.data.X
	pred := make([]float64, len(e.basePred))
	began := time.Now()
	var err error
	if e.res.model != nil {
		err = e.predictHeldRows(pred, size)
	} else {
		err = e.predictRows(pred, x, size)
	}
	took := time.Since(began)
	if err != nil {
		return 0, nil, err
	}
	k := e.data.K()
	for i, p := range pred {
		if b := e.basePred[i]; !(math.Abs(p-b) <= batchTolerance*max(1, math.Abs(p), math.Abs(b))) {
			return 0, nil, &batchDependence{fmt.Sprintf("the model predicted %v for instance %d in a call of %d instances and %v in a call of %d: its predictions depend on the batch, so the batch size cannot be chosen", p, i/k, size, b, x.M)}
		}
	}
	return took.Seconds() / float64(x.M), pred, nil
}

// rebase makes pred, the data's predictions at the chosen batch size, the
// baseline's.
func (e *Engine) rebase(pred []float64) error {
	ws := e.newWorkspace(false)
	copy(ws.pred, pred)
	mean, err := e.evaluate(ws, nil)
	if err != nil {
		return fmt.Errorf("%w (baseline)", err)
	}
	e.baseMean, e.base, e.basePred = mean, slices.Clone(ws.stats), pred
	return nil
}

// batchDependence is TuneBatch's error for a model whose predictions
// depend on the batch.
type batchDependence struct{ msg string }

func (e *batchDependence) Error() string { return "explain: batch: " + e.msg }

// predictHeldRows predicts the held data in blocks of size instances that
// apply the data's own values of feature 0 at timestep 0, in requests of
// at most packRows instances.
func (e *Engine) predictHeldRows(pred []float64, size int) error {
	x := e.data.X
	vals := make([]float64, x.M)
	for i := range vals {
		vals[i] = x.Data[i*x.D*x.L]
	}
	var blocks []resident.Block
	for lo := 0; lo < x.M; lo += size {
		hi := min(lo+size, x.M)
		blocks = append(blocks, resident.Block{Lo: lo, Hi: hi, Features: []int{0}, Values: vals[lo:hi]})
	}
	fail := func(err error) error { return fmt.Errorf("%w (batch)", e.modelError(err)) }
	return e.predictSplit(pred, blocks, vals, func([]float64) error { return nil }, fail, e.packRows())
}
