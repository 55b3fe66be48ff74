package baselines

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/internal/memlimit"
	"github.com/tempora-dev/tempora/method"
)

// Defaults of the SAGE configuration, as the paper ran sage-importance.
const (
	// DefaultSAGEBackground is the number of leading data rows used as the
	// marginal imputer's background.
	DefaultSAGEBackground = 128
	// DefaultSAGEBatch is the number of sampled rows (permutations) per
	// batch.
	DefaultSAGEBatch = 512
	// DefaultSAGEThreshold is the convergence threshold on the ratio of the
	// largest standard error to the range of the values.
	DefaultSAGEThreshold = 0.05
)

// SAGEMaxPermutations is the cap on sampled permutations that tempora's
// method table (the command line and the benchmark) gives SAGE, SAGE-m and
// SAGE-z by default; SAGE's zero value has no cap. The paper let SAGE run
// for up to 72 hours per model and excluded unconverged models; a
// benchmark that must finish in hours needs a cap. The cap is a number of
// permutations, not a wall time, so that results stay machine-independent;
// a capped run is recorded as Incomplete with a warning (docs/decisions.md,
// decision 12). At Table-1 scale SAGE-m needs about 20,000 permutations to
// converge and SAGE about 7,000, so the cap binds only on runs that would
// otherwise take far longer than the paper's budget allows here: marginal
// SAGE costs about 1.4 ms per permutation at that scale.
const SAGEMaxPermutations = 1 << 18

// sageUnitValues bounds the number of values (instances × columns) in the
// tensor of one work unit's model call, so a marginal imputer's unit stays
// near 8 MiB.
const sageUnitValues = 1 << 20

// sageMaxUnitRows bounds the number of batch rows per work unit, so that
// even a cheap imputer's batch is split among workers.
const sageMaxUnitRows = 64

// Imputer says how SAGE fills in the columns held out of a coalition.
type Imputer int

const (
	// Marginal replaces held-out columns by those of each background row
	// (the first Background rows of the data) and averages the predictions
	// over the background before the loss: SAGE proper.
	Marginal Imputer = iota
	// Mean replaces held-out columns by their mean over the data (SAGE-m).
	Mean
	// Zero replaces held-out columns by zero (SAGE-z).
	Zero
)

// String returns the method name of the imputer: "SAGE", "SAGE-m" or
// "SAGE-z".
func (k Imputer) String() string {
	switch k {
	case Marginal:
		return "SAGE"
	case Mean:
		return "SAGE-m"
	case Zero:
		return "SAGE-z"
	}
	return fmt.Sprintf("Imputer(%d)", int(k))
}

