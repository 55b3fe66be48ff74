package explain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/pool"
	"github.com/tempora-dev/tempora/resident"
)

// The resident path. When the Engine is given a model's held data
// capability (Hold: a resident.Model, for instance a model process,
// docs/protocol.md), a draw perturbs the worker's copy of the data exactly
// as on the native path, then only the perturbed block (the test's
// features over its window, for every instance) is gathered and sent: the
// model applies it to its own copy of the data and predicts. Several draws,
// of one test or of several tests of a batch, go in one call, up to the
// model's batch limit in instances (BatchLimit; DefaultPackRows without
// one). A draw of more instances than the limit is cut into blocks of
// fewer rows, sent in several calls. The predictions are those of Predict
// on the same perturbed data, and the losses are computed from them as on
// the native path, so the results are the same; only the accounting's
// model calls differ.

// DefaultPackRows is the number of instances the resident path packs into
// one PredictBlocks call when the model sets no batch limit.
const DefaultPackRows = 1 << 14

// packSplit is the fewest packs a batch of at least that many draws is cut
// into, so that the model is never handed a whole batch in one call while
// the workers wait: with several packs in flight, two workers keep a model
// process busy (a connection takes two calls at once), and several model
// processes (-model-procs) share the batch. Measured with
// BenchmarkPythonModel (Table-1 shape, a model of 1 ms per 1000 instances):
// the Python model's overhead over the in-process twin fell from 10-13% to
// 5-6% with one process, and two processes went from 5-6% slower than the
// twin to 27% faster (docs/decisions.md, decision 23). It is a constant,
// not the number of workers, so that the model calls do not depend on the
// workers.
const packSplit = 4

// maxPackValues bounds the block values of one PredictBlocks call (32 MiB
// of float64), whatever the batch limit.
const maxPackValues = 1 << 22

// residentState is the Engine's resident path: the capability Hold gave
// it, and the path decided once, on the first batch.
type residentState struct {
	held    resident.Model // from Hold; nil: the native path
	decided bool
	model   resident.Model // the capability in use; nil: the native path
	bufs    []*packBuf     // one per worker
	packs   []pack
}

// pack is the items [a, b) of a batch, sent in one call (or in several
// when one draw exceeds the batch limit).
type pack struct{ a, b int }

// packBuf is one worker's buffers for a pack.
type packBuf struct {
	blocks []resident.Block
	vals   []float64
	pred   []float64
}

// Hold gives the Engine a model's held data capability, h (nil: the native
// path): the draws of the Engine's tests then go to h as blocks of the data
// (see the resident path above), with the same results. h must hold the
// data's predictions of the Engine's model. Call Hold before the first Run:
// the path is decided at the first batch, and a later Hold has no effect.
func (e *Engine) Hold(h resident.Model) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.res.decided {
		e.res.held = h
	}
}

// resident reports whether the Engine takes the resident path, deciding
// it on the first call: the Engine must have a held data capability
// (Hold), and every worker must hold a copy of the whole data (the memory
// budget, see SetMemoryBudget); otherwise draws take the native path. The
// capability's Hold is called then; its error is the model's. It is called
// with e.mu held.
func (e *Engine) resident() (bool, error) {
	r := &e.res
	if r.decided {
		return r.model != nil, nil
	}
	r.decided = true
	if r.held == nil || e.memoryRows() < e.data.X.M {
		return false, nil
	}
	if err := r.held.Hold(e.data.X); err != nil {
		return false, fmt.Errorf("explain: model: %w", err)
	}
	r.model = r.held
	return true, nil
}

// packRows returns the instances per PredictBlocks call (a request, which
// may hold several blocks).
func (e *Engine) packRows() int {
	if l := e.res.model.BatchLimit(); l > 0 {
		return l
	}
	return DefaultPackRows
}

// blockRows returns the most instances of one block, one model call on
// the resident path: packRows, at most the batch size (SetBatch).
func (e *Engine) blockRows() int { return capRows(e.packRows(), e.batchRows) }

// blockValues returns the values of one draw's block of test p.
func (e *Engine) blockValues(p *plan) int {
	return e.data.X.M * len(p.Features) * p.Window.Len()
}

