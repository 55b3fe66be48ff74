package procmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// Member is a model a Pool can hold: a *Model, a *Conn, or any model that
// must be closed.
type Member interface {
	tempora.Model
	io.Closer
}

// HeldMember is a Member that can also hold data (resident.Model): a
// *Model or a *Conn. A pool of them (NewHeldPool, StartPool) offers that
// capability too (Held).
type HeldMember interface {
	Member
	resident.Model
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
	k       int              // the members' outputs per instance
	held    []resident.Model // the members' held data capability; nil from NewPool
	idle    chan int         // indices of the members, once per call each takes

	mu     sync.Mutex
	err    error // sticky: the first member error, or ErrClosed
	closed bool
}

// NewPool returns a pool of the given members, which it owns from then on
// (Close closes them). It returns an error if members is empty, holds a
// nil member, or holds members that return different numbers of outputs
// per instance (a *Model or *Conn says how many its hello announced;
// other members return one). The pool answers Predict only; NewHeldPool
// makes a pool that holds data too.
func NewPool(members ...Member) (*Pool, error) {
	if len(members) == 0 {
		return nil, errors.New("procmodel: a pool needs at least one model")
	}
	slots := 0
	for i, m := range members {
		if m == nil {
			return nil, fmt.Errorf("procmodel: pool model %d is nil", i)
		}
		if k, k0 := outputs(m), outputs(members[0]); k != k0 {
			return nil, fmt.Errorf("procmodel: pool models 0 and %d return %d and %d outputs per instance; every copy must compute the same function", i, k0, k)
		}
		slots += depth(m)
	}
	// Round-robin order: every member's first slot, then every second one.
	p := &Pool{members: members, k: outputs(members[0]), idle: make(chan int, slots)}
	for k := 0; len(p.idle) < slots; k++ {
		for i, m := range members {
			if k < depth(m) {
				p.idle <- i
			}
		}
	}
	return p, nil
}

// NewHeldPool is NewPool for members that hold data: the pool's Held
// returns their capability, each call handed, whole, to an idle member.
func NewHeldPool(members ...HeldMember) (*Pool, error) {
	ms := make([]Member, len(members))
	held := make([]resident.Model, len(members))
	for i, m := range members {
		if m == nil {
			return nil, fmt.Errorf("procmodel: pool model %d is nil", i)
		}
		ms[i], held[i] = m, m
	}
	p, err := NewPool(ms...)
	if err != nil {
		return nil, err
	}
	p.held = held
	return p, nil
}

// depth returns the number of calls m takes at once.
func depth(m Member) int {
	if d, ok := m.(interface{ depth() int }); ok {
		return d.depth()
	}
	return 1
}

// outputs returns the number of outputs per instance m returns: what the
// hello of a *Model or *Conn announced, else 1.
func outputs(m Member) int {
	if o, ok := m.(interface{ Outputs() int }); ok {
		return o.Outputs()
	}
	return 1
}

// Outputs returns the number of outputs per instance the members return
// (Model.Outputs): Predict writes x.M·Outputs() predictions.
func (p *Pool) Outputs() int { return p.k }

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
	members := make([]HeldMember, n)
	for i, m := range models {
		members[i] = m
	}
	return NewHeldPool(members...)
}

// Len returns the number of members.
func (p *Pool) Len() int { return len(p.members) }

// Predict hands the whole call to an idle member, waiting for one if all
// are busy. It implements tempora.Model.
func (p *Pool) Predict(dst []float64, x *tempora.Tensor) error {
	if err := p.sticky(); err != nil {
		return err
	}
	i := <-p.idle
	err := p.members[i].Predict(dst, x)
	p.idle <- i
	if err != nil {
		err = p.keep(err)
	}
	return err
}

// Held returns the pool's held data capability: the members' (each call
// handed, whole, to an idle member, as Predict does), or nil for a pool
// made by NewPool.
func (p *Pool) Held() resident.Model {
	if p.held == nil {
		return nil
	}
	return heldPool{p}
}

// heldPool is a Pool's held data capability.
type heldPool struct{ p *Pool }

// Hold holds x in every member.
func (h heldPool) Hold(x *tempora.Tensor) error {
	if err := h.p.sticky(); err != nil {
		return err
	}
	for _, m := range h.p.held {
		if err := m.Hold(x); err != nil {
			return h.p.keep(err)
		}
	}
	return nil
}

// BatchLimit returns the smallest positive limit of the members, 0 if none
// has one.
func (h heldPool) BatchLimit() int {
	limit := 0
	for _, m := range h.p.held {
		if l := m.BatchLimit(); l > 0 && (limit == 0 || l < limit) {
			limit = l
		}
	}
	return limit
}

// PredictBlocks hands the whole call to an idle member, like Predict.
func (h heldPool) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	return h.call(func(m resident.Model) error { return m.PredictBlocks(dst, x, blocks) }, nil)
}

// PredictBlocksFilled hands the whole call to an idle member, which fills
// its shared buffer when it is a connection with one (Conn), else scratch.
func (h heldPool) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	var fillErr error
	record := func(v []float64) error {
		fillErr = fill(v)
		return fillErr
	}
	return h.call(func(m resident.Model) error { return m.PredictBlocksFilled(dst, x, blocks, scratch, record) }, &fillErr)
}

// call runs f on an idle member's capability. A failure of the member
// stops the pool, as in Predict; an error of the caller's fill (*fillErr,
// if fillErr is not nil) is returned as it is and does not.
func (h heldPool) call(f func(m resident.Model) error, fillErr *error) error {
	p := h.p
	if err := p.sticky(); err != nil {
		return err
	}
	i := <-p.idle
	err := f(p.held[i])
	p.idle <- i
	if fillErr != nil && *fillErr != nil {
		return *fillErr
	}
	if err != nil {
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
