package pool

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestRunVisitsEveryItemOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 64} {
		const n = 1000
		var seen [n]atomic.Int32
		if err := Run(context.Background(), workers, n, func(_, k int) error {
			seen[k].Add(1)
			return nil
		}); err != nil {
			t.Fatalf("workers %d: %v", workers, err)
		}
		for k := range seen {
			if c := seen[k].Load(); c != 1 {
				t.Fatalf("workers %d: item %d ran %d times", workers, k, c)
			}
		}
	}
}

func TestRunWorkerIndexInRange(t *testing.T) {
	const workers = 4
	var bad atomic.Bool
	if err := Run(context.Background(), workers, 100, func(w, _ int) error {
		if w < 0 || w >= workers {
			bad.Store(true)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if bad.Load() {
		t.Fatal("a worker index fell outside [0, workers)")
	}
}

func TestRunLowestError(t *testing.T) {
	// Items 10 and 20 fail; with one worker item 10 fails first and stops
	// the pool, with many the lowest failed item's error must still win.
	for _, workers := range []int{1, 2, 8} {
		err := Run(context.Background(), workers, 100, func(_, k int) error {
			if k == 10 || k == 20 {
				return fmt.Errorf("item %d", k)
			}
			return nil
		})
		if err == nil || err.Error() != "item 10" {
			t.Fatalf("workers %d: err = %v, want item 10", workers, err)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Every shape, including as many workers as items or more: a worker
	// that takes an item and then sees the done context must not count it
	// as run.
	for _, c := range []struct{ workers, n int }{{1, 1}, {2, 1}, {8, 2}, {1, 2}, {2, 10}} {
		ran := false
		err := Run(ctx, c.workers, c.n, func(_, _ int) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) || ran {
			t.Fatalf("workers %d, n %d: err = %v, ran = %v; want context.Canceled and no item run", c.workers, c.n, err, ran)
		}
	}
	if err := Run(ctx, 2, 0, func(_, _ int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("n = 0: err = %v, want context.Canceled", err)
	}
}

func TestWorkers(t *testing.T) {
	if Workers(3) != 3 || Workers(0) < 1 || Workers(-1) < 1 {
		t.Fatal("Workers: want w when positive, GOMAXPROCS otherwise")
	}
}
