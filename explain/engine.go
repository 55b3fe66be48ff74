package explain

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/pool"
)

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
	// Kind is the perturbation; nil is AcrossInstances{} (with the Strata
	// length rule).
	Kind Perturbation
	// Permutations is the largest number of draws, at least 1: the number
	// of draws of a test that does not stop early (P_max).
	Permutations int
	// Key names the random stream.
	Key string
	// Stop is the stopping rule; nil is Fixed: the test makes exactly
	// Permutations draws. A rule that stops by its family's decision
	// (Anytime) needs the test to be run in a Family (RunFamilies).
	Stop Stop
	// Output is the loss the test scores: the whole model's (WholeModel,
	// the zero value) or, for a model with several outputs, one output's
	// (OutputOf).
	Output Output
}

// An Output selects the loss a Test scores: WholeModel, the zero value,
// or the loss of one output of a model with several (OutputOf; see
// tempora.Scorer). Every draw gives every output's loss at once, so tests
// of the same block (the same Key) on different outputs share their
// draws.
type Output int

// WholeModel is the whole model's loss, the only one of a model with one
// output.
const WholeModel Output = 0

// OutputOf returns the loss of output k (0-based).
func OutputOf(k int) Output { return Output(k + 1) }

// String returns "whole model" or "output k".
func (o Output) String() string {
	if o == WholeModel {
		return "whole model"
	}
	return "output " + strconv.Itoa(int(o)-1)
}

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
	// New is the draws evaluated for this test alone: the Evaluated draws
	// that no earlier test of the same key in the run had evaluated, and
	// that no earlier run had (an Engine of a model with several outputs
	// keeps the draws of every key). A run's tests' New add up to the
	// draws it evaluated.
	New int
	// Owner reports the first test of its key in the run, the one whose
	// Max counts in a run's worst case.
	Owner bool
}

// Engine runs permutation tests of a model on a dataset. It holds the
// baseline predictions and losses, and one working copy per worker. When
// one copy of the data per worker fits the memory budget (SetMemoryBudget;
// by default the smaller of 256 MiB and a quarter of the memory limit), or the data has at most 2²¹
// values (16 MiB), the working copy is a copy of the data, in which each
// draw rewrites only the permuted block (a block is restored from the data
// before a different one is perturbed, and at the end of every batch), and
// each draw evaluates the model once on all M instances: the cost of a
// draw outside the model is that of the cells it perturbs and of the
// losses. Otherwise the data is evaluated in chunks of whole instances of
// at most 2²¹ values: the working copy holds one chunk, each draw copies
// the chunk's instances once, perturbs their block and predicts them, one
// model call per chunk. Memory is then the data plus 16 MiB per worker;
// the predictions, and therefore the results, are the same for a model
// that predicts each instance on its own (as tempora.Model requires).
//
// An Engine's methods may be called from several goroutines; concurrent
// calls of Run are serialised.
type Engine struct {
	model     tempora.Model
	data      *tempora.Dataset
	scorer    *tempora.Scorer
	seed      uint64
	workers   int
	budget    int64 // bytes of the workers' copies; 0: the default
	batchRows int   // most instances per model call; 0: none (batch.go)

	// The run's budget (budget.go): the most model calls (0: none) and
	// the deadline of the last call's start (zero: none).
	maxCalls int64
	deadline time.Time

	baseMean float64
	// basePred holds the baseline's predictions (TuneBatch checks its
	// passes against them) and baseTime the wall time of the baseline's
	// model calls.
	basePred []float64
	baseTime time.Duration
	// base holds the baseline's mean losses: the whole model's, then each
	// output's (Scorer.Mean).
	base []float64

	calls, evals atomic.Int64

	mu     sync.Mutex // serialises Run and guards spaces
	spaces []*workspace

	// The data's observation summary; masked when the data has missing
	// values (the draws then follow docs/decisions.md, decision 19), and
	// complete[i*D+j] reports that series (i, j) has no missing cell
	// (masked only).
	obs      *tempora.Observation
	masked   bool
	complete []bool

	// memos holds what perturbations compute once per Engine (the
	// conditional fits, the strata of a window), by key (memo).
	memoMu sync.Mutex
	memos  map[any]any
	// kept holds every key's draws, for a model with several outputs
	// (sources.go), guarded by mu.
	kept map[string]*kept

	res residentState // the resident path (resident.go)
}

