package explain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/memlimit"
)

// chunkValues is the size of a chunk (memlimit.ChunkValues): data that
// does not fit the Engine's memory budget once per worker is predicted in
// chunks of whole instances of at most chunkValues values, one model call
// per chunk, so that a worker holds one chunk instead of a copy of the
// whole data (memlimit.ChunkRows, the one rule of working copies). A
// variable so that tests can force chunking.
var chunkValues = memlimit.ChunkValues

// workspace is one worker's private state: a copy of the data (or of one
// chunk of instances) and the buffers of a draw.
type workspace struct {
	x          *tempora.Tensor
	pred, loss []float64
	perm       []int
	// buf and cnt are the scratch of the Strata length rule (stratify).
	buf, cnt []int
	// pcg and rng are the workspace's generator, reseeded per draw with
	// tempora.SeedPCG so that no draw allocates one.
	pcg *rand.PCG
	rng *rand.Rand
	// dirty is the test whose block x holds perturbed, or nil when x equals
	// the data. A draw of the same block overwrites all of it, so the block
	// is restored only when the next draw perturbs a different block.
	dirty *plan
	// deferred makes draw perturb x and return without evaluating it: the
	// resident path (resident.go) sends the block and evaluates later.
	deferred bool
}

// clean restores the dirty block, if any.
func (ws *workspace) clean(src *tempora.Tensor) {
	if ws.dirty != nil {
		tempora.RestoreBlock(ws.x, src, ws.dirty.Features, ws.dirty.Window.Start, ws.dirty.Window.End)
		ws.dirty = nil
	}
}

// chunkRows returns the number of instances per model call of a draw: M
// when every worker's copy of the data fits the memory budget (or the data
// has at most chunkValues values), else as many as chunkValues values
// hold.
func (e *Engine) chunkRows() int { return chunkRows(e.data.X, e.workers, e.budget) }

// chunkRows returns the instances per model call of a draw of data x with
// the given workers and budget (0 or less: memlimit.CopyBudget, a quarter
// of the process's memory limit), by memlimit.ChunkRows.
func chunkRows(x *tempora.Tensor, workers int, budget int64) int {
	return memlimit.ChunkRows(x.M, x.D*x.L, workers, budget, chunkValues)
}

// SetMemoryBudget sets the bytes the workers' working copies may use
// (0: the default, a quarter of the process's memory limit). A worker copies the whole data when
// every worker's copy fits; otherwise it copies one chunk of instances at
// a time and a draw makes one model call per chunk. Results are the same
// either way. It must be called before Run.
func (e *Engine) SetMemoryBudget(bytes int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.budget = max(0, bytes)
}

func (e *Engine) newWorkspace(withCopy bool) *workspace {
	x := e.data.X
	ws := &workspace{pred: make([]float64, x.M), loss: make([]float64, x.M), perm: make([]int, max(x.M, x.L)), pcg: new(rand.PCG)}
	ws.rng = rand.New(ws.pcg)
	if e.masked && e.rule == Strata {
		ws.buf, ws.cnt = make([]int, x.M), make([]int, x.M)
	}
	switch rows := e.chunkRows(); {
	case !withCopy:
	case rows == x.M:
		ws.x = x.Clone()
	default:
		ws.x = tempora.NewTensor(rows, x.D, x.L)
	}
	return ws
}

// predict predicts x into dst, counting the call.
func (e *Engine) predict(dst []float64, x *tempora.Tensor, first int) error {
	e.calls.Add(1)
	e.evals.Add(int64(x.M))
	if err := e.model.Predict(dst, x); err != nil {
		// x's rows are the data's instances first, first+1, …: a
		// prediction error names its instance (docs/errors.md).
		return e.modelError(tempora.LocatePrediction(err, first))
	}
	return nil
}

// modelError wraps a failure of the model, with the reminder that tempora
// never imputes when the data has missing values (a model that fails on
// NaN is the likely cause).
func (e *Engine) modelError(err error) error {
	if e.masked && !e.obs.Complete() {
		return fmt.Errorf("explain: model: %w (the data has missing values: %s)", err, neverImputes)
	}
	return fmt.Errorf("explain: model: %w", err)
}

// predictionError is the error of prediction p of instance i of the data
// (the predictions evaluate checks are the data's instances in order): a
// *tempora.DataError locating the instance, for the callers that map it to
// their own ids (docs/errors.md).
func predictionError(i int, p float64, format string, args ...any) error {
	de := tempora.NewDataError(tempora.KindPrediction, fmt.Errorf(format, args...)).At(i, -1, -1).WithValue(p)
	de.Row = i
	return de
}

// evaluate predicts x into ws.pred (or, with x nil, takes the predictions
// already in ws.pred), computes the losses into ws.loss and returns their
// mean, summed in instance order.
func (e *Engine) evaluate(ws *workspace, x *tempora.Tensor) (float64, error) {
	if x != nil {
		nan := math.NaN()
		for i := range ws.pred {
			ws.pred[i] = nan
		}
		if err := e.predict(ws.pred, x, 0); err != nil {
			return 0, err
		}
	}
	for i, p := range ws.pred {
		switch {
		case math.IsNaN(p) && e.masked && !e.obs.Complete():
			return 0, predictionError(i, p, "explain: model predicted NaN for instance %d (a NaN may mean the prediction was not written; the data has missing values: %s)", i, neverImputes)
		case math.IsNaN(p):
			return 0, predictionError(i, p, "explain: model predicted NaN for instance %d (a NaN may mean the prediction was not written)", i)
		case math.IsInf(p, 0):
			return 0, predictionError(i, p, "explain: model predicted %v for instance %d", p, i)
		}
	}
	e.loss(ws.loss, e.data.Y, ws.pred)
	var sum float64
	for _, l := range ws.loss {
		sum += l
	}
	mean := sum / float64(len(ws.loss))
	if math.IsNaN(mean) || math.IsInf(mean, 0) {
		return 0, fmt.Errorf("explain: mean loss is %v", mean)
	}
	return mean, nil
}

