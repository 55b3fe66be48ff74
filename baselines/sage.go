package baselines

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tempora-dev/tempora"
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
	fp, fb, fg, fu, fw := float64(p), float64(batch), float64(bg), float64(unitRows), float64(workers)
	return 8 * (2*fb*fp + fb + 3*fp + fw*(fu*fg*fp+fu*fg+4*fu))
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
	summarise(e)
	e.Accounting = r.Accounting
	if !r.Converged {
		e.Warnings = append(e.Warnings, fmt.Sprintf("SAGE did not converge within budget (ratio %.3g after %d permutations)", r.Ratio, r.Permutations))
	}
	return e, nil
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
	if u.loss == nil {
		u.loss = tempora.LossFor(data.Task)
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

// checkMemory returns an error if SAGEMemory exceeds the memory limit.
func (s SAGE) checkMemory(u *sageSetup, p int) error {
	limit, source := s.MaxMemory, "SAGE.MaxMemory"
	if limit == 0 {
		limit, source = memlimit.Default()
	}
	units := (u.batch + u.unitRows - 1) / u.unitRows
	workers := min(method.Workers(s.Workers), units)
	what := fmt.Sprintf("%s with batches of %d permutations (%d columns, background of %d rows, %d workers)", u.method, u.batch, p, u.bg, workers)
	if err := memlimit.Check(what, SAGEMemory(p, u.batch, u.bg, u.unitRows, workers), limit, source); err != nil {
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

	// Welford statistics per column; every row adds one sample to every
	// column.
	mean := make([]float64, p)
	m2 := make([]float64, p)
	scores := make([]float64, u.batch*p)
	rows := make([]int, u.batch)
	perms := make([]int, u.batch*p)
	res := &SAGEResult{Method: u.method, D: x.D, L: x.L, Ratio: math.Inf(1)}
	n := 0
	for b := 0; ; b++ {
		size := u.batch
		if s.MaxPermutations > 0 {
			size = min(size, s.MaxPermutations-n)
		}
		for r := range size {
			rng := tempora.NewRand(s.Seed, "sage", strconv.Itoa(b), strconv.Itoa(r))
			rows[r] = rng.IntN(x.M)
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
			return bufs[w].walk(scores[lo*p:hi*p], u, cm, data, rows[lo:hi], perms[lo*p:hi*p])
		})
		if err != nil {
			return nil, err
		}
		for r := range size {
			n++
			for c, v := range scores[r*p : (r+1)*p] {
				d := v - mean[c]
				mean[c] += d / float64(n)
				m2[c] += d * (v - mean[c])
			}
		}
		res.Batches++
		res.Ratio = sageRatio(mean, m2, n)
		if res.Ratio < u.thresh {
			res.Converged = true
			break
		}
		if s.MaxPermutations > 0 && n >= s.MaxPermutations {
			break
		}
		if s.MaxTime > 0 && time.Since(start) >= s.MaxTime {
			break
		}
	}
	res.Permutations = n
	res.Values = mean
	res.StdErr = m2
	for c := range m2 {
		res.StdErr[c] = math.Sqrt(m2[c]) / float64(n)
	}
	cm.account(&res.Accounting)
	res.Accounting.Incomplete = !res.Converged
	res.Accounting.Runtime = time.Since(start)
	return res, nil
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
	x    *tempora.Tensor // unitRows·bg imputed instances
	pred []float64       // unitRows·bg predictions
	avg  []float64       // unitRows averaged predictions
	y    []float64       // unitRows targets
	loss []float64       // unitRows losses
	prev []float64       // unitRows previous losses
}

func newSageWork(u *sageSetup, d, l int) *sageWork {
	n := u.unitRows
	return &sageWork{
		x:    tempora.NewTensor(n*u.bg, d, l),
		pred: make([]float64, n*u.bg),
		avg:  make([]float64, n),
		y:    make([]float64, n),
		loss: make([]float64, n),
		prev: make([]float64, n),
	}
}

// walk evaluates the coalition walks of one work unit: rows[r] is the data
// row of the unit's r-th permutation perms[r·p:(r+1)·p]. It writes the
// per-column samples into scores (len(rows)·p values).
func (b *sageWork) walk(scores []float64, u *sageSetup, m *countingModel, data *tempora.Dataset, rows, perms []int) error {
	p := data.X.D * data.X.L
	n, bg := len(rows), u.bg
	x := b.x.Rows(0, n*bg)
	pred, avg := b.pred[:n*bg], b.avg[:n]
	y, loss, prev := b.y[:n], b.loss[:n], b.prev[:n]
	// The empty coalition: every copy holds its background (or default)
	// row.
	l := data.X.L
	for r, i := range rows {
		y[r] = data.Y[i]
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
	eval := func(dst []float64) error {
		err := m.predictRows(pred, x, func(r int) string {
			return fmt.Sprintf("instance %d with the held-out cells of a coalition from background row %d", rows[r/bg], r%bg)
		})
		if err != nil {
			return err
		}
		for r := range n {
			var s float64
			for _, v := range pred[r*bg : (r+1)*bg] {
				s += v
			}
			avg[r] = s / float64(bg)
		}
		u.loss(dst, y, avg)
		return nil
	}
	if err := eval(prev); err != nil {
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
		if err := eval(loss); err != nil {
			return err
		}
		for r, i := range rows {
			c := perms[r*p+k]
			if u.full || u.support[i].Contains(c%l) {
				scores[r*p+c] = prev[r] - loss[r]
			} else {
				scores[r*p+c] = 0 // padding: switching it on changes nothing
			}
			prev[r] = loss[r]
		}
	}
	return nil
}
