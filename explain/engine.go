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

	"gonum.org/v1/gonum/stat/distuv"

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
// perturbed by Kind, up to Permutations times, and each perturbed copy of
// the data is predicted and scored. Stop decides whether the test may end
// before its last draw.
//
// Key names the test's random stream: draw d uses the generator
// tempora.NewRand(seed, Key, strconv.Itoa(d)), where seed is the Engine's
// seed. Tests with the same key, block and kind therefore give identical
// draws; give every distinct test a distinct key. Draw d is the same in a
// test that stops early and in one that runs to the end, so a sequential
// test sees a prefix of the draws of the fixed test with the same key.
//
// When the permutation group of the block is small, namely n! − 1 ≤
// Permutations for n elements permuted (the window length for WithinWindow,
// the number of instances for AcrossInstances), the test is exact: it uses
// every non-identity permutation exactly once, in lexicographic order, so it
// makes n! − 1 draws and its smallest p-value is 1/n!. An exact test never
// stops early: its draws are not a random sample, so no prefix of them is a
// valid test.
type Test struct {
	// Features lists the features permuted jointly; it must be non-empty,
	// in range and free of repeats.
	Features []int
	// Window is the block's timestep range.
	Window tempora.Window
	// Kind is the perturbation.
	Kind Perturbation
	// Permutations is the largest number of draws, at least 1: the number
	// of draws of a test that does not stop early (P_max).
	Permutations int
	// Key names the random stream.
	Key string
	// Stop is the stopping rule; its zero value never stops early, so the
	// test makes exactly Permutations draws (a fixed-P test).
	Stop Stop
}

// Stop is a sequential stopping rule. The zero value never stops a test
// early. At most one of Hits and Probe may be set.
//
// Stopping is decided in draw order: draws are evaluated in batches for
// throughput, but a test that stops at draw k uses draws 0..k−1 only, and
// the batches depend on the test's own draws alone, never on the number of
// workers. A batch may evaluate a few draws past the stopping point; they
// are counted in TestResult.Evaluated (and in the Engine's accounting) but
// never used.
type Stop struct {
	// Hits, when positive, is h of the sequential Monte Carlo p-value of
	// Besag and Clifford (1991): the test stops at the first draw k at
	// which h draws have been not worse than the baseline (a "hit": mean
	// perturbed loss ≤ baseline mean loss + 1e−10), and its p-value is
	// h/k. A test that reaches Permutations draws with fewer hits has the
	// usual p-value (1 + hits)/(1 + Permutations). Under the null
	// hypothesis both are valid p-values: P(p ≤ u) ≤ u at every u.
	Hits int
	// Probe selects a score-only rule for a test that only compares its
	// score with Threshold (TIME's window search): after at least MinDraws
	// draws, the test stops once the interval score ± Z·SE (SE the
	// standard error of the mean of the draws) lies within [−Threshold,
	// Threshold] or entirely outside it, so that the comparison
	// |score| ≤ Threshold is settled. A probe's PValue is NaN: a stopping
	// rule that looks at the score does not give a valid p-value.
	Probe bool
	// Threshold is the probe's threshold, at least 0.
	Threshold float64
	// MinDraws is the probe's smallest number of draws; 0 means
	// DefaultProbeMinDraws.
	MinDraws int
	// Z is the half-width of the probe's interval in standard errors; 0
	// means DefaultProbeZ.
	Z float64
}

// Defaults of the probe stopping rule.
const (
	// DefaultProbeMinDraws is the smallest number of draws of a probe, the
	// fewest that estimate a standard deviation.
	DefaultProbeMinDraws = 2
	// DefaultProbeZ sets the coverage of a probe's interval to that of ±2
	// standard errors of a normal mean, 95.45%.
	DefaultProbeZ = 2.0
)

