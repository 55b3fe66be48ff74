// Package pool is tempora's one worker pool: it runs n independent items on
// a bounded number of goroutines, handing items out in increasing order, and
// reports the error of the lowest-numbered failed item, so that the error a
// caller sees does not depend on scheduling when items fail
// deterministically.
package pool

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers returns w if it is positive, otherwise GOMAXPROCS: the number of
// goroutines a requested worker count of w means.
func Workers(w int) int {
	if w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

// Run calls work(w, k) for k = 0, …, n−1 on min(Workers(workers), n)
// goroutines; w is the goroutine's index in [0, workers), for per-worker
// buffers. Items start in increasing order of k. After an error, no item
// numbered above the lowest failed one starts (every lower item still runs,
// so the lowest failure is always found); once ctx is done, no item
// starts. Run returns the error of the
// lowest-numbered failed item, or else ctx.Err() if ctx was done before
// every item ran, or else nil. Errors are returned unwrapped: callers add
// their own context.
func Run(ctx context.Context, workers, n int, work func(w, k int) error) error {
	if n <= 0 {
		return ctx.Err()
	}
	workers = min(Workers(workers), n)
	var (
		next      atomic.Int64
		lowest    atomic.Int64 // the lowest failed item, or n
		cancelled atomic.Bool
		mu        sync.Mutex
		errK      = n
		first     error
		wg        sync.WaitGroup
	)
	lowest.Store(int64(n))
	for w := range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= n || int64(k) > lowest.Load() {
					return
				}
				if ctx.Err() != nil {
					// Item k was taken but never ran.
					cancelled.Store(true)
					return
				}
				if err := work(w, k); err != nil {
					mu.Lock()
					if k < errK {
						errK, first = k, err
						lowest.Store(int64(k))
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	if cancelled.Load() || int(next.Load()) < n {
		// Some item never ran: only a done context stops the pool without
		// an error.
		return ctx.Err()
	}
	return nil
}
