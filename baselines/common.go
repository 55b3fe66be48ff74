package baselines

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tempora-dev/tempora"
)

// zeroCell is the magnitude below which a cell score counts as zero when a
// feature's summary score is computed (decision 14 of the project).
const zeroCell = 1e-10

// workerCount returns the number of goroutines to use: w if positive,
// otherwise GOMAXPROCS.
func workerCount(w int) int {
	if w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

// checkWorkers returns an error for a negative worker count.
func checkWorkers(method string, w int) error {
	if w < 0 {
		return fmt.Errorf("baselines: %s Workers is %d, want 0 (GOMAXPROCS) or more", method, w)
	}
	return nil
}

// countingModel wraps a model, counts its calls and instance evaluations,
// and checks every batch of predictions with tempora.CheckPredictions so a
// broken model is reported rather than explained. It is safe for
// concurrent use if the wrapped model is.
type countingModel struct {
	m     tempora.Model
	task  tempora.Task
	calls atomic.Int64
	evals atomic.Int64
}

func (c *countingModel) Predict(dst []float64, x *tempora.Tensor) error {
	c.calls.Add(1)
	c.evals.Add(int64(x.M))
	if err := c.m.Predict(dst, x); err != nil {
		return fmt.Errorf("baselines: model: %w", err)
	}
	if err := tempora.CheckPredictions(c.task, dst); err != nil {
		return fmt.Errorf("baselines: %w", err)
	}
	return nil
}

// account fills the model-call fields of a.
func (c *countingModel) account(a *tempora.Accounting) {
	a.ModelCalls = c.calls.Load()
	a.InstanceEvals = c.evals.Load()
}

// summarise sets Features[j].Score to the mean |cell| over feature j's
// non-zero cells (|cell| > 1e-10), or 0 when every cell is zero, and marks
// every feature as tested.
func summarise(e *tempora.Explanation) {
	for j := range e.Features {
		var sum float64
		var n int
		for _, v := range e.Cells[j*e.L : (j+1)*e.L] {
			if a := math.Abs(v); a > zeroCell {
				sum += a
				n++
			}
		}
		f := &e.Features[j]
		f.Tested = true
		if n > 0 {
			f.Score = sum / float64(n)
		}
	}
}

// parallel runs work(w, k) for k = 0..n-1 on the given number of
// goroutines (w is the goroutine's index, for per-worker buffers). Items are
// handed out in increasing order; after the first error, or after ctx is
// cancelled, no new item starts. It returns the error of the lowest-numbered
// failed item, or ctx.Err(), so the reported error does not depend on
// scheduling when items fail deterministically. A cancelled context's error
// is wrapped, so errors.Is(err, context.Canceled) still holds.
func parallel(ctx context.Context, workers, n int, work func(w, k int) error) error {
	workers = min(workers, n)
	var (
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		errK   = n
		first  error
		wg     sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= n || failed.Load() {
					return
				}
				if ctx.Err() != nil {
					failed.Store(true)
					return
				}
				if err := work(w, k); err != nil {
					mu.Lock()
					if k < errK {
						errK, first = k, err
					}
					mu.Unlock()
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("baselines: %w", err)
	}
	return nil
}
