package baselines

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/internal/memlimit"
	"github.com/tempora-dev/tempora/method"
)

// Defaults of the LIME configuration, as the paper ran the lime package.
const (
	// DefaultLIMESamples is the number of perturbed samples per explained
	// instance (lime's num_samples).
	DefaultLIMESamples = 5000
	// DefaultLIMEKernelScale sets the default kernel width
	// 0.75·√(number of columns).
	DefaultLIMEKernelScale = 0.75
	// DefaultLIMERidge is the ridge penalty of the surrogate (scikit-learn's
	// Ridge(alpha=1)).
	DefaultLIMERidge = 1.0
)

// limeGramBlock is the number of sample rows per update of the
// surrogate's Gram matrix (gramAdd): small enough that the block stays in
// the second-level cache at 600 columns (BenchmarkGram measured 64, 128
// and 256). The Gram matrix does not depend on it.
const limeGramBlock = 128

// LIME explains a model with local linear surrogates (Ribeiro et al. 2016),
// as the lime package's tabular explainer ran in the paper: no
// discretisation, samples drawn around the training mean. The zero value is
// the paper's configuration.
//
// For each explained instance x, LIME draws Samples rows μ + σ·z with z
// standard normal, where μ and σ are the per-column mean and population
// standard deviation of the data (σ = 0 is replaced by 1), and replaces
// row 0 by x. The model predicts every row (the probability of class 1 for
// classification) in one call. A weighted ridge regression of the
// predictions on the standardised rows (x−μ)/σ, with an intercept, penalty
// Ridge and kernel weights
//
//	w = sqrt(exp(−d²/width²)),  d = ‖(row−μ)/σ − (x−μ)/σ‖,
//
// gives one local weight per cell. The global score of a cell is the mean of
// |weight| over the explained instances, or √(Σ|weight|) with SPLIME.
//
// LIME needs complete data: on data with missing values (NaN, including
// sequences of different lengths) Explain returns method.RequireComplete's
// error before any model call. Its surrogate regresses on every cell,
// standardised by the cell's mean and SD, so a missing cell would have to
// be imputed, which tempora never does (docs/decisions.md, decision 21).
//
// The unrolled column j·L+t is feature j at timestep t, as in
// tempora.Tensor.Instance. Instances are explained in parallel, each with
// its own random stream derived from (Seed, "lime", instance), so the result
// does not depend on Workers.
type LIME struct {
	// Samples is the number of rows per instance, including the instance
	// itself; zero means DefaultLIMESamples. At least 2 are needed.
	Samples int
	// KernelWidth is the width of the exponential kernel on standardised
	// distances; zero means 0.75·√(D·L).
	KernelWidth float64
	// Ridge is the ridge penalty α of the surrogate; zero means
	// DefaultLIMERidge.
	Ridge float64
	// Instances caps the number of explained instances at the first
	// Instances of the data; zero means every instance.
	Instances int
	// SPLIME reports SP-LIME's global importance √(Σ_i |W_ic|) per cell
	// instead of the mean |W_ic| (the two rank cells identically).
	SPLIME bool
	// Seed is the run seed of the sampling streams.
	Seed uint64
	// Workers is the number of goroutines; zero means GOMAXPROCS.
	Workers int
	// MaxMemory bounds, in bytes, the memory LIME plans to allocate (see
	// LIMEMemory), checked before anything is allocated so that an
	// absurd Samples fails with an error instead of exhausting memory.
	// Zero means the limit of internal/memlimit: GOMEMLIMIT if set,
	// otherwise 3/4 of the physical or control-group memory. A negative
	// value disables the check.
	MaxMemory int64
	// Output is the prediction the surrogates fit, for a model with
	// several outputs: one output's (explain.OutputOf; a class's
	// probability), or with explain.WholeModel, the zero value, every
	// output's, each with its own surrogate on the same samples (one
	// model call per instance still): the cells are then the mean over the
	// outputs of each output's cells, which the explanation's Outputs
	// holds, and LIMEResult.Local holds every output's weights.
	Output explain.Output
}

var _ tempora.Explainer = LIME{}

// LIMEMemory estimates the bytes LIME allocates for n explained instances
// of p = D·L columns, with the given samples per instance and workers: the
// n × p weights, and per worker the samples × p model input and design
// matrix, the p × p Gram matrix and its Cholesky factor, and vectors. The
// data and whatever the model allocates come on top.
func LIMEMemory(n, p, samples, workers int) float64 {
	return limeMemory(n, p, samples, workers, 1, 1)
}

