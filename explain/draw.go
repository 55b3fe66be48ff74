package explain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/tempora-dev/tempora"
)

// chunkValues bounds the values of a worker's working copy: a dataset of
// more than chunkValues values (16 MiB of float64; 1000 × 100 × 20 still
// fits) is predicted in chunks of whole instances, one model call per
// chunk, so that a worker holds one chunk instead of a copy of the whole
// data. A variable so that tests can force chunking.
var chunkValues = 1 << 21

// workspace is one worker's private state: a copy of the data (or of one
// chunk of instances) and the buffers of a draw.
type workspace struct {
	x          *tempora.Tensor
	pred, loss []float64
	perm       []int
	// pcg and rng are the workspace's generator, reseeded per draw with
	// tempora.SeedPCG so that no draw allocates one.
	pcg *rand.PCG
	rng *rand.Rand
	// dirty is the test whose block x holds perturbed, or nil when x equals
	// the data. A draw of the same block overwrites all of it, so the block
	// is restored only when the next draw perturbs a different block.
	dirty *plan
}

// clean restores the dirty block, if any.
func (ws *workspace) clean(src *tempora.Tensor) {
	if ws.dirty != nil {
		tempora.RestoreBlock(ws.x, src, ws.dirty.Features, ws.dirty.Window.Start, ws.dirty.Window.End)
		ws.dirty = nil
	}
}

// chunkRows returns the number of instances per model call of a draw: M,
// or fewer when the data has more than chunkValues values.
func (e *Engine) chunkRows() int {
	x := e.data.X
	if x.M*x.D*x.L <= chunkValues {
		return x.M
	}
	return max(1, chunkValues/(x.D*x.L))
}

func (e *Engine) newWorkspace(withCopy bool) *workspace {
	x := e.data.X
	ws := &workspace{pred: make([]float64, x.M), loss: make([]float64, x.M), perm: make([]int, max(x.M, x.L)), pcg: new(rand.PCG)}
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
func (e *Engine) predict(dst []float64, x *tempora.Tensor) error {
	e.calls.Add(1)
	e.evals.Add(int64(x.M))
	if err := e.model.Predict(dst, x); err != nil {
		return fmt.Errorf("explain: model: %w", err)
	}
	return nil
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
		if err := e.predict(ws.pred, x); err != nil {
			return 0, err
		}
	}
	for i, p := range ws.pred {
		switch {
		case math.IsNaN(p):
			return 0, fmt.Errorf("explain: model predicted NaN for instance %d (a NaN may mean the prediction was not written)", i)
		case math.IsInf(p, 0):
			return 0, fmt.Errorf("explain: model predicted %v for instance %d", p, i)
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
	src := e.data.X
	if ws.x.M < src.M {
		return e.drawChunked(ws, p, perm)
	}
	if ws.dirty != p {
		ws.clean(src)
	}
	start, end := p.Window.Start, p.Window.End
	switch p.Kind {
	case AcrossInstances:
		tempora.PermuteInstances(ws.x, src, p.Features, start, end, perm)
	case WithinWindow:
		tempora.PermuteTimesteps(ws.x, src, p.Features, start, end, perm)
	case Conditional:
		permuteConditional(ws.x, src, 0, p, perm)
	}
	ws.dirty = p
	return e.evaluate(ws, ws.x)
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
		for r := range chunk.M {
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
		if err := e.predict(ws.pred[i0:i1], chunk); err != nil {
			return 0, err
		}
	}
	return e.evaluate(ws, nil)
}