// SAGE estimates Shapley additive global importance (Covert et al. 2020)
// of every cell with the permutation estimator, as sage-importance ran in the
// paper. The zero value is SAGE with marginal imputation, the paper's
// background, batch size and threshold, and no budget (run until
// converged).
//
// Each batch samples BatchSize data rows with replacement and gives each row
// its own uniform permutation of the D·L columns. Starting from the empty
// coalition, the row's columns are switched on in permutation order; after
// each step the column gets the sample (previous loss − new loss), where the
// loss compares the target with the imputed prediction. That is D·L+1
// imputed evaluations per row. Per-column running means and sums of squares
// (Welford) give the values and their standard errors sqrt(M2)/N; the run
// converges when
//
//	max standard error / max(max value − min value, 1e−12) < Threshold.
//
// On data with missing values (NaN; docs/decisions.md, decision 21) a
// held-out cell of row i inside i's sequence takes the imputer's value:
// the background row's cell with its missingness (a NaN stays NaN), the
// mean of the cell's observed values, or zero. Row i's padding (its cells
// outside its sequence, tempora.Observation.Support) is its own in every
// coalition, so a padding cell's sample is 0. The model sees every
// missing cell of a coalition as NaN; nothing is imputed.
//
// The random stream of row r of batch b is derived from (Seed, "sage", b, r),
// every row's walk is evaluated independently, and the statistics are
// updated in row order, so the result does not depend on Workers. Rows are
// evaluated in work units of up to 64 rows (fewer for a large marginal
// background), each step of a unit in one model call; the units, and so
// ModelCalls, do not depend on Workers either.
type SAGE struct {
	// Imputer selects SAGE (Marginal, the zero value), SAGE-m or SAGE-z.
	Imputer Imputer
	// Background is the number of leading data rows the marginal imputer
	// uses; zero means min(DefaultSAGEBackground, M). It must not exceed the
	// number of instances. Other imputers ignore it.
	Background int
	// BatchSize is the number of permutations per batch; zero means
	// DefaultSAGEBatch.
	BatchSize int
	// Threshold is the convergence threshold; zero means
	// DefaultSAGEThreshold.
	Threshold float64
	// MaxPermutations caps the number of sampled rows (permutations); zero
	// means no cap. The last batch is shortened to meet the cap exactly.
	MaxPermutations int
	// MaxTime caps the wall time, checked after every batch; zero means no
	// cap. A time cap makes the result depend on the machine.
	MaxTime time.Duration
	// Loss is the per-instance loss; nil means tempora.LossFor(data.Task)
	// (mean squared error or binary cross-entropy with clipping, as SAGE's
	// "mse" and "cross entropy").
	Loss tempora.Loss
	// Seed is the run seed of the sampling streams.
	Seed uint64
	// Workers is the number of goroutines; zero means GOMAXPROCS.
	Workers int
	// MaxMemory bounds, in bytes, the memory SAGE plans to allocate (see
	// SAGEMemory), checked before anything is allocated so that an absurd
	// BatchSize fails with an error instead of exhausting memory. Zero
	// means the limit of internal/memlimit: GOMEMLIMIT if set, otherwise
	// 3/4 of the physical or control-group memory. A negative value
	// disables the check.
	MaxMemory int64
	// Output is the loss the walks score (tempora.Scorer.Losses): the
	// whole model's (explain.WholeModel, the zero value) or, for a model
	// with several outputs, one output's (explain.OutputOf), whose rows
	// are then sampled among the instances with a target for it. For the
	// whole model of such a model the same walks also give each output's
	// values on its own loss (SAGEResult.OutputValues; a row without a
	// target for an output adds no sample to that output's), which the
	// explanation's Outputs holds; convergence is judged on the whole
	// model's values.
	Output explain.Output
}

var _ tempora.Explainer = SAGE{}

// SAGEMemory estimates the bytes SAGE allocates for p = D·L columns, a
// batch of batch permutations, a background of bg rows (1 for SAGE-m and
// SAGE-z), work units of unitRows rows, and workers busy workers: the
// batch's scores and permutations (batch × p each) and rows, three vectors
// of p values (running means and sums of squares, the imputed row), and
// per worker a unit's unitRows·bg imputed instances and their predictions
// and four vectors of unitRows values. The data and whatever the model
// allocates come on top.
func SAGEMemory(p, batch, bg, unitRows, workers int) float64 {
	return sageMemory(p, batch, bg, unitRows, workers, 1, 0)
}

// sageMemory is SAGEMemory for a model with k predictions per instance
// and outs outputs whose values the run also estimates (the whole model
// of a model with several outputs): their scores, statistics and losses
// come on top, and a unit's predictions, averages, targets and scratch
// grow with k.
func sageMemory(p, batch, bg, unitRows, workers, k, outs int) float64 {
	fp, fb, fg, fu, fw, fk, fo := float64(p), float64(batch), float64(bg), float64(unitRows), float64(workers), float64(k), float64(outs)
	unit := fu*fg*fp + fu*fg*fk + fu*(3*fk+1) + 2*fu*fo
	if k > 1 {
		unit += fu * fk // the scorer's scratch
	}
	return 8 * ((2+fo)*fb*fp + fb + (3+2*fo)*fp + fw*unit)
}

// SAGEResult is the full output of a SAGE run.
type SAGEResult struct {
	// Method is "SAGE", "SAGE-m" or "SAGE-z".
	Method string
	// D and L are the numbers of features and timesteps.
	D, L int
	// Values holds the SAGE value of each cell (column j·L+t) and StdErr its
	// standard error.
	Values, StdErr []float64
	// Permutations is the number of sampled rows, Batches the number of
	// batches.
	Permutations, Batches int
	// Ratio is the final convergence ratio: max standard error over the
	// range of the values.
	Ratio float64
	// Converged reports that Ratio fell below the threshold; otherwise a
	// budget stopped the run.
	Converged bool
	// Accounting is the cost of the run; Incomplete is !Converged.
	Accounting tempora.Accounting
	// OutputName names the output whose loss the values explain when it
	// is one of a model's several (empty: the whole model's loss).
	OutputName string
	// OutputValues and OutputStdErr hold, for the whole model of a model
	// with several outputs, each output's values and standard errors on
	// its own loss from the same walks (entry k of output k, D·L each),
	// and OutputPermutations the walks whose row has a target for it; nil
	// otherwise.
	OutputValues, OutputStdErr [][]float64
	OutputPermutations         []int
}

