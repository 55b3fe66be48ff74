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
	x *tempora.Tensor
	// pred holds M·K predictions, loss M·K losses (Scorer.Mean's
	// scratch) and stats the mean losses of the last evaluation (the
	// whole model's, then each output's).
	pred, loss, stats []float64
	perm              []int
	// ints are scratch of the drawers' arrange (scratch).
	ints [2][]int
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

// scratch returns two slices of n ints, kept between draws.
func (ws *workspace) scratch(n int) ([]int, []int) {
	for k := range ws.ints {
		if cap(ws.ints[k]) < n {
			ws.ints[k] = make([]int, n)
		}
	}
	return ws.ints[0][:n], ws.ints[1][:n]
}

// clean restores the dirty block, if any.
func (ws *workspace) clean(src *tempora.Tensor) {
	if ws.dirty != nil {
		tempora.RestoreBlock(ws.x, src, ws.dirty.Features, ws.dirty.Window.Start, ws.dirty.Window.End)
		ws.dirty = nil
	}
}

// chunkRows returns the number of instances per model call of a draw on
// the native path: M when every worker's copy of the data fits the memory
// budget (or the data has at most chunkValues values), else as many as
// chunkValues values hold; at most the batch size (SetBatch, batch.go).
func (e *Engine) chunkRows() int { return capRows(e.memoryRows(), e.batchRows) }

// memoryRows is chunkRows by the memory budget alone: M when every
// worker holds a copy of the whole data.
func (e *Engine) memoryRows() int { return chunkRows(e.data.X, e.workers, e.budget) }

// chunkRows returns the instances per model call of a draw of data x with
// the given workers and budget (0 or less: memlimit.CopyBudget, the
// smaller of 256 MiB and a quarter of the process's memory limit), by memlimit.ChunkRows.
func chunkRows(x *tempora.Tensor, workers int, budget int64) int {
	return memlimit.ChunkRows(x.M, x.D*x.L, workers, budget, chunkValues)
}

// SetMemoryBudget sets the bytes the workers' working copies may use
// (0: the default, memlimit.CopyBudget). A worker copies the whole data when
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
	n := x.M * e.data.K()
	ws := &workspace{pred: make([]float64, n), loss: make([]float64, n), stats: make([]float64, e.scorer.Means()), perm: make([]int, max(x.M, x.L)), pcg: new(rand.PCG)}
	ws.rng = rand.New(ws.pcg)
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
	if err := e.spend(1, int64(x.M)); err != nil {
		return err
	}
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

// evaluate predicts x into ws.pred (in calls of at most the batch size,
// SetBatch; or, with x nil, takes the predictions already in ws.pred: K
// per instance), computes the mean losses into
// ws.stats (the whole model's first, then each output's; Scorer.Mean) and
// returns the whole model's.
func (e *Engine) evaluate(ws *workspace, x *tempora.Tensor) (float64, error) {
	if x != nil {
		nan := math.NaN()
		for i := range ws.pred {
			ws.pred[i] = nan
		}
		if err := e.predictRows(ws.pred, x, capRows(x.M, e.batchRows)); err != nil {
			return 0, err
		}
	}
	if err := e.checkFinite(ws.pred); err != nil {
		return 0, err
	}
	e.scorer.Mean(ws.stats, ws.pred, ws.loss)
	for _, mean := range ws.stats {
		if math.IsNaN(mean) || math.IsInf(mean, 0) {
			return 0, fmt.Errorf("explain: mean loss is %v", mean)
		}
	}
	return ws.stats[0], nil
}

// checkFinite returns an error naming the first prediction that is NaN or
// infinite (its instance, and its output when the model has several).
func (e *Engine) checkFinite(pred []float64) error {
	k := e.data.K()
	for n, p := range pred {
		if !math.IsNaN(p) && !math.IsInf(p, 0) {
			continue
		}
		where := fmt.Sprintf("instance %d", n/k)
		if k > 1 {
			where += ", output " + e.data.Outputs.Name(n%k)
		}
		i := n / k
		switch {
		case math.IsNaN(p) && e.masked && !e.obs.Complete():
			return predictionError(i, p, "explain: model predicted NaN for %s (a NaN may mean the prediction was not written; the data has missing values: %s)", where, neverImputes)
		case math.IsNaN(p):
			return predictionError(i, p, "explain: model predicted NaN for %s (a NaN may mean the prediction was not written)", where)
		}
		return predictionError(i, p, "explain: model predicted %v for %s", p, where)
	}
	return nil
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
	p.drawer.rows(ws.x, 0, perm)
	ws.dirty = p
	if ws.deferred {
		return 0, nil
	}
	return e.evaluate(ws, ws.x)
}

// permutation returns draw d's permutation of test p: the uniform
// permutation of its drawer's elements (instances or the window's
// timesteps), in ws.perm, as its drawer arranges it. It depends on the run
// seed, the test's key and d alone, never on the worker.
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
	return p.drawer.arrange(perm, ws)
}

// drawBlock writes draw d of test p straight into vals, in the layout of
// a resident.Block over all instances, when its drawer can, and
// reports whether it did; other draws are drawn on the working copy and
// gathered from it.
func (e *Engine) drawBlock(vals []float64, ws *workspace, p *plan, d int) bool {
	bd, ok := p.drawer.(blockDrawer)
	if !ok {
		return false
	}
	bd.block(vals, e.permutation(ws, p, d))
	return true
}

// drawChunked evaluates a draw of test p with permutation perm chunk by
// chunk: each chunk of instances is copied from the data into the working
// copy, its rows are perturbed as the draw perturbs them in a full copy,
// and it is predicted.
func (e *Engine) drawChunked(ws *workspace, p *plan, perm []int) (float64, error) {
	src := e.data.X
	n := src.D * src.L
	nan := math.NaN()
	for i := range ws.pred {
		ws.pred[i] = nan
	}
	for i0 := 0; i0 < src.M; i0 += ws.x.M {
		i1 := min(i0+ws.x.M, src.M)
		chunk := &tempora.Tensor{M: i1 - i0, D: src.D, L: src.L, Data: ws.x.Data[:(i1-i0)*n]}
		copy(chunk.Data, src.Data[i0*n:i1*n])
		p.drawer.rows(chunk, i0, perm)
		k := e.data.K()
		if err := e.predict(ws.pred[i0*k:i1*k], chunk, i0); err != nil {
			return 0, err
		}
	}
	return e.evaluate(ws, nil)
}