// TestResult is the outcome of a Test.
type TestResult struct {
	// Score is the mean perturbed loss minus the mean baseline loss,
	// averaged over the draws used (0 when Draws is 0).
	Score float64
	// SE is the standard error of Score: the sample standard deviation of
	// the draws' differences divided by √Draws (0 with fewer than 2
	// draws).
	SE float64
	// PValue is the empirical p-value
	//  (1 + #{draws whose mean loss ≤ baseline mean loss + 1e−10}) / (1 + Draws),
	// which is 1 when Draws is 0, or Hits/Draws for a test stopped by its
	// Hits rule; NaN for a probe.
	PValue float64
	// Draws is the number of draws used: Permutations, or n! − 1 for an
	// exact test, or fewer for a test that stopped early.
	Draws int
	// Evaluated is the number of draws evaluated (model calls), at least
	// Draws: a batch may run past the stopping point.
	Evaluated int
	// Max is the number of draws the test makes when it does not stop
	// early: Permutations, or n! − 1 for an exact test.
	Max int
	// Stopped reports that the stopping rule ended the test before Max
	// draws.
	Stopped bool
}

// tieTol is the slack of the empirical p-value: a draw whose mean loss
// exceeds the baseline by no more than this counts as "not worse", so
// perturbations that leave the predictions unchanged give p = 1 despite
// rounding.
const tieTol = 1e-10

// maxBatch is the largest number of draws of one test evaluated in one
// batch. It bounds the memory of Run independently of Permutations.
const maxBatch = 256

// chunkValues bounds the values of a worker's working copy: a dataset of
// more than chunkValues values (16 MiB of float64; 1000 × 100 × 20 still
// fits) is predicted in chunks of whole instances, one model call per
// chunk, so that a worker holds one chunk instead of a copy of the whole
// data. A variable so that tests can force chunking.
var chunkValues = 1 << 21

// Engine runs permutation tests of a model on a dataset. It holds the
// baseline predictions and losses, and one working copy per worker. When
// the data has at most 2²¹ values (16 MiB) the working copy is a copy of
// the data, in which each draw rewrites only the permuted block (a block is
// restored from the data before a different one is perturbed, and at the
// end of every batch), and each draw evaluates the model once on all M
// instances. Larger data is evaluated in chunks of whole instances of at
// most 2²¹ values: the working copy holds one chunk, each draw copies the
// chunk's instances, perturbs their block and predicts them, one model call
// per chunk. Memory is then the data plus 16 MiB per worker instead of one
// copy of the data per worker; the predictions, and therefore the results,
// are the same for a model that predicts each instance on its own (as
// tempora.Model requires).
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