// batchBlocks is batch on the resident path: the items are cut into packs
// of whole draws (cutPacks), and each worker draws a pack's items on its
// copy of the data, gathers their blocks, predicts them in one call and
// evaluates each draw's losses (drawPack).
func (e *Engine) batchBlocks(ctx context.Context, items []item, means []float64) error {
	limit := e.packRows()
	packs := e.cutPacks(items, limit)
	rows := e.blockRows()
	nw := min(pool.Workers(e.workers), len(packs))
	for len(e.spaces) < nw {
		// A lazy working copy: the resident path reads a worker's copy
		// only in the block of the draw it gathers, and gatherPack copies
		// each test's block from the data before its first draw, so the
		// rest of the copy is never read. An untouched allocation costs
		// no memory traffic (its pages are mapped as they are written),
		// where a clone of the data would read and write all of it.
		ws := e.newWorkspace(false)
		x := e.data.X
		ws.x = tempora.NewTensor(x.M, x.D, x.L)
		e.spaces = append(e.spaces, ws)
	}
	for len(e.res.bufs) < nw {
		e.res.bufs = append(e.res.bufs, &packBuf{})
	}
	var ran atomic.Int64
	err := pool.Run(ctx, nw, len(packs), func(w, k int) error {
		if err := e.drawPack(e.spaces[w], e.res.bufs[w], items, packs[k], means, limit, rows); err != nil {
			return err
		}
		ran.Add(1)
		return nil
	})
	for _, ws := range e.spaces[:nw] {
		ws.clean(e.data.X)
	}
	if err == nil && int(ran.Load()) < len(packs) {
		err = ctx.Err()
	}
	if err != nil && err == ctx.Err() {
		return fmt.Errorf("explain: %w", err)
	}
	return err
}

// cutPacks cuts the items into packs of whole draws, in item order (so the
// packs, and the accounting, do not depend on the workers): at most limit
// instances and maxPackValues values per pack (a draw larger than that
// alone), and at most a packSplit-th of the batch's draws.
func (e *Engine) cutPacks(items []item, limit int) []pack {
	m := e.data.X.M
	packs := e.res.packs[:0]
	most := max(1, (len(items)+packSplit-1)/packSplit)
	for a := 0; a < len(items); {
		b, rows, vals := a, 0, 0
		for b < len(items) {
			v := e.blockValues(items[b].plan)
			if b > a && (rows+m > limit || vals+v > maxPackValues || b-a == most) {
				break
			}
			rows += m
			vals += v
			b++
		}
		packs = append(packs, pack{a, b})
		a = b
	}
	e.res.packs = packs
	return packs
}

// drawPack draws the items of pk on the worker's copy, gathering each
// draw's block (gatherPack), predicts the blocks and writes each draw's
// mean loss into means (packLosses). A pack of at most limit instances
// goes in one call, the draws gathered straight into the memory the model
// offers (predictFilled: a connection's shared buffer); a larger one (one
// draw of more instances than the limit) in calls of at most limit rows
// (predictSplit). Each draw is cut into blocks of at most rows instances,
// one model call each.
func (e *Engine) drawPack(ws *workspace, buf *packBuf, items []item, pk pack, means []float64, limit, rows int) error {
	its := items[pk.a:pk.b]
	blocks, pred := e.packBlocks(buf, its, rows)
	gather := func(v []float64) error { return e.gatherPack(ws, v, its) }
	fail := func(err error) error {
		// A check of one block's predictions names its draw: in one
		// call (predictFilled) each draw is one block.
		it := its[0]
		var be *resident.BlockError
		if errors.As(err, &be) && len(pred) <= limit && be.Block < len(its) {
			it = its[be.Block]
		}
		return fmt.Errorf("%w (test %q, draw %d)", e.modelError(err), it.plan.Key, it.draw)
	}
	var err error
	if len(pred) <= limit {
		err = e.predictFilled(pred, blocks, buf.vals, gather, fail)
	} else {
		err = e.predictSplit(pred, blocks, buf.vals, gather, fail, limit)
	}
	if err != nil {
		return err
	}
	return e.packLosses(ws, pred, its, means[pk.a*e.scorer.Means():pk.b*e.scorer.Means()])
}