// NewEngine validates the model's inputs, predicts the data once and
// computes the baseline loss. A nil loss means tempora.LossFor(data.Task);
// workers = 0 means runtime.GOMAXPROCS(0). The data must not be modified
// while the Engine is in use.
//
// The data may have missing values (NaN; see tempora.Dataset.Observe):
// each perturbation then draws as its documentation says (missing.go,
// docs/decisions.md, decision 19).
//
// It returns an error for a nil model, invalid data (see
// tempora.Dataset.Observe; at least 2 instances are needed), a negative
// worker count, or a model that fails, predicts a non-finite value, or (for
// classification) a value outside [0, 1]; on data with missing values the
// error of a failing model names an instance it fails on.
func NewEngine(m tempora.Model, data *tempora.Dataset, loss tempora.Loss, seed uint64, workers int) (*Engine, error) {
	if m == nil {
		return nil, fmt.Errorf("explain: nil model")
	}
	if data == nil {
		return nil, fmt.Errorf("explain: nil dataset")
	}
	obs, err := data.Observe(2)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	return newEngine(m, data, obs, loss, seed, workers, 0)
}

// newEngine is NewEngine for data already observed, whose baseline is
// predicted in calls of at most batch instances (0: one call).
func newEngine(m tempora.Model, data *tempora.Dataset, obs *tempora.Observation, loss tempora.Loss, seed uint64, workers, batch int) (*Engine, error) {
	if workers < 0 {
		return nil, fmt.Errorf("explain: negative worker count %d", workers)
	}
	workers = pool.Workers(workers)
	scorer, err := tempora.NewScorer(data, loss)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	e := &Engine{model: m, data: data, scorer: scorer, seed: seed, workers: workers, batchRows: max(0, batch)}
	e.setObservation(obs)
	ws := e.newWorkspace(false)
	before := fingerprint(data.X.Data)
	began := time.Now()
	mean, err := e.evaluate(ws, data.X)
	e.baseTime = time.Since(began)
	if err == nil && fingerprint(data.X.Data) != before {
		return nil, errWroteData()
	}
	if err != nil {
		if e.masked && !obs.Complete() {
			return nil, fmt.Errorf("%w (baseline)%s", err, e.locateFailure())
		}
		return nil, fmt.Errorf("%w (baseline)", err)
	}
	if err := data.CheckPredictions(ws.pred); err != nil {
		return nil, fmt.Errorf("explain: model: %w (baseline)", err)
	}
	e.baseMean = mean
	e.base = slices.Clone(ws.stats)
	e.basePred = slices.Clone(ws.pred)
	return e, nil
}

// BaselineLoss returns the mean loss of the model on the unperturbed data.
func (e *Engine) BaselineLoss() float64 { return e.baseMean }

// OutputLoss returns the mean loss of output o on the unperturbed data
// (WholeModel: BaselineLoss); it panics for an output the model does not
// have.
func (e *Engine) OutputLoss(o Output) float64 {
	s, err := e.stat(o)
	if err != nil {
		panic("explain: " + err.Error())
	}
	return e.base[s]
}

// Accounting returns the model calls and instance evaluations made so far,
// including the baseline prediction.
func (e *Engine) Accounting() tempora.Accounting {
	return tempora.Accounting{ModelCalls: e.calls.Load(), InstanceEvals: e.evals.Load()}
}

// memo returns the value of key, computing it with build on first use
// (an error is returned and not kept).
func (e *Engine) memo(key any, build func() (any, error)) (any, error) {
	e.memoMu.Lock()
	defer e.memoMu.Unlock()
	if v, ok := e.memos[key]; ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return nil, err
	}
	if e.memos == nil {
		e.memos = map[any]any{}
	}
	e.memos[key] = v
	return v, nil
}

// plan is a validated test with its drawer and draw count.
type plan struct {
	Test
	drawer drawer
	n      int  // number of elements permuted
	draws  int  // the most draws
	exact  bool // enumerate all non-identity permutations
}

