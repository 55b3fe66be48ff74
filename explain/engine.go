package explain

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tempora-dev/tempora"
)

// Perturbation is the kind of permutation a Test applies to its block (its
// features over its window).
type Perturbation int

const (
	// AcrossInstances replaces the block of every instance i by the block of
	// instance π(i), for one uniform random permutation π of the M instances
	// per draw, shared by every feature and timestep of the block. π may have
	// fixed points.
	AcrossInstances Perturbation = iota
	// WithinWindow reorders the timesteps of the window by one uniform random
	// permutation per draw, shared by every instance and every feature of the
	// block.
	WithinWindow
)

// String returns "across-instances" or "within-window".
func (k Perturbation) String() string {
	switch k {
	case AcrossInstances:
		return "across-instances"
	case WithinWindow:
		return "within-window"
	}
	return "Perturbation(" + strconv.Itoa(int(k)) + ")"
}

// Test is one permutation test: the block of Features over Window is
// perturbed Permutations times by Kind, and each perturbed copy of the data
// is predicted and scored.
//
// Key names the test's random stream: draw d uses the generator
// tempora.NewRand(seed, Key, strconv.Itoa(d)), where seed is the Engine's
// seed. Tests with the same key, block and kind therefore give identical
// results; give every distinct test a distinct key.
//
// When the permutation group of the block is small, namely n! − 1 ≤
// Permutations for n elements permuted (the window length for WithinWindow,
// the number of instances for AcrossInstances), the test is exact: it uses
// every non-identity permutation exactly once, in lexicographic order, so it
// makes n! − 1 draws and its smallest p-value is 1/n!.
type Test struct {
	// Features lists the features permuted jointly; it must be non-empty,
	// in range and free of repeats.
	Features []int
	// Window is the block's timestep range.
	Window tempora.Window
	// Kind is the perturbation.
	Kind Perturbation
	// Permutations is the number of draws, at least 1.
	Permutations int
	// Key names the random stream.
	Key string
}

// TestResult is the outcome of a Test.
type TestResult struct {
	// Score is the mean perturbed loss minus the mean baseline loss,
	// averaged over the draws (0 when Draws is 0).
	Score float64
	// PValue is the empirical p-value
	//  (1 + #{draws whose mean loss ≤ baseline mean loss + 1e−10}) / (1 + Draws),
	// which is 1 when Draws is 0.
	PValue float64
	// Draws is the number of permutations used: Permutations, or n! − 1
	// for an exact test.
	Draws int
}

// tieTol is the slack of the empirical p-value: a draw whose mean loss
// exceeds the baseline by no more than this counts as "not worse", so
// perturbations that leave the predictions unchanged give p = 1 despite
// rounding.
const tieTol = 1e-10

// Engine runs permutation tests of a model on a dataset. It holds the
// baseline predictions and losses, and one working copy of the data per
// worker, in which each draw rewrites only the permuted block (a block is
// restored from the data before a different one is perturbed, and at the
// end of every Run). Each draw evaluates the model once on all M instances.
//
// An Engine's methods may be called from several goroutines; concurrent
// calls of Run are serialised.
type Engine struct {
	model   tempora.Model
	data    *tempora.Dataset
	loss    tempora.Loss
	seed    uint64
	workers int

	baseMean float64

	calls, evals atomic.Int64

	mu     sync.Mutex // serialises Run and guards spaces
	spaces []*workspace
}

// workspace is one worker's private state: a copy of the data and the
// buffers of a draw.
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

// NewEngine validates the model's inputs, predicts the data once and
// computes the baseline loss. A nil loss means tempora.LossFor(data.Task);
// workers = 0 means runtime.GOMAXPROCS(0). The data must not be modified
// while the Engine is in use.
//
// It returns an error for a nil model, invalid data (see
// tempora.Dataset.Validate; at least 2 instances are needed), a negative
// worker count, or a model that fails, predicts a non-finite value, or (for
// classification) a value outside [0, 1].
func NewEngine(m tempora.Model, data *tempora.Dataset, loss tempora.Loss, seed uint64, workers int) (*Engine, error) {
	if m == nil {
		return nil, fmt.Errorf("explain: nil model")
	}
	if data == nil {
		return nil, fmt.Errorf("explain: nil dataset")
	}
	if err := data.Validate(2); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	if workers < 0 {
		return nil, fmt.Errorf("explain: negative worker count %d", workers)
	}
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if loss == nil {
		loss = tempora.LossFor(data.Task)
	}
	e := &Engine{model: m, data: data, loss: loss, seed: seed, workers: workers}
	ws := e.newWorkspace(false)
	mean, err := e.evaluate(ws, data.X)
	if err != nil {
		return nil, fmt.Errorf("%w (baseline)", err)
	}
	if err := tempora.CheckPredictions(data.Task, ws.pred); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	e.baseMean = mean
	return e, nil
}

