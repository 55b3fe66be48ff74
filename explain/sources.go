package explain

import (
	"context"
	"slices"
)

// source is the draws of one key in a run: the tests that share them
// (tests of the same block on different outputs), the draws scheduled so
// far and the current batch's items.
type source struct {
	plan  *plan
	tests []int // the tests' indices, in test order
	// issued is the draws scheduled so far; lo and hi are the current
	// batch's items; first is the first unfinished test, to which the
	// batch's fresh draws (evaluated, not recalled) are attributed.
	issued, lo, hi, first, fresh int
	// recalled holds the means of the draws an earlier run of the same
	// key evaluated (ns per draw), which this run takes instead of
	// evaluating them again.
	recalled []float64
}

// schedule appends to items the next batch of every source with an
// unfinished test, in source order: as many draws as the most that one of
// its unfinished tests asks for (sequence.next).
func schedule(srcs []*source, runs []run, items []item) []item {
	for _, s := range srcs {
		s.lo, s.hi, s.first = len(items), len(items), -1
		c := 0
		for _, i := range s.tests {
			if r := &runs[i]; !r.seq.done {
				if s.first < 0 {
					s.first = i
				}
				c = max(c, r.seq.next())
			}
		}
		for d := s.issued; d < s.issued+c; d++ {
			items = append(items, item{plan: s.plan, draw: d})
		}
		s.issued += c
		s.hi = len(items)
	}
	return items
}

// fill writes the means of the items' draws into means (ns per item):
// those an earlier run evaluated from the source's recalled draws, the
// others evaluated by batch.
func (e *Engine) fill(ctx context.Context, srcs []*source, items []item, means []float64) error {
	ns := e.scorer.Means()
	if !slices.ContainsFunc(srcs, func(s *source) bool { return s.hi > s.lo && s.recalled != nil && items[s.lo].draw*ns < len(s.recalled) }) {
		for _, s := range srcs {
			s.fresh = s.hi - s.lo
		}
		return e.batch(ctx, items, means)
	}
	var todo []item
	var at []int
	for _, s := range srcs {
		s.fresh = 0
		for k := s.lo; k < s.hi; k++ {
			if d := items[k].draw; (d+1)*ns <= len(s.recalled) {
				copy(means[k*ns:(k+1)*ns], s.recalled[d*ns:(d+1)*ns])
				continue
			}
			todo = append(todo, items[k])
			at = append(at, k)
			s.fresh++
		}
	}
	if len(todo) == 0 {
		return nil
	}
	got := make([]float64, len(todo)*ns)
	if err := e.batch(ctx, todo, got); err != nil {
		return err
	}
	for j, k := range at {
		copy(means[k*ns:(k+1)*ns], got[j*ns:(j+1)*ns])
	}
	return nil
}

// kept is the draws of one key an Engine keeps between runs, with what
// identifies them.
type kept struct {
	plan  plan
	means []float64 // ns per draw, in draw order
}

// keeps reports whether the Engine keeps every key's draws between runs:
// only for a model with several outputs, whose tests of one block on
// several outputs may come in several runs (TIME's output family after
// its feature family).
func (e *Engine) keeps() bool { return e.scorer.Means() > 1 }

// recall gives every source the draws kept from earlier runs of its key,
// if they are the same draws.
func (e *Engine) recall(srcs []*source) {
	if !e.keeps() {
		return
	}
	for _, s := range srcs {
		if k, ok := e.kept[s.plan.Key]; ok && k.plan.sameBlock(s.plan) {
			s.recalled = k.means
		}
	}
}

// keep records the batch's draws of every source beyond those kept.
func (e *Engine) keep(srcs []*source, items []item, means []float64, ns int) {
	if !e.keeps() {
		return
	}
	if e.kept == nil {
		e.kept = map[string]*kept{}
	}
	for _, s := range srcs {
		k, ok := e.kept[s.plan.Key]
		if !ok || !k.plan.sameBlock(s.plan) {
			k = &kept{plan: *s.plan}
			e.kept[s.plan.Key] = k
		}
		for i := s.lo; i < s.hi; i++ {
			if items[i].draw*ns == len(k.means) {
				k.means = append(k.means, means[i*ns:(i+1)*ns]...)
			}
		}
	}
}

// sameBlock reports whether p and q draw the same permutations of the
// same block, whatever their caps: the same features, window and
// perturbation, and both enumerate (exact) or both sample, so that draw d
// is the same in both.
func (p *plan) sameBlock(q *plan) bool {
	return slices.Equal(p.Features, q.Features) && p.Window == q.Window && p.Kind == q.Kind && p.exact == q.exact
}