// Explain implements tempora.Explainer. The method name is the imputer's
// ("SAGE", "SAGE-m" or "SAGE-z"); the cell scores are the SAGE values. A run
// stopped by a budget is marked Incomplete and carries a warning.
func (s SAGE) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	r, err := s.Estimate(ctx, m, data)
	if err != nil {
		return nil, err
	}
	e := tempora.NewExplanation(r.Method, data)
	copy(e.Cells, r.Values)
	outputs{name: r.OutputName}.fill(e, r.OutputValues)
	e.Accounting = r.Accounting
	if !r.Converged {
		e.Warnings = append(e.Warnings, fmt.Sprintf("SAGE did not converge within budget (ratio %.3g after %d permutations)", r.Ratio, r.Permutations))
	}
	return e, nil
}

var _ method.Estimator = SAGE{}

// EstimateEvals implements method.Estimator for a run capped by
// MaxPermutations: an upper bound, every permutation walked through its
// D·L+1 coalitions, each evaluated on every background row (one for SAGE-m
// and SAGE-z), MaxPermutations·(D·L+1)·background instance evaluations; a
// run that converges stops earlier. Without a cap convergence alone ends
// the run and there is no estimate (nor with only MaxTime).
func (s SAGE) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	if s.MaxPermutations == 0 || data == nil || data.X == nil {
		return 0, false
	}
	u, err := s.setup(data)
	if err != nil {
		return 0, false
	}
	p := data.X.D * data.X.L
	return evalCount(float64(s.MaxPermutations), float64(p+1), float64(u.bg)), false
}

// sageSetup is a SAGE configuration with its defaults resolved against a
// dataset.
type sageSetup struct {
	method    string
	batch, bg int
	thresh    float64
	loss      tempora.Loss
	fill      []float64 // background rows (bg·p values), or the one default row
	unitRows  int
	// support is each instance's span of timesteps (tempora.Observation);
	// the cells outside it are padding, which stays with the instance. full
	// reports that every sequence has all L timesteps.
	support []tempora.Window
	full    bool
	// sel is what the run explains; eligible lists the instances rows are
	// sampled from when not all of them (one output without a target in
	// every instance).
	sel      outputs
	eligible []int
}

func (s SAGE) setup(data *tempora.Dataset) (*sageSetup, error) {
	obs, err := data.Observe(1)
	if err != nil {
		return nil, fmt.Errorf("baselines: SAGE: %w", err)
	}
	if err := checkWorkers("SAGE", s.Workers); err != nil {
		return nil, err
	}
	x := data.X
	p := x.D * x.L
	u := &sageSetup{method: s.Imputer.String(), batch: s.BatchSize, thresh: s.Threshold, loss: s.Loss, bg: 1, support: obs.Support, full: !obs.VariableLength()}
	switch {
	case s.BatchSize == 0:
		u.batch = DefaultSAGEBatch
	case s.BatchSize < 0:
		return nil, fmt.Errorf("baselines: SAGE BatchSize is %d, want at least 1 (or 0 for %d)", s.BatchSize, DefaultSAGEBatch)
	}
	switch {
	case s.Threshold == 0:
		u.thresh = DefaultSAGEThreshold
	case !(s.Threshold > 0) || math.IsInf(s.Threshold, 0):
		return nil, fmt.Errorf("baselines: SAGE Threshold is %v, want a positive finite ratio (or 0 for %v)", s.Threshold, DefaultSAGEThreshold)
	}
	if s.MaxPermutations < 0 {
		return nil, fmt.Errorf("baselines: SAGE MaxPermutations is %d, want 0 (no cap) or more", s.MaxPermutations)
	}
	if s.MaxTime < 0 {
		return nil, fmt.Errorf("baselines: SAGE MaxTime is %v, want 0 (no cap) or more", s.MaxTime)
	}
	if _, err := tempora.NewScorer(data, s.Loss); err != nil {
		return nil, fmt.Errorf("baselines: SAGE: %w", err)
	}
	if u.sel, err = selectOutput("SAGE", s.Output, data); err != nil {
		return nil, err
	}
	if !u.sel.perOutput() && u.sel.name != "" {
		c := u.sel.cols[0]
		for i := range x.M {
			if hasTarget(data, i, c) {
				u.eligible = append(u.eligible, i)
			}
		}
		if len(u.eligible) == x.M {
			u.eligible = nil
		}
	}
	switch s.Imputer {
	case Marginal:
		switch {
		case s.Background == 0:
			u.bg = min(DefaultSAGEBackground, x.M)
		case s.Background < 0:
			return nil, fmt.Errorf("baselines: SAGE Background is %d, want at least 1 (or 0 for %d)", s.Background, DefaultSAGEBackground)
		case s.Background > x.M:
			return nil, fmt.Errorf("baselines: SAGE Background of %d rows exceeds the %d instances of the data", s.Background, x.M)
		default:
			u.bg = s.Background
		}
		u.fill = x.Data[:u.bg*p]
	case Mean:
		// The column means over the observed values (NaN for a column no
		// instance observes), as Baseline.values computes them.
		if u.fill, err = MeanBaseline.values(x); err != nil {
			return nil, err
		}
	case Zero:
		u.fill = make([]float64, p)
	default:
		return nil, fmt.Errorf("baselines: unknown SAGE imputer %d", int(s.Imputer))
	}
	u.unitRows = max(1, min(sageMaxUnitRows, sageUnitValues/(u.bg*p)))
	if err := s.checkMemory(u, p); err != nil {
		return nil, err
	}
	return u, nil
}