// BaselineLoss returns the mean loss of the model on the unperturbed data.
func (e *Engine) BaselineLoss() float64 { return e.baseMean }

// Accounting returns the model calls and instance evaluations made so far,
// including the baseline prediction.
func (e *Engine) Accounting() tempora.Accounting {
	return tempora.Accounting{ModelCalls: e.calls.Load(), InstanceEvals: e.evals.Load()}
}

func (e *Engine) newWorkspace(withCopy bool) *workspace {
	x := e.data.X
	ws := &workspace{pred: make([]float64, x.M), loss: make([]float64, x.M), perm: make([]int, max(x.M, x.L)), pcg: new(rand.PCG)}
	ws.rng = rand.New(ws.pcg)
	if withCopy {
		ws.x = x.Clone()
	}
	return ws
}

// evaluate predicts x into ws.pred, computes the losses into ws.loss and
// returns their mean, summed in instance order.
func (e *Engine) evaluate(ws *workspace, x *tempora.Tensor) (float64, error) {
	nan := math.NaN()
	for i := range ws.pred {
		ws.pred[i] = nan
	}
	e.calls.Add(1)
	e.evals.Add(int64(x.M))
	if err := e.model.Predict(ws.pred, x); err != nil {
		return 0, fmt.Errorf("explain: model: %w", err)
	}
	for i, p := range ws.pred {
		if math.IsNaN(p) || math.IsInf(p, 0) {
			return 0, fmt.Errorf("explain: model predicted %v for instance %d (a NaN may mean the prediction was not written)", p, i)
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

// plan is a validated test with its draw count.
type plan struct {
	Test
	n     int  // number of elements permuted
	draws int  // number of draws
	exact bool // enumerate all non-identity permutations
}

func (e *Engine) plan(i int, t Test) (plan, error) {
	x := e.data.X
	if len(t.Features) == 0 {
		return plan{}, fmt.Errorf("explain: test %d (%q) permutes no features", i, t.Key)
	}
	for k, j := range t.Features {
		if j < 0 || j >= x.D {
			return plan{}, fmt.Errorf("explain: test %d (%q) permutes feature %d, data has %d features", i, t.Key, j, x.D)
		}
		for _, j2 := range t.Features[:k] {
			if j2 == j {
				return plan{}, fmt.Errorf("explain: test %d (%q) lists feature %d twice", i, t.Key, j)
			}
		}
	}
	if t.Window.Start < 0 || t.Window.End >= x.L || t.Window.Start > t.Window.End {
		return plan{}, fmt.Errorf("explain: test %d (%q) has window %v outside [0, %d]", i, t.Key, t.Window, x.L-1)
	}
	if t.Permutations < 1 {
		return plan{}, fmt.Errorf("explain: test %d (%q) has %d permutations, need at least 1", i, t.Key, t.Permutations)
	}
	p := plan{Test: t, draws: t.Permutations}
	switch t.Kind {
	case AcrossInstances:
		p.n = x.M
	case WithinWindow:
		p.n = t.Window.Len()
	default:
		return plan{}, fmt.Errorf("explain: test %d (%q) has unknown perturbation %d", i, t.Key, int(t.Kind))
	}
	if f, ok := factorial(p.n, t.Permutations+1); ok {
		p.exact, p.draws = true, f-1
	}
	return p, nil
}

// Run runs independent tests and returns their results in input order.
// Draws of all tests are spread over the workers; each draw's permutation
// comes from its own stream (or, for exact tests, from its rank), and sums
// are taken in a fixed order, so the results are identical for any number
// of workers.
//
// Run returns an error for an invalid test, a failing model, a non-finite
// prediction or loss, or when ctx is cancelled.
func (e *Engine) Run(ctx context.Context, tests []Test) ([]TestResult, error) {
	plans := make([]plan, len(tests))
	offsets := make([]int, len(tests)+1) // draw d of test i is item offsets[i]+d
	for i, t := range tests {
		p, err := e.plan(i, t)
		if err != nil {
			return nil, err
		}
		plans[i] = p
		offsets[i+1] = offsets[i] + p.draws
	}
	total := offsets[len(tests)]
	means := make([]float64, total)
	// owner[item] is the test of each item; built once so workers need no
	// search.
	owner := make([]int32, total)
	for i := range plans {
		for k := offsets[i]; k < offsets[i+1]; k++ {
			owner[k] = int32(i)
		}
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	nw := min(e.workers, total)
	for len(e.spaces) < nw {
		e.spaces = append(e.spaces, e.newWorkspace(true))
	}

	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errMu    sync.Mutex
		errItem  = total
		firstErr error
	)
	fail := func(item int, err error) {
		errMu.Lock()
		if item < errItem {
			errItem, firstErr = item, err
		}
		errMu.Unlock()
	}
	failed := func() bool {
		errMu.Lock()
		defer errMu.Unlock()
		return firstErr != nil
	}
	for w := range nw {
		wg.Go(func() {
			ws := e.spaces[w]
			defer ws.clean(e.data.X)
			for {
				item := int(next.Add(1) - 1)
				if item >= total || failed() {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(item, fmt.Errorf("explain: %w", err))
					return
				}
				ti := int(owner[item])
				m, err := e.draw(ws, &plans[ti], item-offsets[ti])
				if err != nil {
					fail(item, fmt.Errorf("%w (test %q, draw %d)", err, plans[ti].Key, item-offsets[ti]))
					return
				}
				means[item] = m
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}

	res := make([]TestResult, len(tests))
	for i, p := range plans {
		res[i] = e.summarise(means[offsets[i]:offsets[i+1]])
		res[i].Draws = p.draws
	}
	return res, nil
}

// summarise turns the draws' mean losses into a score and a p-value.
func (e *Engine) summarise(means []float64) TestResult {
	if len(means) == 0 {
		return TestResult{Score: 0, PValue: 1}
	}
	// Summing the differences (not the means) makes the score exactly 0
	// when no draw changes the loss.
	var sum float64
	notWorse := 0
	for _, m := range means {
		sum += m - e.baseMean
		if m <= e.baseMean+tieTol {
			notWorse++
		}
	}
	return TestResult{
		Score:  sum / float64(len(means)),
		PValue: float64(1+notWorse) / float64(1+len(means)),
	}
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
	if ws.dirty != p {
		ws.clean(src)
	}
	start, end := p.Window.Start, p.Window.End
	switch p.Kind {
	case AcrossInstances:
		tempora.PermuteInstances(ws.x, src, p.Features, start, end, perm)
	case WithinWindow:
		tempora.PermuteTimesteps(ws.x, src, p.Features, start, end, perm)
	}
	ws.dirty = p
	return e.evaluate(ws, ws.x)
}

// factorial returns n! and true if n! ≤ limit, or 0 and false otherwise.
func factorial(n, limit int) (int, bool) {
	f := 1
	for k := 2; k <= n; k++ {
		f *= k
		if f > limit {
			return 0, false
		}
	}
	if f > limit {
		return 0, false
	}
	return f, true
}

// unrank writes into perm the permutation of 0..len(perm)-1 of lexicographic
// rank r (rank 0 is the identity), using the factorial number system. r must
// be less than len(perm)!.
func unrank(perm []int, r int) {
	n := len(perm)
	for i := range perm {
		perm[i] = i
	}
	f := 1
	for k := 2; k < n; k++ {
		f *= k
	}
	// perm[i:] holds the unused elements in ascending order.
	for i := 0; i < n-1; i++ {
		q := r / f
		r %= f
		// Move element i+q to position i, shifting the rest right.
		v := perm[i+q]
		copy(perm[i+1:i+q+1], perm[i:i+q])
		perm[i] = v
		f /= n - 1 - i
	}
}