// limeMemory is LIMEMemory for a model with k predictions per instance of
// which outs are explained: the weights of every explained output, and
// per worker the predictions of every output and a right-hand side per
// explained output.
func limeMemory(n, p, samples, workers, k, outs int) float64 {
	fn, fp, fs, fw, fk, fo := float64(n), float64(p), float64(samples), float64(workers), float64(k), float64(outs)
	return 8 * (fn*fo*fp + fw*(2*fs*fp+2*fp*fp+fs*(1+fk)+(2+fo)*fp))
}

// limeSetup is a LIME configuration with its defaults resolved against a
// dataset.
type limeSetup struct {
	samples, n, p int
	width, ridge  float64
	mu, sigma     []float64
	sel           outputs
}

// limeNeedsComplete is why LIME refuses data with missing values
// (method.RequireComplete).
const limeNeedsComplete = "LIME's surrogate is a linear regression on every one of the D·L cells, standardised by each cell's mean and SD, and its samples are drawn around those means, so a missing cell would have to be imputed"

// setup resolves the configuration against data and computes the column
// moments.
func (c LIME) setup(data *tempora.Dataset) (*limeSetup, error) {
	s, err := c.resolve(data)
	if err != nil {
		return nil, err
	}
	x := data.X
	// Population mean and SD per unrolled column, as scikit-learn's
	// StandardScaler computes them for lime.
	s.mu = make([]float64, s.p)
	s.sigma = make([]float64, s.p)
	for i := range x.M {
		for c, v := range x.Instance(i) {
			s.mu[c] += v
		}
	}
	for c := range s.mu {
		s.mu[c] /= float64(x.M)
	}
	for i := range x.M {
		for c, v := range x.Instance(i) {
			d := v - s.mu[c]
			s.sigma[c] += d * d
		}
	}
	for c := range s.sigma {
		s.sigma[c] = math.Sqrt(s.sigma[c] / float64(x.M))
		if s.sigma[c] == 0 {
			s.sigma[c] = 1
		}
	}
	return s, nil
}

// resolve checks the configuration and the data (complete, at least one
// instance) and resolves the defaults, without reading the data's values
// beyond the check: Explain and EstimateEvals share it, so each check has
// one owner.
func (c LIME) resolve(data *tempora.Dataset) (*limeSetup, error) {
	if err := requireComplete("LIME", data, 1, limeNeedsComplete); err != nil {
		return nil, err
	}
	if err := checkWorkers("LIME", c.Workers); err != nil {
		return nil, err
	}
	x := data.X
	s := &limeSetup{samples: c.Samples, n: x.M, p: x.D * x.L, width: c.KernelWidth, ridge: c.Ridge}
	switch {
	case c.Samples == 0:
		s.samples = DefaultLIMESamples
	case c.Samples < 2:
		return nil, fmt.Errorf("baselines: LIME Samples is %d, want at least 2 (or 0 for %d)", c.Samples, DefaultLIMESamples)
	}
	switch {
	case c.KernelWidth == 0:
		s.width = DefaultLIMEKernelScale * math.Sqrt(float64(s.p))
	case !(c.KernelWidth > 0) || math.IsInf(c.KernelWidth, 0):
		return nil, fmt.Errorf("baselines: LIME KernelWidth is %v, want a positive finite width (or 0 for the default)", c.KernelWidth)
	}
	switch {
	case c.Ridge == 0:
		s.ridge = DefaultLIMERidge
	case !(c.Ridge > 0) || math.IsInf(c.Ridge, 0):
		return nil, fmt.Errorf("baselines: LIME Ridge is %v, want a positive finite penalty (or 0 for %v)", c.Ridge, DefaultLIMERidge)
	}
	switch {
	case c.Instances < 0:
		return nil, fmt.Errorf("baselines: LIME Instances is %d, want 0 (all) or more", c.Instances)
	case c.Instances > x.M:
		return nil, fmt.Errorf("baselines: LIME Instances is %d but the data has only %d instances", c.Instances, x.M)
	case c.Instances > 0:
		s.n = c.Instances
	}
	sel, err := selectOutput("LIME", c.Output, data)
	if err != nil {
		return nil, err
	}
	s.sel = sel
	if err := c.checkMemory(s); err != nil {
		return nil, err
	}
	return s, nil
}

