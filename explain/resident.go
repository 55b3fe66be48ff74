package explain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/pool"
)

// The resident path. When the model is a tempora.BlockModel that holds the
// data (a model process of protocol version 2, docs/protocol.md), a draw
// perturbs the worker's copy of the data exactly as on the native path,
// then only the perturbed block (the test's features over its window, for
// every instance) is gathered and sent: the model applies it to its own
// resident copy and predicts. Several draws, of one test or of several
// tests of a batch, go in one PredictBlocks call, up to the model's batch
// limit in instances (BatchLimit; DefaultPackRows without one). A draw of
// more instances than the limit is cut into blocks of fewer rows, sent in
// several calls. The predictions are those of Predict on the same
// perturbed data, and the losses are computed from them as on the native
// path, so the results are the same; only the accounting's model calls
// differ.

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

// residentState is the Engine's resident path: decided once, on the first
// batch.
type residentState struct {
	decided bool
	model   tempora.BlockModel // nil: the native path
	bufs    []*packBuf         // one per worker
	packs   []pack
}

// pack is the items [a, b) of a batch, sent in one PredictBlocks call (or
// in several when one draw exceeds the batch limit).
type pack struct{ a, b int }

// packBuf is one worker's buffers for a pack.
type packBuf struct {
	blocks []tempora.Block
	vals   []float64
	pred   []float64
}

// resident reports whether the Engine takes the resident path, deciding
// it on the first call: the model must be a tempora.BlockModel that holds
// the data (Hold does not report tempora.ErrNotResident), and every worker
// must hold a copy of the whole data (the memory budget, see
// SetMemoryBudget); otherwise draws take the native path. It is called
// with e.mu held.
func (e *Engine) resident() (bool, error) {
	r := &e.res
	if r.decided {
		return r.model != nil, nil
	}
	r.decided = true
	bm, ok := e.model.(tempora.BlockModel)
	if !ok || e.chunkRows() < e.data.X.M {
		return false, nil
	}
	if err := bm.Hold(e.data.X); err != nil {
		if errors.Is(err, tempora.ErrNotResident) {
			return false, nil
		}
		return false, fmt.Errorf("explain: model: %w", err)
	}
	r.model = bm
	return true, nil
}

// packRows returns the instances per PredictBlocks call.
func (e *Engine) packRows() int {
	if l := e.res.model.BatchLimit(); l > 0 {
		return l
	}
	return DefaultPackRows
}

// blockValues returns the values of one draw's block of test p.
func (e *Engine) blockValues(p *plan) int {
	return e.data.X.M * len(p.Features) * p.Window.Len()
}

// batchBlocks is batch on the resident path: the items are cut into packs
// of whole draws, in item order (so the packs, and the accounting, do not
// depend on the workers), and each worker draws a pack's items on its copy
// of the data, gathers their blocks, predicts them in one call and
// evaluates each draw's losses.
func (e *Engine) batchBlocks(ctx context.Context, items []item, means []float64) error {
	m := e.data.X.M
	limit := e.packRows()
	packs := e.res.packs[:0]
	// At most a packSplit-th of the batch's draws per pack.
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
	nw := min(pool.Workers(e.workers), len(packs))
	for len(e.spaces) < nw {
		// A lazy working copy: the resident path reads a worker's copy
		// only in the block of the draw it gathers, and drawPack copies
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
		if err := e.drawPack(e.spaces[w], e.res.bufs[w], items, packs[k], means, limit); err != nil {
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

// drawPack draws the items of pk on the worker's copy, gathering each
// draw's block, predicts the blocks and writes each draw's mean loss into
// means. When the pack goes in one call to a model that takes the values
// in its own memory (tempora.BlockFiller: a connection's shared buffer),
// the blocks are gathered straight into it.
func (e *Engine) drawPack(ws *workspace, buf *packBuf, items []item, pk pack, means []float64, limit int) error {
	x := ws.x
	m := x.M
	vals := 0
	for _, it := range items[pk.a:pk.b] {
		vals += e.blockValues(it.plan)
	}
	if cap(buf.vals) < vals {
		buf.vals = make([]float64, vals)
	}
	buf.vals = buf.vals[:vals]
	n := (pk.b - pk.a) * m
	k := e.data.K()
	if cap(buf.pred) < n*k {
		buf.pred = make([]float64, n*k)
	}
	pred := buf.pred[:n*k]
	// The blocks of at most limit rows each, their values consecutive
	// ranges of the pack's values.
	blocks := buf.blocks[:0]
	at := 0
	for _, it := range items[pk.a:pk.b] {
		p := it.plan
		per := len(p.Features) * p.Window.Len()
		for lo := 0; lo < m; lo += limit {
			hi := min(lo+limit, m)
			blocks = append(blocks, tempora.Block{Lo: lo, Hi: hi, Features: p.Features, Start: p.Window.Start, End: p.Window.End, Values: buf.vals[at+lo*per : at+hi*per]})
		}
		at += m * per
	}
	buf.blocks = blocks
	// gather draws the pack's items, writing each draw's block into v
	// (the pack's values).
	gather := func(v []float64) error {
		at := 0
		ws.deferred = true
		defer func() { ws.deferred = false }()
		for _, it := range items[pk.a:pk.b] {
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
			for i := range m {
				for _, j := range p.Features {
					o := (i*x.D+j)*x.L + start
					copy(v[at:at+w], x.Data[o:o+w])
					at += w
				}
			}
		}
		return nil
	}
	for nan, i := math.NaN(), 0; i < len(pred); i++ {
		pred[i] = nan
	}
	first := items[pk.a]
	modelErr := func(err error) error {
		return fmt.Errorf("%w (test %q, draw %d)", e.modelError(err), first.plan.Key, first.draw)
	}
	if f, ok := e.res.model.(tempora.BlockFiller); ok && n <= limit {
		// One call: the pack's draws are gathered into the model's memory.
		var gatherErr error
		e.calls.Add(1)
		e.evals.Add(int64(n))
		err := f.PredictBlocksFilled(pred, e.data.X, blocks, buf.vals, func(v []float64) error {
			gatherErr = gather(v)
			return gatherErr
		})
		if gatherErr != nil {
			return gatherErr
		}
		if err != nil {
			return modelErr(err)
		}
	} else {
		if err := gather(buf.vals); err != nil {
			return err
		}
		// Calls of at most limit rows: whole blocks (a pack of several
		// draws has at most limit rows), or the cut blocks of one large
		// draw.
		for b0, r0 := 0, 0; b0 < len(blocks); {
			b1, rows := b0, 0
			for b1 < len(blocks) && (b1 == b0 || rows+blocks[b1].Rows() <= limit) {
				rows += blocks[b1].Rows()
				b1++
			}
			e.calls.Add(1)
			e.evals.Add(int64(rows))
			if err := e.res.model.PredictBlocks(pred[r0*k:(r0+rows)*k], e.data.X, blocks[b0:b1]); err != nil {
				return modelErr(err)
			}
			b0, r0 = b1, r0+rows
		}
	}
	ns := e.scorer.Means()
	for q, it := range items[pk.a:pk.b] {
		copy(ws.pred, pred[q*m*k:(q+1)*m*k])
		if _, err := e.evaluate(ws, nil); err != nil {
			return fmt.Errorf("%w (test %q, draw %d)", err, it.plan.Key, it.draw)
		}
		copy(means[(pk.a+q)*ns:(pk.a+q+1)*ns], ws.stats)
	}
	return nil
}