// plan is a validated test with its draw count.
type plan struct {
	Test
	n     int  // number of elements permuted
	draws int  // the most draws
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
	s := t.Stop
	switch {
	case s.Hits < 0:
		return plan{}, fmt.Errorf("explain: test %d (%q) stops after %d hits, need at least 0", i, t.Key, s.Hits)
	case s.Hits > 0 && s.Probe:
		return plan{}, fmt.Errorf("explain: test %d (%q) sets both a hit count and a probe rule", i, t.Key)
	case s.Probe && !(s.Threshold >= 0 && !math.IsInf(s.Threshold, 1)):
		return plan{}, fmt.Errorf("explain: test %d (%q) has probe threshold %v, need a finite value ≥ 0", i, t.Key, s.Threshold)
	case s.MinDraws < 0:
		return plan{}, fmt.Errorf("explain: test %d (%q) has probe minimum %d draws, need at least 0", i, t.Key, s.MinDraws)
	case !(s.Z >= 0 && !math.IsInf(s.Z, 1)):
		return plan{}, fmt.Errorf("explain: test %d (%q) has probe z %v, need a finite value ≥ 0", i, t.Key, s.Z)
	}
	if s.Probe {
		if t.Stop.MinDraws == 0 {
			t.Stop.MinDraws = DefaultProbeMinDraws
		}
		if t.Stop.Z == 0 {
			t.Stop.Z = DefaultProbeZ
		}
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
	if f, ok := exactDraws(p.n, t.Permutations); ok {
		p.exact, p.draws = true, f
	}
	return p, nil
}

// run is the state of one test during Run.
type run struct {
	*plan
	used    int     // draws used, in draw order
	issued  int     // draws evaluated (≥ used)
	hits    int     // draws not worse than the baseline
	sum     float64 // Σ differences, in draw order
	mean    float64 // running mean of the differences (Welford)
	m2      float64 // Σ squared deviations (Welford)
	done    bool
	stopped bool
	lo, hi  int // the test's items in the current batch
}

// next returns the number of draws of the test's next batch: what its
// stopping rule can need, computed from the test's own draws so far, never
// from the number of workers.
func (r *run) next() int {
	rem := r.draws - r.issued
	c := rem
	s := r.Stop
	switch {
	case r.exact:
	case s.Hits > 0:
		// At least the missing hits are needed; at the observed hit rate,
		// about need·k/hits draws; the batch at most doubles the draws.
		need := s.Hits - r.hits
		est := max(r.issued, need)
		if r.hits > 0 {
			est = (need*r.issued + r.hits - 1) / r.hits
		}
		c = min(max(est, need), max(r.issued, need))
	case s.Probe:
		if r.issued < s.MinDraws {
			c = s.MinDraws - r.issued
			break
		}
		// The draws at which the interval would shrink to the distance
		// between |score| and the threshold, at most doubling.
		c = r.issued
		if gap := math.Abs(math.Abs(r.mean) - s.Threshold); gap > 0 && r.used > 1 {
			sd := math.Sqrt(r.m2 / float64(r.used-1))
			need := math.Ceil(math.Pow(tQuantile(s.Z, r.used-1)*sd/gap, 2))
			if need < float64(2*r.issued) {
				c = max(1, int(need)-r.issued)
			}
		}
	}
	return min(c, rem, maxBatch)
}

// add uses the test's next draw, whose mean loss is m, and applies the
// stopping rule.
func (r *run) add(m, base float64) {
	diff := m - base
	r.used++
	r.sum += diff
	delta := diff - r.mean
	r.mean += delta / float64(r.used)
	r.m2 += delta * (diff - r.mean)
	if m <= base+tieTol {
		r.hits++
	}
	if r.used == r.draws {
		r.done = true
		return
	}
	if r.exact {
		return
	}
	s := r.Stop
	switch {
	case s.Hits > 0:
		r.stopped = r.hits >= s.Hits
	case s.Probe && r.used >= s.MinDraws:
		half := 0.0
		if r.used > 1 {
			half = tQuantile(s.Z, r.used-1) * math.Sqrt(r.m2/float64(r.used-1)/float64(r.used))
		}
		lo, hi := r.mean-half, r.mean+half
		inside := lo >= -s.Threshold && hi <= s.Threshold
		outside := lo > s.Threshold || hi < -s.Threshold
		r.stopped = inside || outside
	}
	r.done = r.stopped
}

// tQuantile returns the quantile of Student's t law with df degrees of
// freedom at the probability Φ(z) of the standard normal law: the
// half-width, in standard errors, of the interval whose coverage is that of
// ±z standard errors for normal data (99.73% for z = 3).
func tQuantile(z float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(distuv.UnitNormal.CDF(z))
}

// result summarises the draws used.
func (r *run) result() TestResult {
	res := TestResult{Draws: r.used, Evaluated: r.issued, Max: r.draws, Stopped: r.stopped, PValue: 1}
	if r.used > 0 {
		// Summing the differences (not the means) makes the score exactly
		// 0 when no draw changes the loss.
		res.Score = r.sum / float64(r.used)
		res.PValue = float64(1+r.hits) / float64(1+r.used)
	}
	if r.used > 1 {
		res.SE = math.Sqrt(r.m2 / float64(r.used-1) / float64(r.used))
	}
	switch {
	case r.Stop.Probe:
		res.PValue = math.NaN()
	case r.stopped:
		res.PValue = float64(r.hits) / float64(r.used)
	}
	return res
}

// item is one draw of one test in a batch.
type item struct {
	test, draw int
}

// Run runs independent tests and returns their results in input order.
// It proceeds in batches: each batch evaluates the next draws of every
// test that has not stopped (as many as its stopping rule may need, at
// most 256), spread over the workers; then each test takes its draws in
// draw order and applies its stopping rule. Each draw's permutation comes
// from its own stream (or, for exact tests, from its rank), the batches
// depend only on the tests' own draws, and sums are taken in draw order, so
// the results and the accounting are identical for any number of workers.
// Memory does not grow with Permutations.
//
// Run returns an error for an invalid test, a failing model, a non-finite
// prediction or loss, or when ctx is cancelled.
func (e *Engine) Run(ctx context.Context, tests []Test) ([]TestResult, error) {
	plans := make([]plan, len(tests))
	runs := make([]run, len(tests))
	for i, t := range tests {
		p, err := e.plan(i, t)
		if err != nil {
			return nil, err
		}
		plans[i] = p
		runs[i].plan = &plans[i]
		runs[i].done = p.draws == 0
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	var (
		items []item
		means []float64
	)
	for {
		items = items[:0]
		for i := range runs {
			r := &runs[i]
			if r.done {
				continue
			}
			r.lo = len(items)
			for d, c := r.issued, r.next(); d < r.issued+c; d++ {
				items = append(items, item{test: i, draw: d})
			}
			r.hi = len(items)
		}
		if len(items) == 0 {
			break
		}
		if cap(means) < len(items) {
			means = make([]float64, len(items))
		}
		means = means[:len(items)]
		if err := e.batch(ctx, runs, items, means); err != nil {
			return nil, err
		}
		for i := range runs {
			r := &runs[i]
			if r.done || r.hi == r.lo {
				continue
			}
			r.issued += r.hi - r.lo
			for _, m := range means[r.lo:r.hi] {
				r.add(m, e.baseMean)
				if r.done {
					break
				}
			}
			r.lo, r.hi = 0, 0
		}
	}

	res := make([]TestResult, len(tests))
	for i := range runs {
		res[i] = runs[i].result()
	}
	return res, nil
}

// batch evaluates the items' draws on the workers, writing each draw's mean
// loss into means.
func (e *Engine) batch(ctx context.Context, runs []run, items []item, means []float64) error {
	total := len(items)
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
	fail := func(k int, err error) {
		errMu.Lock()
		if k < errItem {
			errItem, firstErr = k, err
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
				k := int(next.Add(1) - 1)
				if k >= total || failed() {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(k, fmt.Errorf("explain: %w", err))
					return
				}
				it := items[k]
				p := runs[it.test].plan
				m, err := e.draw(ws, p, it.draw)
				if err != nil {
					fail(k, fmt.Errorf("%w (test %q, draw %d)", err, p.Key, it.draw))
					return
				}
				means[k] = m
			}
		})
	}
	wg.Wait()
	return firstErr
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
		if err := e.predict(ws.pred[i0:i1], chunk); err != nil {
			return 0, err
		}
	}
	return e.evaluate(ws, nil)
}

// exactDraws returns n! − 1 and true if n! − 1 ≤ limit, or 0 and false
// otherwise. It does not overflow for any limit.
func exactDraws(n, limit int) (int, bool) {
	if limit == math.MaxInt {
		limit-- // n! ≤ MaxInt is then still decided exactly below
	}
	f, ok := factorial(n, limit+1)
	if !ok {
		return 0, false
	}
	return f - 1, true
}

// factorial returns n! and true if n! ≤ limit, or 0 and false otherwise.
// It never overflows.
func factorial(n, limit int) (int, bool) {
	f := 1
	for k := 2; k <= n; k++ {
		if f > limit/k {
			return 0, false
		}
		f *= k
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