// checkMemory returns an error if LIMEMemory exceeds the memory limit.
func (c LIME) checkMemory(s *limeSetup) error {
	limit, source := c.MaxMemory, "LIME.MaxMemory"
	if limit == 0 {
		limit, source = memlimit.Default()
	}
	workers := min(method.Workers(c.Workers), s.n)
	what := fmt.Sprintf("LIME with %d samples per instance (%d columns, %d workers)", s.samples, s.p, workers)
	if err := memlimit.Check(what, limeMemory(s.n, s.p, s.samples, workers, s.sel.k, len(s.sel.cols)), limit, source); err != nil {
		return fmt.Errorf("baselines: %w", err)
	}
	return nil
}

// Explain implements tempora.Explainer. The method name is "LIME".
func (c LIME) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	r, err := c.Attribute(ctx, m, data)
	if err != nil {
		return nil, err
	}
	return r.Explanation, nil
}

// LIMEResult is a LIME run with its per-instance attributions.
type LIMEResult struct {
	// Explanation holds the global cell scores (method "LIME").
	Explanation *tempora.Explanation
	// Local holds the surrogate weights of the explained instances (the
	// first Instances of the data), n × D × L: each instance's local
	// attributions. For the whole model of a model with K outputs it holds
	// every output's, n × K × D × L as a tensor of n·K rows (row i·K + k
	// is instance i's weights of output k).
	Local *tempora.Tensor
}

// Attribute runs LIME and returns the global explanation and the
// per-instance surrogate weights.
func (c LIME) Attribute(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*LIMEResult, error) {
	start := time.Now()
	weights, sel, cm, err := c.localWeights(ctx, m, data)
	if err != nil {
		return nil, err
	}
	e := tempora.NewExplanation("LIME", data)
	p, outs := len(e.Cells), len(sel.cols)
	n := len(weights) / (p * outs)
	cells := make([][]float64, outs)
	for o := range cells {
		cells[o] = make([]float64, p)
		for i := range n {
			for k, w := range weights[(i*outs+o)*p : (i*outs+o+1)*p] {
				cells[o][k] += math.Abs(w)
			}
		}
		for k, v := range cells[o] {
			if c.SPLIME {
				cells[o][k] = math.Sqrt(v)
			} else {
				cells[o][k] = v / float64(n)
			}
		}
	}
	sel.finish(e, cells)
	cm.account(&e.Accounting)
	e.Accounting.Runtime = time.Since(start)
	return &LIMEResult{Explanation: e, Local: &tempora.Tensor{M: n * outs, D: data.X.D, L: data.X.L, Data: weights}}, nil
}

// localWeights returns the surrogate weights of the explained instances,
// for each the D·L weights of each explained output in turn (instance
// i's of its o-th explained output at [(i·outs + o)·D·L, …)), what they
// explain, and the counting model.
func (c LIME) localWeights(ctx context.Context, m tempora.Model, data *tempora.Dataset) ([]float64, outputs, *countingModel, error) {
	s, err := c.setup(data)
	if err != nil {
		return nil, outputs{}, nil, err
	}
	if m == nil {
		return nil, outputs{}, nil, fmt.Errorf("baselines: LIME: nil model")
	}
	cm := newCountingModel(m, data)
	size := len(s.sel.cols) * s.p
	weights := make([]float64, s.n*size)
	workers := min(method.Workers(c.Workers), s.n)
	bufs := make([]*limeWork, workers)
	err = method.Parallel(ctx, workers, s.n, func(w, i int) error {
		if bufs[w] == nil {
			bufs[w] = newLimeWork(s, data.X.D, data.X.L)
		}
		rng := tempora.NewRand(c.Seed, "lime", strconv.Itoa(i))
		return bufs[w].explain(weights[i*size:(i+1)*size], s, cm, data.X.Instance(i), rng.NormFloat64)
	})
	if err != nil {
		return nil, outputs{}, nil, err
	}
	return weights, s.sel, cm, nil
}

// limeWork holds one worker's buffers, reused across instances.
type limeWork struct {
	rows *tempora.Tensor // samples × D × L model input
	z    *mat.Dense      // standardised samples, then the centred and weighted design
	pred []float64
	wt   []float64
	mean []float64
	gram *mat.SymDense
	chol mat.Cholesky
	rhs  []*mat.VecDense // one per explained output
	beta *mat.VecDense
	ybar []float64 // one per explained output
}