// outs returns the number of outputs whose values the run estimates
// besides the explained loss's: K for the whole model of a model with
// several outputs, else 0.
func (u *sageSetup) outs() int {
	if u.sel.perOutput() {
		return u.sel.k
	}
	return 0
}

// checkMemory returns an error if SAGEMemory exceeds the memory limit.
func (s SAGE) checkMemory(u *sageSetup, p int) error {
	limit, source := s.MaxMemory, "SAGE.MaxMemory"
	if limit == 0 {
		limit, source = memlimit.Default()
	}
	units := (u.batch + u.unitRows - 1) / u.unitRows
	workers := min(method.Workers(s.Workers), units)
	what := fmt.Sprintf("%s with batches of %d permutations (%d columns, background of %d rows, %d workers)", u.method, u.batch, p, u.bg, workers)
	if err := memlimit.Check(what, sageMemory(p, u.batch, u.bg, u.unitRows, workers, u.sel.k, u.outs()), limit, source); err != nil {
		return fmt.Errorf("baselines: %w", err)
	}
	return nil
}

// Estimate runs the SAGE estimator and returns the values with their
// standard errors and convergence state.
func (s SAGE) Estimate(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*SAGEResult, error) {
	start := time.Now()
	u, err := s.setup(data)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("baselines: SAGE: nil model")
	}
	cm := newCountingModel(m, data)
	x := data.X
	p := x.D * x.L
	workers := method.Workers(s.Workers)
	bufs := make([]*sageWork, workers)

	// Welford statistics per column of the explained loss, and of each
	// output's loss for the whole model of a model with several outputs.
	stats := newWelford(p)
	scores := make([]float64, u.batch*p)
	ostats := make([]*welford, u.outs())
	oscores := make([][]float64, u.outs())
	for c := range ostats {
		ostats[c], oscores[c] = newWelford(p), make([]float64, u.batch*p)
	}
	rows := make([]int, u.batch)
	perms := make([]int, u.batch*p)
	res := &SAGEResult{Method: u.method, D: x.D, L: x.L, Ratio: math.Inf(1), OutputName: u.sel.name}
	for b := 0; ; b++ {
		size := u.batch
		if s.MaxPermutations > 0 {
			size = min(size, s.MaxPermutations-stats.n)
		}
		for r := range size {
			rng := tempora.NewRand(s.Seed, "sage", strconv.Itoa(b), strconv.Itoa(r))
			if u.eligible == nil {
				rows[r] = rng.IntN(x.M)
			} else {
				rows[r] = u.eligible[rng.IntN(len(u.eligible))]
			}
			perm := perms[r*p : (r+1)*p]
			for c := range perm {
				perm[c] = c
			}
			rng.Shuffle(p, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		}
		units := (size + u.unitRows - 1) / u.unitRows
		err := method.Parallel(ctx, min(workers, units), units, func(w, k int) error {
			if bufs[w] == nil {
				bufs[w] = newSageWork(u, x.D, x.L)
			}
			lo, hi := k*u.unitRows, min((k+1)*u.unitRows, size)
			unit := make([][]float64, len(oscores))
			for c := range unit {
				unit[c] = oscores[c][lo*p : hi*p]
			}
			return bufs[w].walk(scores[lo*p:hi*p], unit, u, cm, data, rows[lo:hi], perms[lo*p:hi*p])
		})
		if err != nil {
			return nil, err
		}
		for r := range size {
			stats.add(scores[r*p : (r+1)*p])
			for c, st := range ostats {
				if hasTarget(data, rows[r], c) {
					st.add(oscores[c][r*p : (r+1)*p])
				}
			}
		}
		res.Batches++
		res.Ratio = sageRatio(stats.mean, stats.m2, stats.n)
		if res.Ratio < u.thresh {
			res.Converged = true
			break
		}
		if s.MaxPermutations > 0 && stats.n >= s.MaxPermutations {
			break
		}
		if s.MaxTime > 0 && time.Since(start) >= s.MaxTime {
			break
		}
	}
	res.Permutations = stats.n
	res.Values, res.StdErr = stats.values()
	for _, st := range ostats {
		v, se := st.values()
		res.OutputValues = append(res.OutputValues, v)
		res.OutputStdErr = append(res.OutputStdErr, se)
		res.OutputPermutations = append(res.OutputPermutations, st.n)
	}
	cm.account(&res.Accounting)
	res.Accounting.Incomplete = !res.Converged
	res.Accounting.Runtime = time.Since(start)
	return res, nil
}