// plan validates test i into p, which must not move afterwards (its
// drawer refers to p.Test).
func (e *Engine) plan(p *plan, i int, t Test) error {
	x := e.data.X
	if len(t.Features) == 0 {
		return fmt.Errorf("explain: test %d (%q) permutes no features", i, t.Key)
	}
	for k, j := range t.Features {
		if j < 0 || j >= x.D {
			return fmt.Errorf("explain: test %d (%q) permutes feature %d, data has %d features", i, t.Key, j, x.D)
		}
		if slices.Contains(t.Features[:k], j) {
			return fmt.Errorf("explain: test %d (%q) lists feature %d twice", i, t.Key, j)
		}
	}
	if t.Window.Start < 0 || t.Window.End >= x.L || t.Window.Start > t.Window.End {
		return fmt.Errorf("explain: test %d (%q) has window %v outside [0, %d]", i, t.Key, t.Window, x.L-1)
	}
	if t.Permutations < 1 {
		return fmt.Errorf("explain: test %d (%q) has %d permutations, need at least 1", i, t.Key, t.Permutations)
	}
	if t.Stop != nil {
		if err := t.Stop.validate(); err != nil {
			return fmt.Errorf("explain: test %d (%q) %v", i, t.Key, err)
		}
	}
	if t.Kind == nil {
		t.Kind = AcrossInstances{}
	}
	*p = plan{Test: t, draws: t.Permutations}
	d, err := t.Kind.prepare(e, &p.Test)
	if err != nil {
		return fmt.Errorf("explain: test %d (%q): %w", i, t.Key, err)
	}
	p.drawer, p.n = d, d.size()
	if f, ok := exactDraws(p.n, t.Permutations); ok {
		p.exact, p.draws = true, f
	}
	if e.masked && !e.blockObserved(t.Features, t.Window) {
		// Every permutation of a block with no observed value leaves the
		// data unchanged: no draw, score 0, p-value 1.
		p.exact, p.draws = false, 0
	}
	return nil
}

// run is the state of one test during Run: its plan, its p-value rule,
// its source of draws and its statistic in a draw's means.
type run struct {
	plan *plan
	seq  sequence
	src  *source
	stat int
}

// item is one draw of one test's block in a batch.
type item struct {
	plan *plan
	draw int
}

// Run runs independent tests and returns their results in input order.
// It proceeds in batches: each batch evaluates the next draws of every
// test that has not stopped (as many as its stopping rule may need, at
// most 256), spread over the workers; then each test takes its draws in
// draw order and applies its stopping rule. Tests of the same Key (the
// same block and perturbation, on different Outputs or with different
// caps and rules) share their draws. Each draw's permutation comes from its own stream (or, for exact
// tests, from its rank), the batches depend only on the tests' own draws,
// and sums are taken in draw order, so the results and the accounting are
// identical for any number of workers. Memory does not grow with
// Permutations.
//
// Run returns an error for an invalid test (a test whose rule needs a
// family among them: use RunFamilies; tests of one key that differ in
// their block or perturbation; an output the model does not have), a
// failing model, a non-finite prediction or loss, or when ctx is
// cancelled.
func (e *Engine) Run(ctx context.Context, tests []Test) ([]TestResult, error) {
	return e.run(ctx, tests, nil)
}

// run runs tests, the families fams (ranges of tests) settling between
// batches.
func (e *Engine) run(ctx context.Context, tests []Test, fams []familyRange) ([]TestResult, error) {
	runs, srcs, err := e.prepare(tests, fams)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.recall(srcs)
	ns := e.scorer.Means()
	var (
		items []item
		means []float64
	)
	for {
		items = schedule(srcs, runs, items[:0])
		if len(items) == 0 {
			break
		}
		means = slices.Grow(means[:0], len(items)*ns)[:len(items)*ns]
		if err := e.fill(ctx, srcs, items, means); err != nil {
			return nil, err
		}
		for i := range runs {
			r := &runs[i]
			if r.seq.done || r.src.hi == r.src.lo {
				continue
			}
			r.seq.take(means[r.src.lo*ns:r.src.hi*ns], ns, r.stat)
			if r.src.first == i {
				r.seq.fresh += r.src.fresh
			}
		}
		for _, f := range fams {
			f.settle(runs)
		}
		e.keep(srcs, items, means, ns)
	}
	res := make([]TestResult, len(tests))
	for i := range runs {
		res[i] = runs[i].seq.result()
		res[i].Owner = runs[i].src.tests[0] == i
	}
	return res, nil
}

