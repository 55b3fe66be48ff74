package explain

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/pool"
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

// String returns "across-instances", "within-window" or "conditional".
func (k Perturbation) String() string {
	switch k {
	case AcrossInstances:
		return "across-instances"
	case WithinWindow:
		return "within-window"
	case Conditional:
		return "conditional"
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

// Engine runs permutation tests of a model on a dataset. It holds the
// baseline predictions and losses, and one working copy per worker. When
// one copy of the data per worker fits the memory budget (SetMemoryBudget;
// by default a quarter of the memory limit), or the data has at most 2²¹
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
	model   tempora.Model
	data    *tempora.Dataset
	loss    tempora.Loss
	seed    uint64
	workers int
	budget  int64 // bytes of the workers' copies; 0: the default

	baseMean float64

	calls, evals atomic.Int64

	mu     sync.Mutex // serialises Run and guards spaces
	spaces []*workspace

	cond condCache // fits of the Conditional tests (conditional.go)

	// Missing values (missing.go): the data's observation summary; masked
	// when the data has missing values (the draws then follow
	// docs/decisions.md, decision 19); the length rule of the
	// across-instance draws.
	obs    *tempora.Observation
	masked bool
	rule   LengthRule
	// complete[i*D+j] reports that series (i, j) has no missing cell
	// (masked only).
	complete []bool
	// strataMu guards strataCache, the Strata rule's strata by window.
	strataMu    sync.Mutex
	strataCache map[tempora.Window]*strata

	res residentState // the resident path (resident.go)
}

// NewEngine validates the model's inputs, predicts the data once and
// computes the baseline loss. A nil loss means tempora.LossFor(data.Task);
// workers = 0 means runtime.GOMAXPROCS(0). The data must not be modified
// while the Engine is in use.
//
// The data may have missing values (NaN; see tempora.Dataset.Observe):
// across-instance draws then permute instances only among those whose
// supports cover the test's window alike (Strata), and within-window draws
// permute observed positions only (missing.go, docs/decisions.md,
// decision 19).
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
	return newEngine(m, data, obs, Strata, loss, seed, workers)
}