// packBlocks sizes the worker's buffers for the draws its and returns
// their blocks, of at most limit rows each, whose values are consecutive
// ranges of buf.vals, and their predictions, NaN until predicted.
func (e *Engine) packBlocks(buf *packBuf, its []item, limit int) ([]resident.Block, []float64) {
	m := e.data.X.M
	vals := 0
	for _, it := range its {
		vals += e.blockValues(it.plan)
	}
	if cap(buf.vals) < vals {
		buf.vals = make([]float64, vals)
	}
	buf.vals = buf.vals[:vals]
	n := len(its) * m * e.data.K()
	if cap(buf.pred) < n {
		buf.pred = make([]float64, n)
	}
	pred := buf.pred[:n]
	for nan, i := math.NaN(), 0; i < len(pred); i++ {
		pred[i] = nan
	}
	blocks := buf.blocks[:0]
	at := 0
	for _, it := range its {
		p := it.plan
		per := len(p.Features) * p.Window.Len()
		for lo := 0; lo < m; lo += limit {
			hi := min(lo+limit, m)
			blocks = append(blocks, resident.Block{Lo: lo, Hi: hi, Features: p.Features, Start: p.Window.Start, End: p.Window.End, Values: buf.vals[at+lo*per : at+hi*per]})
		}
		at += m * per
	}
	buf.blocks = blocks
	return blocks, pred
}

// gatherPack draws the items its, writing each draw's block into v (the
// pack's values, in the blocks' layout): straight from the data when the
// draw allows it (drawBlock), else perturbed on the worker's copy and
// gathered from it.
func (e *Engine) gatherPack(ws *workspace, v []float64, its []item) error {
	x := ws.x
	at := 0
	ws.deferred = true
	defer func() { ws.deferred = false }()
	for _, it := range its {
		p := it.plan
		size := e.blockValues(p)
		if e.drawBlock(v[at:at+size], ws, p, it.draw) {
			at += size
			continue
		}
		if ws.dirty != p {
			// The working copy is lazy (batchBlocks): give the block the
			// data's values, which is all a draw reads of it.
			tempora.RestoreBlock(x, e.data.X, p.Features, p.Window.Start, p.Window.End)
			ws.dirty = nil
		}
		if _, err := e.draw(ws, p, it.draw); err != nil {
			return fmt.Errorf("%w (test %q, draw %d)", err, p.Key, it.draw)
		}
		start, end := p.Window.Start, p.Window.End
		w := end - start + 1
		for i := range x.M {
			for _, j := range p.Features {
				o := (i*x.D+j)*x.L + start
				copy(v[at:at+w], x.Data[o:o+w])
				at += w
			}
		}
	}
	return nil
}

// predictFilled predicts a pack in one call: gather writes the draws'
// values into the memory the model offers (its own, or scratch), then the
// model predicts the blocks. A gathering error is returned as it is, a
// model error through fail.
func (e *Engine) predictFilled(pred []float64, blocks []resident.Block, scratch []float64, gather func(v []float64) error, fail func(error) error) error {
	var gatherErr error
	// A held model predicts each block by itself (resident.Model): one
	// model call per block.
	if err := e.spend(int64(len(blocks)), int64(len(pred)/e.data.K())); err != nil {
		return err
	}
	err := e.res.model.PredictBlocksFilled(pred, e.data.X, blocks, scratch, func(v []float64) error {
		gatherErr = gather(v)
		return gatherErr
	})
	if gatherErr != nil {
		return gatherErr
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// predictSplit predicts a pack of more than limit instances (the cut blocks
// of one large draw): gather writes the values into vals, the blocks'
// values, then they go in calls of at most limit rows.
func (e *Engine) predictSplit(pred []float64, blocks []resident.Block, vals []float64, gather func(v []float64) error, fail func(error) error, limit int) error {
	if err := gather(vals); err != nil {
		return err
	}
	for b0, r0 := 0, 0; b0 < len(blocks); {
		b1, rows := b0, 0
		for b1 < len(blocks) && (b1 == b0 || rows+blocks[b1].Rows() <= limit) {
			rows += blocks[b1].Rows()
			b1++
		}
		if err := e.spend(int64(b1-b0), int64(rows)); err != nil {
			return err
		}
		k := e.data.K()
		if err := e.res.model.PredictBlocks(pred[r0*k:(r0+rows)*k], e.data.X, blocks[b0:b1]); err != nil {
			return fail(err)
		}
		b0, r0 = b1, r0+rows
	}
	return nil
}

// packLosses evaluates each draw's predictions, writing its mean losses
// into means (Scorer.Means per item of its).
func (e *Engine) packLosses(ws *workspace, pred []float64, its []item, means []float64) error {
	n := e.data.X.M * e.data.K()
	ns := e.scorer.Means()
	for q, it := range its {
		copy(ws.pred, pred[q*n:(q+1)*n])
		if _, err := e.evaluate(ws, nil); err != nil {
			return fmt.Errorf("%w (test %q, draw %d)", err, it.plan.Key, it.draw)
		}
		copy(means[q*ns:(q+1)*ns], ws.stats)
	}
	return nil
}
