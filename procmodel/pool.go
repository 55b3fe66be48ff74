package procmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tempora-dev/tempora"
)

// Member is a model a Pool can hold: a *Model, a *Conn, or any model that
// must be closed.
type Member interface {
	tempora.Model
	io.Closer
}

// Pool is a tempora.Model answered by several model processes in parallel:
// each Predict call goes, whole, to one idle member, so up to Slots calls run
// at once (explainers make concurrent calls from their workers). A *Conn
// member takes two calls at once, so that its model finds the next batch
// waiting when it finishes one; other members take one. Which
// member answers a call is not deterministic, so the members must compute
// the same function; then the predictions, and everything an explainer
// derives from them, do not depend on the number of members. A call is
// never split between members, so even a model whose rounding depends on
// the batch size gives the same answers.
//
// After any member fails, every later call returns that error. Close closes
// every member.
type Pool struct {
	members []Member
	idle    chan Member

	mu     sync.Mutex
	err    error // sticky: the first member error, or ErrClosed
	closed bool
}

var _ tempora.BlockModel = (*Pool)(nil)

// NewPool returns a pool of the given members, which it owns from then on
// (Close closes them). It returns an error if members is empty or holds a
// nil member.
func NewPool(members ...Member) (*Pool, error) {
	if len(members) == 0 {
		return nil, errors.New("procmodel: a pool needs at least one model")
	}
	slots := 0
	for i, m := range members {
		if m == nil {
			return nil, fmt.Errorf("procmodel: pool model %d is nil", i)
		}
		slots += depth(m)
	}
	// Round-robin order: every member's first slot, then every second one.
	p := &Pool{members: members, idle: make(chan Member, slots)}
	for k := 0; len(p.idle) < slots; k++ {
		for _, m := range members {
			if k < depth(m) {
				p.idle <- m
			}
		}
	}
	return p, nil
}

// depth returns the number of calls m takes at once.
func depth(m Member) int {
	if d, ok := m.(interface{ depth() int }); ok {
		return d.depth()
	}
	return 1
}

// Slots returns the number of calls the pool runs at once: one per member,
// two per *Conn.
func (p *Pool) Slots() int { return cap(p.idle) }

// StartPool starts n copies of command (see Start) concurrently and returns
// them as a pool. If any copy fails to start, the others are closed and the
// first error, in copy order, is returned.
func StartPool(ctx context.Context, command []string, n int, opts Options) (*Pool, error) {
	if n < 1 {
		return nil, fmt.Errorf("procmodel: %d model processes: need at least 1", n)
	}
	models := make([]*Model, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { models[i], errs[i] = Start(ctx, command, opts) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, m := range models {
			if m != nil {
				m.Close()
			}
		}
		for _, e := range errs {
			if e != nil {
				return nil, e
			}
		}
	}
	members := make([]Member, n)
	for i, m := range models {
		members[i] = m
	}
	return NewPool(members...)
}

// Len returns the number of members.
func (p *Pool) Len() int { return len(p.members) }

// Predict hands the whole call to an idle member, waiting for one if all
// are busy. It implements tempora.Model.
func (p *Pool) Predict(dst []float64, x *tempora.Tensor) error {
	if err := p.sticky(); err != nil {
		return err
	}
	m := <-p.idle
	err := m.Predict(dst, x)
	p.idle <- m
	if err != nil {
		err = p.keep(err)
	}
	return err
}

// Hold implements tempora.BlockModel: it holds x in every member, and
// returns an error wrapping tempora.ErrNotResident if a member cannot hold
// data (a model process that speaks protocol version 1).
func (p *Pool) Hold(x *tempora.Tensor) error {
	if err := p.sticky(); err != nil {
		return err
	}
	for i, m := range p.members {
		bm, ok := m.(tempora.BlockModel)
		if !ok {
			return fmt.Errorf("%w: pool model %d", tempora.ErrNotResident, i)
		}
		if err := bm.Hold(x); err != nil {
			return err
		}
	}
	return nil
}

// BatchLimit implements tempora.BlockModel: the smallest positive limit of
// the members, 0 if none has one.
func (p *Pool) BatchLimit() int {
	limit := 0
	for _, m := range p.members {
		if bm, ok := m.(tempora.BlockModel); ok {
			if l := bm.BatchLimit(); l > 0 && (limit == 0 || l < limit) {
				limit = l
			}
		}
	}
	return limit
}

// PredictBlocks implements tempora.BlockModel: it hands the whole call to
// an idle member, like Predict.
func (p *Pool) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []tempora.Block) error {
	if err := p.sticky(); err != nil {
		return err
	}
	m := <-p.idle
	var err error
	if bm, ok := m.(tempora.BlockModel); ok {
		err = bm.PredictBlocks(dst, x, blocks)
	} else {
		err = fmt.Errorf("%w: a pool model", tempora.ErrNotResident)
	}
	p.idle <- m
	if err != nil && !errors.Is(err, tempora.ErrNotResident) {
		err = p.keep(err)
	}
	return err
}

// PredictBlocksFilled implements tempora.BlockFiller: it hands the whole
// call to an idle member, which fills its shared buffer when it is a
// connection with one (Conn), else scratch.
func (p *Pool) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []tempora.Block, scratch []float64, fill func([]float64) error) error {
	if err := p.sticky(); err != nil {
		return err
	}
	// fill's own error is the caller's, not the model's: it does not stop
	// the pool.
	var fillErr error
	record := func(v []float64) error {
		fillErr = fill(v)
		return fillErr
	}
	m := <-p.idle
	var err error
	switch bm := m.(type) {
	case tempora.BlockFiller:
		err = bm.PredictBlocksFilled(dst, x, blocks, scratch, record)
	case tempora.BlockModel:
		filled, vals := tempora.FilledBlocks(blocks, scratch)
		err = fillScratch(bm, dst, x, filled, vals, record)
	default:
		err = fmt.Errorf("%w: a pool model", tempora.ErrNotResident)
	}
	p.idle <- m
	if fillErr != nil {
		return fillErr
	}
	if err != nil && !errors.Is(err, tempora.ErrNotResident) {
		err = p.keep(err)
	}
	return err
}

// keep makes err the pool's sticky error unless it has one, and returns
// the sticky error: after a model failed, every call reports the first
// failure.
func (p *Pool) keep(err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
	return p.err
}

func (p *Pool) sticky() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close closes every member concurrently and returns their errors joined.
// Close is idempotent; Predict returns ErrClosed afterwards.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.err = ErrClosed
	p.mu.Unlock()
	errs := make([]error, len(p.members))
	var wg sync.WaitGroup
	for i, m := range p.members {
		wg.Go(func() { errs[i] = m.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