// newEngine is NewEngine for data already observed, with the length rule
// of the across-instance draws.
func newEngine(m tempora.Model, data *tempora.Dataset, obs *tempora.Observation, rule LengthRule, loss tempora.Loss, seed uint64, workers int) (*Engine, error) {
	if workers < 0 {
		return nil, fmt.Errorf("explain: negative worker count %d", workers)
	}
	workers = pool.Workers(workers)
	if loss == nil {
		loss = tempora.LossFor(data.Task)
	}
	e := &Engine{model: m, data: data, loss: loss, seed: seed, workers: workers}
	if err := e.setObservation(obs, rule); err != nil {
		return nil, err
	}
	ws := e.newWorkspace(false)
	mean, err := e.evaluate(ws, data.X)
	if err != nil {
		if e.masked && !obs.Complete() {
			return nil, fmt.Errorf("%w (baseline)%s", err, e.locateFailure())
		}
		return nil, fmt.Errorf("%w (baseline)", err)
	}
	if err := tempora.CheckPredictions(data.Task, ws.pred); err != nil {
		return nil, fmt.Errorf("explain: model: %w (baseline)", err)
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

// plan is a validated test with its draw count.
type plan struct {
	Test
	n     int  // number of elements permuted
	draws int  // the most draws
	exact bool // enumerate all non-identity permutations
	cond  *condFit
	// strata are the strata of an across-instance test under the Strata
	// rule on data with missing values; nil for one stratum.
	strata *strata
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
	if err := t.Stop.validate(); err != nil {
		return plan{}, fmt.Errorf("explain: test %d (%q) %v", i, t.Key, err)
	}
	p := plan{Test: t, draws: t.Permutations}
	switch t.Kind {
	case AcrossInstances:
		p.n = x.M
	case WithinWindow:
		p.n = t.Window.Len()
	case Conditional:
		p.n = x.M
		if e.masked {
			return plan{}, fmt.Errorf("explain: test %d (%q): conditional tests need complete data, and this data has missing values (NaN)", i, t.Key)
		}
		c, err := e.conditional(t.Features)
		if err != nil {
			return plan{}, err
		}
		p.cond = c
	default:
		return plan{}, fmt.Errorf("explain: test %d (%q) has unknown perturbation %d", i, t.Key, int(t.Kind))
	}
	if f, ok := exactDraws(p.n, t.Permutations); ok {
		p.exact, p.draws = true, f
	}
	if e.masked && t.Kind == AcrossInstances && e.rule == Strata {
		p.strata = e.strataOf(t.Window)
	}
	if e.masked && !e.blockObserved(t.Features, t.Window) {
		// Every permutation of a block with no observed value leaves the
		// data unchanged: no draw, score 0, p-value 1.
		p.exact, p.draws = false, 0
	}
	return p, nil
}

// run is the state of one test during Run: its plan, its p-value rule and
// its items in the current batch.
type run struct {
	plan   *plan
	seq    sequence
	lo, hi int
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
// Memory does not grow with Permutations. The p-value rule is sequence's
// (pvalue.go).
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
		runs[i] = run{plan: &plans[i], seq: newSequence(p.Stop, p.draws, p.exact, e.baseMean)}
	}
	families, err := anytimeFamilies(runs)
	if err != nil {
		return nil, err
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	var (
		items []item
		means []float64
	)
	for {
		items = schedule(runs, items[:0])
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
			if r := &runs[i]; !r.seq.done && r.hi > r.lo {
				r.seq.take(means[r.lo:r.hi])
				r.lo, r.hi = 0, 0
			}
		}
		for _, f := range families {
			settle(f.seqs, f.alpha)
		}
	}

	res := make([]TestResult, len(tests))
	for i := range runs {
		res[i] = runs[i].seq.result()
	}
	return res, nil
}

// family is the anytime tests of one Run with the same Stop.Family.
type family struct {
	alpha float64
	seqs  []*sequence
}

// anytimeFamilies groups the runs' anytime tests by family, in order of
// first appearance. It returns an error when the tests of a family do not
// share one level.
func anytimeFamilies(runs []run) ([]family, error) {
	var out []family
	index := map[string]int{}
	for i := range runs {
		st := runs[i].plan.Stop
		if !st.Anytime {
			continue
		}
		k, ok := index[st.Family]
		if !ok {
			k = len(out)
			index[st.Family] = k
			out = append(out, family{alpha: st.Alpha})
		}
		if st.Alpha != out[k].alpha {
			return nil, fmt.Errorf("explain: test %d (%q) has level %v in family %q, whose first test has %v", i, runs[i].plan.Key, st.Alpha, st.Family, out[k].alpha)
		}
		out[k].seqs = append(out[k].seqs, &runs[i].seq)
	}
	return out, nil
}

// schedule appends to items the next batch of every unfinished test, in
// test order, and records each test's items in lo and hi.
func schedule(runs []run, items []item) []item {
	for i := range runs {
		r := &runs[i]
		if r.seq.done {
			continue
		}
		r.lo = len(items)
		for d, c := r.seq.issued, r.seq.next(); d < r.seq.issued+c; d++ {
			items = append(items, item{test: i, draw: d})
		}
		r.hi = len(items)
	}
	return items
}

// batch evaluates the items' draws on the workers (internal/pool), writing
// each draw's mean loss into means, and restores the workers' copies of
// the data afterwards. It returns the error of the lowest-numbered failed
// item, or "explain: " and ctx's error when the context stopped the batch
// before every item ran.
func (e *Engine) batch(ctx context.Context, runs []run, items []item, means []float64) error {
	if ok, err := e.resident(); err != nil || ok {
		if err != nil {
			return err
		}
		return e.batchBlocks(ctx, runs, items, means)
	}
	nw := min(pool.Workers(e.workers), len(items))
	for len(e.spaces) < nw {
		e.spaces = append(e.spaces, e.newWorkspace(true))
	}
	var ran atomic.Int64
	err := pool.Run(ctx, nw, len(items), func(w, k int) error {
		it := items[k]
		p := runs[it.test].plan
		m, err := e.draw(e.spaces[w], p, it.draw)
		if err != nil {
			return fmt.Errorf("%w (test %q, draw %d)", err, p.Key, it.draw)
		}
		means[k] = m
		ran.Add(1)
		return nil
	})
	for _, ws := range e.spaces[:nw] {
		ws.clean(e.data.X)
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
