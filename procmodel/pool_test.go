package procmodel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
)

// fakeMember is an in-process pool member that records its use.
type fakeMember struct {
	tempora.Model
	calls  atomic.Int64
	closed atomic.Bool
}

func (f *fakeMember) Predict(dst []float64, x *tempora.Tensor) error {
	f.calls.Add(1)
	return f.Model.Predict(dst, x)
}

func (f *fakeMember) Close() error { f.closed.Store(true); return nil }

// TestPoolParallel checks that a pool runs concurrent calls on different
// members at the same time: each member blocks until every member has a
// call, which only happens if the pool spreads concurrent calls.
func TestPoolParallel(t *testing.T) {
	const n = 3
	var arrived sync.WaitGroup
	arrived.Add(n)
	release := make(chan struct{})
	go func() { arrived.Wait(); close(release) }()
	members := make([]Member, n)
	fakes := make([]*fakeMember, n)
	for i := range members {
		var once sync.Once
		fakes[i] = &fakeMember{Model: tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			once.Do(arrived.Done)
			select {
			case <-release:
			case <-time.After(10 * time.Second):
				return errors.New("the pool never had every member busy at once")
			}
			return sumModel(dst, x)
		})}
		members[i] = fakes[i]
	}
	p, err := NewPool(members...)
	if err != nil {
		t.Fatal(err)
	}
	x := randomTensor(5, 2, 3, "pool")
	want := make([]float64, 5)
	sumModel(want, x)
	var wg sync.WaitGroup
	errs := make([]error, 4*n)
	for c := range errs {
		wg.Go(func() {
			got := make([]float64, 5)
			if errs[c] = p.Predict(got, x); errs[c] == nil {
				for i := range got {
					if got[i] != want[i] {
						errs[c] = fmt.Errorf("instance %d: got %v, want %v", i, got[i], want[i])
					}
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var total int64
	for i, f := range fakes {
		if f.calls.Load() == 0 {
			t.Errorf("member %d answered no call", i)
		}
		total += f.calls.Load()
	}
	if total != int64(len(errs)) {
		t.Errorf("members answered %d calls, want %d (each call exactly once)", total, len(errs))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for i, f := range fakes {
		if !f.closed.Load() {
			t.Errorf("member %d not closed", i)
		}
	}
	if err := p.Predict(want, x); !errors.Is(err, ErrClosed) {
		t.Errorf("Predict after Close: %v, want ErrClosed", err)
	}
}

func TestPoolErrorIsSticky(t *testing.T) {
	boom := errors.New("boom")
	bad := &fakeMember{Model: tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error { return boom })}
	good := &fakeMember{Model: sumModel}
	p, err := NewPool(bad)
	if err != nil {
		t.Fatal(err)
	}
	x := randomTensor(2, 1, 1, "sticky")
	dst := make([]float64, 2)
	if err := p.Predict(dst, x); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if err := p.Predict(dst, x); !errors.Is(err, boom) || bad.calls.Load() != 1 {
		t.Errorf("second call: %v after %d member calls, want the sticky error without a call", err, bad.calls.Load())
	}
	p.Close()
	if p.Held() != nil {
		t.Error("NewPool's pool has a held data capability")
	}
	if _, err := NewPool(); err == nil {
		t.Error("empty pool: no error")
	}
	if _, err := NewPool(good, nil); err == nil {
		t.Error("nil member: no error")
	}
	if _, err := NewHeldPool(); err == nil {
		t.Error("empty held pool: no error")
	}
	if _, err := NewHeldPool(nil); err == nil {
		t.Error("nil held member: no error")
	}
}

// TestStartPool starts several copies of the helper model, checks that they
// predict exactly and that Close ends every process; and that a pool whose
// command fails leaves no process behind.
func TestStartPool(t *testing.T) {
	cmd, env := helperCommand("serve")
	p, err := StartPool(context.Background(), cmd, 3, Options{Env: env, Stderr: &syncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 3 {
		t.Errorf("Len %d, want 3", p.Len())
	}
	x := randomTensor(50, 4, 6, "startpool")
	want, got := make([]float64, 50), make([]float64, 50)
	sumModel(want, x)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			dst := make([]float64, 50)
			if err := p.Predict(dst, x); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := p.Predict(got, x); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("instance %d: got %v, want %v", i, got[i], want[i])
		}
	}
	// The pool holds data: blocks from several workers at once, each
	// call whole to one member, which gets the data before its first.
	held := p.Held()
	if held == nil {
		t.Fatal("StartPool's pool has no held data capability")
	}
	if err := held.Hold(x); err != nil {
		t.Fatal(err)
	}
	blocks := testBlocks(x, "startpool")
	wantBlocks := blocksWant(sumModel, x, blocks)
	for range 6 {
		wg.Go(func() {
			dst := make([]float64, rowsOf(blocks))
			if err := held.PredictBlocks(dst, x, blocks); err != nil {
				t.Error(err)
				return
			}
			for i := range dst {
				if dst[i] != wantBlocks[i] {
					t.Errorf("block prediction %d: got %v, want %v", i, dst[i], wantBlocks[i])
					return
				}
			}
		})
	}
	wg.Wait()
	pids := make([]int, 0, 3)
	for _, m := range p.members {
		pids = append(pids, m.(*Model).Pid())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitGone(t, pid, "pool member")
	}

	cmd, env = helperCommand("die-early")
	if _, err := StartPool(context.Background(), cmd, 2, Options{Env: env, Stderr: &syncBuffer{}}); !errors.Is(err, ErrExited) {
		t.Errorf("failing command: got %v, want ErrExited", err)
	}
	if _, err := StartPool(context.Background(), cmd, 0, Options{}); err == nil {
		t.Error("zero processes: no error")
	}
}