func newLimeWork(s *limeSetup, d, l int) *limeWork {
	b := &limeWork{
		rows: tempora.NewTensor(s.samples, d, l),
		z:    mat.NewDense(s.samples, s.p, nil),
		pred: make([]float64, s.samples*s.sel.k),
		wt:   make([]float64, s.samples),
		mean: make([]float64, s.p),
		gram: mat.NewSymDense(s.p, nil),
		beta: mat.NewVecDense(s.p, nil),
		ybar: make([]float64, len(s.sel.cols)),
	}
	for range s.sel.cols {
		b.rhs = append(b.rhs, mat.NewVecDense(s.p, nil))
	}
	return b
}

// explain writes the surrogate weights of instance x into dst, those of
// each explained output in turn, drawing the standard normal samples from
// norm.
func (b *limeWork) explain(dst []float64, s *limeSetup, m tempora.Model, x []float64, norm func() float64) error {
	p, n := s.p, s.samples
	raw := b.z.RawMatrix()
	// Row 0 is the instance; the others are drawn around the training mean.
	copy(b.rows.Instance(0), x)
	z0 := raw.Data[:p]
	for c, v := range x {
		z0[c] = (v - s.mu[c]) / s.sigma[c]
	}
	for r := 1; r < n; r++ {
		zr := raw.Data[r*raw.Stride : r*raw.Stride+p]
		xr := b.rows.Instance(r)
		for c := range zr {
			v := norm()
			zr[c] = v
			xr[c] = s.mu[c] + s.sigma[c]*v
		}
	}
	if err := m.Predict(b.pred, b.rows); err != nil {
		return err
	}
	// Kernel weights on standardised euclidean distances to row 0:
	// sqrt(exp(−d²/width²)) = exp(−d²/(2·width²)).
	inv := 1 / (2 * s.width * s.width)
	var wsum float64
	for r := range n {
		zr := raw.Data[r*raw.Stride : r*raw.Stride+p]
		var d2 float64
		for c, v := range zr {
			d := v - z0[c]
			d2 += d * d
		}
		b.wt[r] = math.Exp(-d2 * inv)
		wsum += b.wt[r]
	}
	// Weighted means of the design and of each explained output's
	// response (prediction column cols[o] of the K per row).
	clear(b.mean)
	clear(b.ybar)
	k, cols := s.sel.k, s.sel.cols
	for r := range n {
		w := b.wt[r] / wsum
		zr := raw.Data[r*raw.Stride : r*raw.Stride+p]
		for c, v := range zr {
			b.mean[c] += w * v
		}
		for o, col := range cols {
			b.ybar[o] += w * b.pred[r*k+col]
		}
	}
	// Centre and scale rows by √w (scikit-learn's weighted Ridge), then
	// solve (ZᵀZ + αI)β = Zᵀ(√w·(y − ȳ)) for each explained output. The
	// weights of row 0 are kept after z0 is overwritten, since they were
	// computed above.
	for _, rhs := range b.rhs {
		clear(rhs.RawVector().Data)
	}
	for r := range n {
		sw := math.Sqrt(b.wt[r])
		zr := raw.Data[r*raw.Stride : r*raw.Stride+p]
		for c, v := range zr {
			zr[c] = sw * (v - b.mean[c])
		}
		for o, col := range cols {
			rhs := b.rhs[o].RawVector().Data
			yr := sw * (b.pred[r*k+col] - b.ybar[o])
			for c, v := range zr {
				rhs[c] += v * yr
			}
		}
	}
	g := b.gram.RawSymmetric()
	clear(g.Data)
	for lo := 0; lo < n; lo += limeGramBlock {
		gramAdd(g.Data, g.Stride, raw.Data, raw.Stride, lo, min(lo+limeGramBlock, n), p)
	}
	for c := range p {
		g.Data[c*g.Stride+c] += s.ridge
	}
	if ok := b.chol.Factorize(b.gram); !ok {
		return fmt.Errorf("baselines: LIME surrogate system is not positive definite")
	}
	for o, rhs := range b.rhs {
		if err := b.chol.SolveVecTo(b.beta, rhs); err != nil {
			return fmt.Errorf("baselines: LIME surrogate solve: %w", err)
		}
		copy(dst[o*p:(o+1)*p], b.beta.RawVector().Data)
	}
	return nil
}