// prepare validates the tests, makes their runs and groups them by key
// into sources of draws.
func (e *Engine) prepare(tests []Test, fams []familyRange) ([]run, []*source, error) {
	plans := make([]plan, len(tests))
	runs := make([]run, len(tests))
	inFamily := make([]bool, len(tests))
	for _, f := range fams {
		for i := f.lo; i < f.hi; i++ {
			inFamily[i] = true
		}
	}
	// Tests share a source by key; a test that enumerates its
	// permutations and one that samples them draw different permutations
	// under one key, so they do not share (two units of one node may give
	// one window different caps).
	type sourceKey struct {
		key   string
		exact bool
	}
	bySource := map[sourceKey]*source{}
	var srcs []*source
	for i, t := range tests {
		if err := e.plan(&plans[i], i, t); err != nil {
			return nil, nil, err
		}
		stat, err := e.stat(t.Output)
		if err != nil {
			return nil, nil, fmt.Errorf("explain: test %d (%q): %w", i, t.Key, err)
		}
		sk := sourceKey{t.Key, plans[i].exact}
		src, ok := bySource[sk]
		switch {
		case !ok:
			src = &source{plan: &plans[i]}
			bySource[sk] = src
			srcs = append(srcs, src)
		case !src.plan.sameBlock(&plans[i]):
			return nil, nil, fmt.Errorf("explain: tests %d and %d share the key %q but not their block and perturbation", src.tests[0], i, t.Key)
		}
		src.tests = append(src.tests, i)
		runs[i] = run{plan: &plans[i], seq: newSequence(t.Stop, plans[i].draws, plans[i].exact, e.base[stat]), src: src, stat: stat}
		if _, ok := runs[i].seq.rule.(familyStopper); ok && !inFamily[i] {
			return nil, nil, fmt.Errorf("explain: test %d (%q) stops by its family's decision and is in no family (Engine.RunFamilies)", i, t.Key)
		}
	}
	return runs, srcs, nil
}

// stat returns the index of output o's mean in a draw's means, or an
// error for an output the model does not have.
func (e *Engine) stat(o Output) (int, error) {
	k := e.data.K()
	switch {
	case o == WholeModel:
		return 0, nil
	case k == 1 && o == OutputOf(0):
		return 0, nil // the one output is the whole model
	case o < WholeModel || int(o) > k:
		return 0, fmt.Errorf("the model has %d outputs, not %v", k, o)
	}
	return int(o), nil
}

// batch evaluates the items' draws on the workers (internal/pool), writing
// each draw's mean loss into means, and restores the workers' copies of
// the data afterwards. It returns the error of the lowest-numbered failed
// item, or "explain: " and ctx's error when the context stopped the batch
// before every item ran.
func (e *Engine) batch(ctx context.Context, items []item, means []float64) error {
	if ok, err := e.resident(); err != nil || ok {
		if err != nil {
			return err
		}
		return e.batchBlocks(ctx, items, means)
	}
	ns := e.scorer.Means()
	nw := min(pool.Workers(e.workers), len(items))
	for len(e.spaces) < nw {
		e.spaces = append(e.spaces, e.newWorkspace(true))
	}
	var ran atomic.Int64
	err := pool.Run(ctx, nw, len(items), func(w, k int) error {
		it := items[k]
		ws := e.spaces[w]
		if _, err := e.draw(ws, it.plan, it.draw); err != nil {
			return fmt.Errorf("%w (test %q, draw %d)", err, it.plan.Key, it.draw)
		}
		copy(means[k*ns:(k+1)*ns], ws.stats)
		ran.Add(1)
		return nil
	})
	for _, ws := range e.spaces[:nw] {
		ws.clean(e.data.X)
		if err == nil && ws.x.M == e.data.X.M {
			err = checkUnchanged(ws.x, e.data.X)
		}
	}
	if err == nil && int(ran.Load()) < len(items) {
		// The context stopped the pool after it had handed out the last
		// item, which pool.Run does not report.
		err = ctx.Err()
	}
	if err != nil && err == ctx.Err() {
		// The pool's own (unwrapped) context error; an item's error is
		// always wrapped above.
		return fmt.Errorf("explain: %w", err)
	}
	return err
}