// draw applies draw d of test p to the worker's copy of the data (restoring
// the block of a previous test first), evaluates the model and returns the
// mean loss. The block stays perturbed until ws.clean.
func (e *Engine) draw(ws *workspace, p *plan, d int) (float64, error) {
	perm := e.permutation(ws, p, d)
	src := e.data.X
	if ws.x.M < src.M {
		return e.drawChunked(ws, p, perm)
	}
	if ws.dirty != p {
		ws.clean(src)
	}
	start, end := p.Window.Start, p.Window.End
	switch {
	case e.masked && p.Kind == WithinWindow:
		for i := range src.M {
			e.permuteRow(ws.x.Data, i, i, p, perm)
		}
	case e.masked && e.rule != Donor:
		tempora.PermuteInstancesWithin(ws.x, src, p.Features, start, end, perm, e.obs.Support)
	case p.Kind == AcrossInstances:
		tempora.PermuteInstances(ws.x, src, p.Features, start, end, perm)
	case p.Kind == WithinWindow:
		tempora.PermuteTimesteps(ws.x, src, p.Features, start, end, perm)
	case p.Kind == Conditional:
		permuteConditional(ws.x, src, 0, p, perm)
	}
	ws.dirty = p
	if ws.deferred {
		return 0, nil
	}
	return e.evaluate(ws, ws.x)
}

// permutation returns draw d's permutation of test p, in ws.perm: of the
// instances for an across-instance test, of the window's timesteps for a
// within-window test. It depends on the run seed, the test's key and d
// alone, never on the worker.
func (e *Engine) permutation(ws *workspace, p *plan, d int) []int {
	perm := ws.perm[:p.n]
	if p.exact {
		// Rank 0 is the identity; draw d uses rank d+1.
		unrank(perm, d+1)
	} else {
		for i := range perm {
			perm[i] = i
		}
		tempora.SeedPCG(ws.pcg, e.seed, p.Key, strconv.Itoa(d))
		ws.rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
	}
	if p.strata != nil {
		p.strata.stratify(perm, ws.buf, ws.cnt)
	}
	return perm
}

// drawBlock writes draw d of test p straight into vals, in the layout of
// a tempora.Block over all instances, when the draw is a plain permutation
// of complete data (across instances or within the window), and reports
// whether it did; other draws (missing values, conditional) are drawn on
// the working copy and gathered from it.
func (e *Engine) drawBlock(vals []float64, ws *workspace, p *plan, d int) bool {
	if e.masked || (p.Kind != AcrossInstances && p.Kind != WithinWindow) {
		return false
	}
	perm := e.permutation(ws, p, d)
	if p.Kind == AcrossInstances {
		tempora.PermuteInstancesBlock(vals, e.data.X, p.Features, p.Window.Start, p.Window.End, perm)
	} else {
		tempora.PermuteTimestepsBlock(vals, e.data.X, p.Features, p.Window.Start, p.Window.End, perm)
	}
	return true
}

// drawChunked evaluates a draw of test p with permutation perm chunk by
// chunk: each chunk of instances is copied from the data into the working
// copy, its block is perturbed as PermuteInstances or PermuteTimesteps
// would perturb it in a full copy, and it is predicted.
func (e *Engine) drawChunked(ws *workspace, p *plan, perm []int) (float64, error) {
	src := e.data.X
	d, l := src.D, src.L
	start, end := p.Window.Start, p.Window.End
	nan := math.NaN()
	for i := range ws.pred {
		ws.pred[i] = nan
	}
	for i0 := 0; i0 < src.M; i0 += ws.x.M {
		i1 := min(i0+ws.x.M, src.M)
		chunk := &tempora.Tensor{M: i1 - i0, D: d, L: l, Data: ws.x.Data[:(i1-i0)*d*l]}
		copy(chunk.Data, src.Data[i0*d*l:i1*d*l])
		for r := 0; r < chunk.M && e.masked; r++ {
			e.permuteRow(chunk.Data, r, i0+r, p, perm)
		}
		for r := 0; r < chunk.M && p.Kind != Conditional && !e.masked; r++ {
			i := i0 + r
			for _, j := range p.Features {
				dst := chunk.Data[(r*d+j)*l+start : (r*d+j)*l+end+1]
				switch p.Kind {
				case AcrossInstances:
					copy(dst, src.Data[(perm[i]*d+j)*l+start:])
				case WithinWindow:
					s := src.Data[(i*d+j)*l+start:]
					for k, o := range perm {
						dst[k] = s[o]
					}
				}
			}
		}
		if p.Kind == Conditional {
			permuteConditional(chunk, src, i0, p, perm)
		}
		if err := e.predict(ws.pred[i0:i1], chunk, i0); err != nil {
			return 0, err
		}
	}
	return e.evaluate(ws, nil)
}