// welford holds Welford's running means and sums of squares of n samples
// of every column.
type welford struct {
	mean, m2 []float64
	n        int
}

func newWelford(p int) *welford {
	return &welford{mean: make([]float64, p), m2: make([]float64, p)}
}

// add adds one sample of every column.
func (w *welford) add(sample []float64) {
	w.n++
	for c, v := range sample {
		d := v - w.mean[c]
		w.mean[c] += d / float64(w.n)
		w.m2[c] += d * (v - w.mean[c])
	}
}

// values returns the means and their standard errors sqrt(M2)/n (0/0:
// NaN without samples), reusing w's storage.
func (w *welford) values() (mean, se []float64) {
	se = w.m2
	for c := range se {
		se[c] = math.Sqrt(w.m2[c]) / float64(w.n)
	}
	return w.mean, se
}

// sageRatio returns max_c sqrt(M2_c)/N ÷ max(max value − min value, 1e−12).
func sageRatio(mean, m2 []float64, n int) float64 {
	lo, hi, se := math.Inf(1), math.Inf(-1), 0.0
	for c, v := range mean {
		lo, hi = min(lo, v), max(hi, v)
		se = max(se, math.Sqrt(m2[c])/float64(n))
	}
	return se / max(hi-lo, 1e-12)
}

// sageWork holds one worker's buffers, reused across work units.
type sageWork struct {
	x       *tempora.Tensor // unitRows·bg imputed instances
	pred    []float64       // unitRows·bg·K predictions
	avg     []float64       // unitRows·K averaged predictions
	y       []float64       // unitRows rows of targets
	scratch []float64       // unitRows·K values for the scorer (K > 1)
	loss    []float64       // unitRows losses
	prev    []float64       // unitRows previous losses
	// oloss and oprev are the losses of each output (the whole model of a
	// model with several outputs).
	oloss, oprev [][]float64
}

func newSageWork(u *sageSetup, d, l int) *sageWork {
	n, k := u.unitRows, u.sel.k
	b := &sageWork{
		x:    tempora.NewTensor(n*u.bg, d, l),
		pred: make([]float64, n*u.bg*k),
		avg:  make([]float64, n*k),
		y:    make([]float64, n*k),
		loss: make([]float64, n),
		prev: make([]float64, n),
	}
	if k > 1 {
		b.scratch = make([]float64, n*k)
	}
	for range u.outs() {
		b.oloss = append(b.oloss, make([]float64, n))
		b.oprev = append(b.oprev, make([]float64, n))
	}
	return b
}

// walk evaluates the coalition walks of one work unit: rows[r] is the data
// row of the unit's r-th permutation perms[r·p:(r+1)·p]. It writes the
// per-column samples of the explained loss into scores (len(rows)·p
// values) and those of output c's loss into oscores[c] (NaN for a row
// without a target for it).
func (b *sageWork) walk(scores []float64, oscores [][]float64, u *sageSetup, m *countingModel, data *tempora.Dataset, rows, perms []int) error {
	p := data.X.D * data.X.L
	n, bg := len(rows), u.bg
	x := b.x.Rows(0, n*bg)
	loss, prev := b.loss[:n], b.prev[:n]
	sc, err := b.scorer(u, data, rows)
	if err != nil {
		return err
	}
	// The empty coalition: every copy holds its background (or default)
	// row.
	l := data.X.L
	for r, i := range rows {
		copy(x.Data[r*bg*p:(r+1)*bg*p], u.fill)
		// The row's padding is its own in every coalition.
		if sup := u.support[i]; sup.Len() < l {
			src := data.X.Instance(i)
			for g := range bg {
				dst := x.Data[(r*bg+g)*p : (r*bg+g+1)*p]
				for c := range p {
					if t := c % l; !sup.Contains(t) {
						dst[c] = src[c]
					}
				}
			}
		}
	}
	if err := b.eval(prev, b.oprev, u, m, sc, x, rows); err != nil {
		return err
	}
	// Switch columns on one at a time: only the added column changes, in
	// every background copy of the row.
	for k := range p {
		for r, i := range rows {
			c := perms[r*p+k]
			v := data.X.Data[i*p+c]
			for g := range bg {
				x.Data[(r*bg+g)*p+c] = v
			}
		}
		if err := b.eval(loss, b.oloss, u, m, sc, x, rows); err != nil {
			return err
		}
		for r, i := range rows {
			c := perms[r*p+k]
			padding := !u.full && !u.support[i].Contains(c%l)
			scores[r*p+c] = sageSample(padding, prev[r], loss[r])
			prev[r] = loss[r]
			for o, os := range oscores {
				os[r*p+c] = sageSample(padding, b.oprev[o][r], b.oloss[o][r])
				b.oprev[o][r] = b.oloss[o][r]
			}
		}
	}
	return nil
}

// sageSample is the sample of a column switched on: the loss it removes,
// or 0 for a padding cell (switching it on changes nothing).
func sageSample(padding bool, prev, loss float64) float64 {
	if padding {
		return 0
	}
	return prev - loss
}

// scorer returns the scorer of the unit's rows: their targets, of the
// model's outputs, scored by the run's loss.
func (b *sageWork) scorer(u *sageSetup, data *tempora.Dataset, rows []int) (*tempora.Scorer, error) {
	w := data.Outputs.TargetWidth()
	y := b.y[:len(rows)*w]
	for r, i := range rows {
		copy(y[r*w:(r+1)*w], data.Y[i*w:(i+1)*w])
	}
	sub := &tempora.Dataset{X: &tempora.Tensor{M: len(rows), D: data.X.D, L: data.X.L}, Y: y, Task: data.Task, Outputs: data.Outputs}
	return tempora.NewScorer(sub, u.loss)
}

// eval predicts the unit's imputed rows x, averages each row's
// predictions over its background copies, and writes each row's loss of
// the explained output into dst and of output c into odst[c].
func (b *sageWork) eval(dst []float64, odst [][]float64, u *sageSetup, m *countingModel, sc *tempora.Scorer, x *tempora.Tensor, rows []int) error {
	n, bg, k := len(rows), u.bg, u.sel.k
	pred, avg := b.pred[:n*bg*k], b.avg[:n*k]
	err := m.predictRows(pred, x, func(r int) string {
		return fmt.Sprintf("instance %d with the held-out cells of a coalition from background row %d", rows[r/bg], r%bg)
	})
	if err != nil {
		return err
	}
	for r := range n {
		for c := range k {
			var s float64
			for g := range bg {
				s += pred[(r*bg+g)*k+c]
			}
			avg[r*k+c] = s / float64(bg)
		}
	}
	sc.Losses(dst[:n], avg, b.scratch, u.sel.scorerOutput())
	for c, d := range odst {
		sc.Losses(d[:n], avg, b.scratch, c)
	}
	return nil
}
