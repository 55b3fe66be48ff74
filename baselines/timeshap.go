package baselines

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/internal/memlimit"
	"github.com/tempora-dev/tempora/internal/pool"
)

// TimeSHAPLevel selects the players of TimeSHAP's coalitions.
type TimeSHAPLevel int

const (
	// CellLevel makes every cell (feature j, recent timestep t) a player.
	CellLevel TimeSHAPLevel = iota
	// EventLevel makes every recent timestep (all features at t) a player:
	// TimeSHAP's event-level explanation.
	EventLevel
	// FeatureLevel makes every feature over the recent timesteps a player:
	// TimeSHAP's feature-level explanation.
	FeatureLevel
)

// String returns "cell", "event" or "feature".
func (v TimeSHAPLevel) String() string {
	switch v {
	case CellLevel:
		return "cell"
	case EventLevel:
		return "event"
	case FeatureLevel:
		return "feature"
	}
	return fmt.Sprintf("TimeSHAPLevel(%d)", int(v))
}

// ParseTimeSHAPLevel parses "cell", "event" or "feature".
func ParseTimeSHAPLevel(s string) (TimeSHAPLevel, error) {
	switch s {
	case "cell":
		return CellLevel, nil
	case "event":
		return EventLevel, nil
	case "feature":
		return FeatureLevel, nil
	}
	return 0, fmt.Errorf("baselines: unknown TimeSHAP level %q (want cell, event or feature)", s)
}

// Defaults of the TimeSHAP configuration.
const (
	// DefaultTimeSHAPTolerance is the pruning tolerance η on the older
	// block's Shapley value, in units of the model's output, as TimeSHAP's
	// examples set it ({'tol': 0.025}).
	DefaultTimeSHAPTolerance = 0.025
	// DefaultTimeSHAPInstances is the number of explained instances (the
	// first ones of the data) when Instances is zero.
	DefaultTimeSHAPInstances = 100
	// TimeSHAPAutoSamples is the constant of the default number of
	// coalitions per instance, 2·players + TimeSHAPAutoSamples: the "auto"
	// of the KernelSHAP implementation TimeSHAP builds on.
	TimeSHAPAutoSamples = 2048
)

// timeshapGramBlock is the number of coalition rows per rank-k update of
// the regression's Gram matrix.
const timeshapGramBlock = 64

// TimeSHAP is KernelSHAP over temporal coalitions (Bento et al. 2021;
// KernelSHAP: Lundberg and Lee 2017), model-agnostic and local, with
// global cell scores aggregated from the local attributions. The zero
// value is the configuration described here.
//
// For each explained instance x (the first Instances of the data):
//
//  1. Temporal coalition pruning. Missing cells take the Baseline values b
//     (by default TimeSHAP's average event, each feature's mean). For
//     k = 1, 2, …, L−1 recent timesteps, the exact two-player Shapley value
//     of the older block O = x[:, :L−k] against the recent block R,
//     φ_O = ½[(f(x_O, b_R) − f(b)) + (f(x) − f(b_O, x_R))], is computed; the
//     number of recent timesteps kept is the first k with |φ_O| ≤ Tolerance,
//     or L if there is none. All 2L evaluations are one model call. With
//     Recent set, k = Recent instead and no pruning call is made.
//  2. Players. Level CellLevel (the default) makes each cell (j, t) of the
//     k recent timesteps a player; EventLevel each recent timestep (all
//     features), FeatureLevel each feature over the recent timesteps. The
//     older timesteps, if any, form one more player, the pruned coalition.
//  3. KernelSHAP. With P players, Samples coalitions (by default
//     2·P + TimeSHAPAutoSamples, at most 2^P − 2) are chosen as
//     KernelSHAP does: subset sizes from both ends (s and P−s) are
//     enumerated completely while the budget covers their share of the
//     Shapley kernel weight, the remaining sizes are sampled by their
//     kernel weight with each subset paired with its complement and
//     repeated draws adding weight. A coalition's row holds x in its
//     players' cells and b elsewhere; all rows, with x and b, are one
//     model call. The Shapley values solve the kernel-weighted least
//     squares with the efficiency constraint Σφ = f(x) − f(b) eliminated
//     (gonum/mat: Cholesky of the normal equations, or an eigenvalue
//     pseudo-inverse when they are singular). KernelSHAP's optional L1
//     feature selection is not applied.
//  4. Cells. A player's value is shared equally among its cells, so the
//     cell attributions of an instance sum to f(x) − f(b).
//
// The global score of a cell (Explanation.Cells) is the mean |attribution|
// over the explained instances, as TimeSHAP's global reports average local
// explanations; TimeSHAPResult.Local keeps the attributions. Pruned cells
// share the pruned coalition's value, which is at most Tolerance by
// construction, so they score low but not zero. TimeSHAP's cell level
// plays only the cells of the top events and features with grouped
// remainders; playing every recent cell is the same estimator without
// that selection.
//
// On data with missing values (docs/decisions.md, decision 21) each
// instance is explained on its own sequence (tempora.Observation.Support):
// its recent timesteps are the last of its own sequence, pruning runs over
// its own length, and each player is the set of its observed cells (a
// player with none is left out). An absent player replaces only observed
// cells by the baseline; missing cells and padding stay NaN in every
// coalition and get attribution 0, and an instance's attributions sum to
// f(x) − f(x with its observed cells at the baseline). The mean and event
// baselines are means over observed values.
//
// Instances are explained in parallel, each with its own stream derived
// from (Seed, "timeshap", instance), and combined in instance order, so the
// result does not depend on Workers. Each instance costs one or two model
// calls.
//
// References:
//
//   - J. Bento, P. Saleiro, A. F. Cruz, M. A. T. Figueiredo and P. Bizarro.
//     TimeSHAP: explaining recurrent models through sequence
//     perturbations. KDD 2021 (temporal coalitions, pruning, event, feature
//     and cell levels).
//   - S. M. Lundberg and S.-I. Lee. A unified approach to interpreting
//     model predictions. NeurIPS 2017 (KernelSHAP, the Shapley kernel).
type TimeSHAP struct {
	// Level selects the players; the zero value is CellLevel.
	Level TimeSHAPLevel
	// Recent, if positive, is the number of most recent timesteps whose
	// players are kept individually, replacing the pruning; it must not
	// exceed the data's timesteps. Zero means pruning by Tolerance.
	Recent int
	// Tolerance is the pruning tolerance η; zero means
	// DefaultTimeSHAPTolerance.
	Tolerance float64
	// Samples is the number of coalitions per instance; zero means
	// 2·players + TimeSHAPAutoSamples. It is capped at 2^players − 2.
	Samples int
	// Instances is the number of explained instances, the first of the
	// data; zero means min(DefaultTimeSHAPInstances, M).
	Instances int
	// Baseline replaces missing cells; DefaultBaseline means
	// EventBaseline.
	Baseline Baseline
	// Seed is the run seed of the sampling streams.
	Seed uint64
	// Workers is the number of goroutines; zero means GOMAXPROCS.
	Workers int
	// MaxMemory bounds, in bytes, the memory TimeSHAP plans to allocate
	// (TimeSHAPMemory); zero means the limit of internal/memlimit and a
	// negative value disables the check, as for LIME.
	MaxMemory int64
	// Output is the prediction explained, for a model with several
	// outputs: one output's (explain.OutputOf; a class's probability), or
	// with explain.WholeModel, the zero value, every output's, from the
	// same coalitions and model calls (each output's Shapley values are
	// the regression on its own predictions; the pruning keeps recent
	// timesteps until the older block's value is within Tolerance for
	// every output): a cell's score is then the mean over the outputs of
	// each output's score, which the explanation's Outputs holds, and
	// TimeSHAPResult.Local holds every output's attributions.
	Output explain.Output
}

var _ tempora.Explainer = TimeSHAP{}

// TimeSHAPResult is a TimeSHAP run with its per-instance attributions.
type TimeSHAPResult struct {
	// Explanation holds the global cell scores (method "TimeSHAP").
	Explanation *tempora.Explanation
	// Local holds the attributions of the explained instances, n × D × L.
	// For the whole model of a model with K outputs it holds every
	// output's, n × K × D × L as a tensor of n·K rows (row i·K + k is
	// instance i's attributions of output k).
	Local *tempora.Tensor
	// Recent holds, per explained instance, the number of recent
	// timesteps kept individually (the pruning's outcome).
	Recent []int
}

// TimeSHAPMemory estimates the bytes TimeSHAP allocates for n explained
// instances of d features × l timesteps with the given coalitions per
// instance (0: the default for the largest player count, d·l + 1) and
// workers: the n × d × l attributions, and per worker the model input
// (coalitions + 2l + 2 rows), the design matrix, the masks and their
// table of sampled coalitions, the Gram matrix with its Cholesky factor and eigenvectors,
// and vectors. The data and whatever the model allocates come on top.
func TimeSHAPMemory(n, d, l, samples, workers int) float64 {
	return timeSHAPMemory(n, d, l, samples, workers, 1, 1)
}

// timeSHAPMemory is TimeSHAPMemory for a model with k predictions per
// instance of which outs are explained: the attributions of every
// explained output, and per worker the predictions of every output.
func timeSHAPMemory(n, d, l, samples, workers, k, outs int) float64 {
	cells := float64(d * l)
	p := cells + 1 // players at most
	s := float64(samples)
	if samples == 0 {
		s = 2*p + TimeSHAPAutoSamples
	}
	rows := s + 2*float64(l) + 2
	perWorker := 8*rows*cells + 8*s*p + 2*s*p + 24*p*p + 64*s + 8*rows*float64(k-1) + 16*p*float64(outs-1)
	return 8*float64(n)*float64(outs)*cells + float64(workers)*perWorker
}

// timeshapSetup is a TimeSHAP configuration resolved against a dataset.
type timeshapSetup struct {
	n, d, l   int
	tol       float64
	recent    int
	samples   int
	level     TimeSHAPLevel
	base      []float64
	maxRows   int
	maxPlayer int
	support   []tempora.Window // each instance's span of timesteps
	sel       outputs
}

func (c TimeSHAP) setup(data *tempora.Dataset) (*timeshapSetup, error) {
	obs, err := data.Observe(1)
	if err != nil {
		return nil, fmt.Errorf("baselines: TimeSHAP: %w", err)
	}
	if err := checkWorkers("TimeSHAP", c.Workers); err != nil {
		return nil, err
	}
	x := data.X
	s := &timeshapSetup{d: x.D, l: x.L, tol: c.Tolerance, recent: c.Recent, samples: c.Samples, level: c.Level, support: obs.Support}
	if c.Level != CellLevel && c.Level != EventLevel && c.Level != FeatureLevel {
		return nil, fmt.Errorf("baselines: unknown TimeSHAP level %d", int(c.Level))
	}
	switch {
	case c.Tolerance == 0:
		s.tol = DefaultTimeSHAPTolerance
	case !(c.Tolerance > 0) || math.IsInf(c.Tolerance, 0):
		return nil, fmt.Errorf("baselines: TimeSHAP Tolerance is %v, want a positive finite tolerance (or 0 for %v)", c.Tolerance, DefaultTimeSHAPTolerance)
	}
	if c.Recent < 0 || c.Recent > x.L {
		return nil, fmt.Errorf("baselines: TimeSHAP Recent is %d, want 1 to the %d timesteps (or 0 to prune by tolerance)", c.Recent, x.L)
	}
	if c.Samples < 0 {
		return nil, fmt.Errorf("baselines: TimeSHAP Samples is %d, want 0 (automatic) or more", c.Samples)
	}
	switch {
	case c.Instances < 0:
		return nil, fmt.Errorf("baselines: TimeSHAP Instances is %d, want 0 (min(%d, all)) or more", c.Instances, DefaultTimeSHAPInstances)
	case c.Instances > x.M:
		return nil, fmt.Errorf("baselines: TimeSHAP Instances is %d but the data has only %d instances", c.Instances, x.M)
	case c.Instances == 0:
		s.n = min(DefaultTimeSHAPInstances, x.M)
	default:
		s.n = c.Instances
	}
	b := c.Baseline
	if b == DefaultBaseline {
		b = EventBaseline
	}
	if s.base, err = b.values(x); err != nil {
		return nil, err
	}
	// The most players an instance can have: k recent timesteps give
	// D·k, k or D players, plus the pruned one when k < L.
	k, prunable := x.L, x.L > 1
	if c.Recent > 0 {
		k, prunable = c.Recent, c.Recent < x.L
	}
	extra := 0
	if prunable {
		extra = 1
	}
	switch s.level {
	case CellLevel:
		s.maxPlayer = x.D * k
		if c.Recent > 0 {
			s.maxPlayer += extra // with pruning, k = L (no pruned player) is the most
		}
	case EventLevel:
		s.maxPlayer = k
		if c.Recent > 0 {
			s.maxPlayer += extra
		}
	case FeatureLevel:
		s.maxPlayer = x.D + extra
	}
	s.maxRows = max(kernelSamples(s.maxPlayer, c.Samples), 2*x.L) + 2
	if s.sel, err = selectOutput("TimeSHAP", c.Output, data); err != nil {
		return nil, err
	}
	limit, source := c.MaxMemory, "TimeSHAP.MaxMemory"
	if limit == 0 {
		limit, source = memlimit.Default()
	}
	workers := min(pool.Workers(c.Workers), s.n)
	what := fmt.Sprintf("TimeSHAP with %d coalitions per instance (%d players, %d workers)", kernelSamples(s.maxPlayer, c.Samples), s.maxPlayer, workers)
	if err := memlimit.Check(what, timeSHAPMemory(s.n, x.D, x.L, c.Samples, workers, s.sel.k, len(s.sel.cols)), limit, source); err != nil {
		return nil, fmt.Errorf("baselines: %w", err)
	}
	return s, nil
}

// kernelSamples returns the number of coalitions for p players: samples
// (or 2p + TimeSHAPAutoSamples when 0), at most 2^p − 2 (every coalition
// but the empty and the full one).
func kernelSamples(p, samples int) int {
	if samples == 0 {
		samples = 2*p + TimeSHAPAutoSamples
	}
	if p < 62 {
		samples = min(samples, 1<<p-2)
	}
	return samples
}

// Explain implements tempora.Explainer. The method name is "TimeSHAP".
func (c TimeSHAP) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	r, err := c.Attribute(ctx, m, data)
	if err != nil {
		return nil, err
	}
	return r.Explanation, nil
}

// Attribute explains the first instances and returns the global
// explanation, the per-instance attributions and the pruning outcomes.
func (c TimeSHAP) Attribute(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*TimeSHAPResult, error) {
	start := time.Now()
	s, err := c.setup(data)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("baselines: TimeSHAP: nil model")
	}
	cm := newCountingModel(m, data)
	x := data.X
	p := x.D * x.L
	outs := len(s.sel.cols)
	local := tempora.NewTensor(s.n*outs, x.D, x.L)
	recent := make([]int, s.n)
	workers := min(pool.Workers(c.Workers), s.n)
	bufs := make([]*shapWork, workers)
	err = pool.Run(ctx, workers, s.n, func(w, i int) error {
		if bufs[w] == nil {
			bufs[w] = newShapWork(s)
		}
		rng := tempora.NewRand(c.Seed, "timeshap", strconv.Itoa(i))
		k, err := bufs[w].explain(ctx, local.Data[i*outs*p:(i+1)*outs*p], s, cm, i, x.Instance(i), s.support[i], rng)
		recent[i] = k
		return err
	})
	if err != nil {
		return nil, wrapRun("TimeSHAP", err)
	}
	e := tempora.NewExplanation("TimeSHAP", data)
	cells := make([][]float64, outs)
	for o := range cells {
		cells[o] = make([]float64, p)
		for i := range s.n {
			for k, v := range local.Data[(i*outs+o)*p : (i*outs+o+1)*p] {
				cells[o][k] += math.Abs(v)
			}
		}
		for k := range cells[o] {
			cells[o][k] /= float64(s.n)
		}
	}
	s.sel.finish(e, cells)
	cm.account(&e.Accounting)
	e.Accounting.Runtime = time.Since(start)
	return &TimeSHAPResult{Explanation: e, Local: local, Recent: recent}, nil
}

// shapWork holds one worker's buffers, grown as needed and reused across
// instances, so that explaining an instance allocates nothing once they
// have grown.
type shapWork struct {
	rows    []float64 // model input, rows × D × L
	in      tempora.Tensor
	pred    []float64
	base    []float64 // the instance's all-absent row
	cells   []int     // the players' cells, player q's at cells[start[q]:start[q+1]]
	start   []int
	masks   []bool    // coalition × player
	weights []float64 // kernel weight per coalition
	design  []float64
	gram    []float64
	rhs     []float64
	phi     []float64
	chol    mat.Cholesky
	sys     shapSystem
	// The coalition sampler's buffers: the Shapley kernel per subset size,
	// what is left of it, its cumulative sums, a subset's indices, a mask,
	// a partial shuffle, and an open-addressing table of the sampled
	// coalitions (row index + 1, 0 empty) that finds repeated draws.
	kernel, remaining, cum []float64
	idx, perm              []int
	mask                   []bool
	table                  []int
}

func newShapWork(s *timeshapSetup) *shapWork {
	p := s.d * s.l
	coalitions := kernelSamples(s.maxPlayer, s.samples)
	return &shapWork{
		rows:    make([]float64, s.maxRows*p),
		pred:    make([]float64, s.maxRows*s.sel.k),
		base:    make([]float64, p),
		masks:   make([]bool, 0, coalitions*s.maxPlayer),
		weights: make([]float64, 0, coalitions),
	}
}

// tensor returns the first n rows of b.rows as a tensor, without
// allocating.
func (b *shapWork) tensor(s *timeshapSetup, n int) *tempora.Tensor {
	b.in = tempora.Tensor{M: n, D: s.d, L: s.l, Data: b.rows[:n*s.d*s.l]}
	return &b.in
}

// players fills b.cells and b.start with the players of an instance x
// whose sequence spans sup, k of its timesteps recent: the observed cells
// of each recent cell, event or feature, then those of the older
// timesteps (the pruned player). A player with no observed cell is left
// out; on complete data none is.
func (b *shapWork) players(s *timeshapSetup, k int, sup tempora.Window, x []float64) {
	b.cells, b.start = b.cells[:0], b.start[:0]
	first := sup.End - k + 1
	add := func(c int) {
		if !tempora.Missing(x[c]) {
			b.cells = append(b.cells, c)
		}
	}
	close := func() {
		if n := len(b.start); n == 0 || b.start[n-1] < len(b.cells) {
			b.start = append(b.start, len(b.cells))
		}
	}
	b.start = append(b.start, 0)
	switch s.level {
	case CellLevel:
		for j := range s.d {
			for t := first; t <= sup.End; t++ {
				add(j*s.l + t)
				close()
			}
		}
	case EventLevel:
		for t := first; t <= sup.End; t++ {
			for j := range s.d {
				add(j*s.l + t)
			}
			close()
		}
	case FeatureLevel:
		for j := range s.d {
			for t := first; t <= sup.End; t++ {
				add(j*s.l + t)
			}
			close()
		}
	}
	if first > sup.Start {
		for j := range s.d {
			for t := sup.Start; t < first; t++ {
				add(j*s.l + t)
			}
		}
		close()
	}
}

// group returns player q's cells.
func (b *shapWork) group(q int) []int { return b.cells[b.start[q]:b.start[q+1]] }

// explain writes the cell attributions of instance x, whose sequence spans
// sup, into dst, those of each explained output in turn, and returns the
// number of recent timesteps kept.
func (b *shapWork) explain(ctx context.Context, dst []float64, s *timeshapSetup, m *countingModel, i int, x []float64, sup tempora.Window, rng *rand.Rand) (int, error) {
	p := s.d * s.l
	// The all-absent row: the baseline in the observed cells, the
	// instance's NaN in its missing cells and padding.
	for c, v := range x {
		if tempora.Missing(v) {
			b.base[c] = v
		} else {
			b.base[c] = s.base[c]
		}
	}
	k := min(s.recent, sup.Len())
	if k == 0 {
		var err error
		if k, err = b.prune(s, m, i, x, sup); err != nil {
			return 0, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
	b.players(s, k, sup, x)
	np := len(b.start) - 1
	ns := kernelSamples(np, s.samples)
	if np == 1 {
		ns = 0
	}
	b.coalitions(np, ns, rng)
	ns = len(b.weights)
	// Rows: x, b, then one per coalition.
	rows := b.rows[:(ns+2)*p]
	copy(rows[:p], x)
	copy(rows[p:2*p], b.base)
	for r := range ns {
		row := rows[(r+2)*p : (r+3)*p]
		copy(row, b.base)
		for q, in := range b.masks[r*np : (r+1)*np] {
			if in {
				for _, c := range b.group(q) {
					row[c] = x[c]
				}
			}
		}
	}
	kk := s.sel.k
	pred := b.pred[:(ns+2)*kk]
	if err := m.predictRows(pred, b.tensor(s, ns+2), shapRow(i).describe); err != nil {
		return 0, err
	}
	if cap(b.phi) < np {
		b.phi = make([]float64, np)
	}
	phi := b.phi[:np]
	var sys *shapSystem
	if np > 1 {
		var err error
		if sys, err = b.factor(np, ns); err != nil {
			return 0, err
		}
	}
	clear(dst)
	for o, col := range s.sel.cols {
		fx, fb := pred[col], pred[kk+col]
		if np == 1 {
			phi[0] = fx - fb
		} else if err := b.solve(sys, phi, np, ns, pred[2*kk:], kk, col, fx, fb); err != nil {
			return 0, err
		}
		out := dst[o*p : (o+1)*p]
		for q := range np {
			g := b.group(q)
			share := phi[q] / float64(len(g))
			for _, c := range g {
				out[c] = share
			}
		}
	}
	return k, nil
}

// shapRow is an explained instance i, whose describe says what row r of
// one of its calls is, for a model error: row 0 is the instance, row 1 its
// baseline, the others its coalitions (or pruning rows).
type shapRow int

func (i shapRow) describe(r int) string {
	switch r {
	case 0:
		return fmt.Sprintf("instance %d", i)
	case 1:
		return fmt.Sprintf("instance %d with its observed cells at the baseline", i)
	}
	return fmt.Sprintf("instance %d with some players at the baseline", i)
}

// prune returns the number of recent timesteps TimeSHAP's temporal
// coalition pruning keeps for instance x, whose sequence spans sup (of
// length n): the first k in 1…n−1 at which the older block's two-player
// Shapley value is at most the tolerance in magnitude, else n. A block
// replaces only its observed cells.
func (b *shapWork) prune(s *timeshapSetup, m *countingModel, i int, x []float64, sup tempora.Window) (int, error) {
	p, l, n := s.d*s.l, s.l, sup.Len()
	if n == 1 {
		return 1, nil
	}
	rows := b.rows[:2*n*p]
	copy(rows[:p], x)
	copy(rows[p:2*p], b.base)
	for k := 1; k < n; k++ {
		older := rows[2*k*p : (2*k+1)*p]          // x before the last k, b after
		recentOnly := rows[(2*k+1)*p : (2*k+2)*p] // b before the last k, x after
		for j := range s.d {
			for t := range l {
				c := j*l + t
				if t <= sup.End-k {
					older[c], recentOnly[c] = x[c], b.base[c]
				} else {
					older[c], recentOnly[c] = b.base[c], x[c]
				}
			}
		}
	}
	kk := s.sel.k
	pred := b.pred[:2*n*kk]
	if err := m.predictRows(pred, b.tensor(s, 2*n), shapRow(i).describe); err != nil {
		return 0, err
	}
	for k := 1; k < n; k++ {
		within := true
		for _, c := range s.sel.cols {
			fx, fb := pred[c], pred[kk+c]
			phiOld := ((pred[2*k*kk+c] - fb) + (fx - pred[(2*k+1)*kk+c])) / 2
			within = within && math.Abs(phiOld) <= s.tol
		}
		if within {
			return k, nil
		}
	}
	return n, nil
}

// binomial returns C(n, k) in floating point (+Inf when it overflows).
func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// coalitions fills b.masks and b.weights with KernelSHAP's coalitions of
// np players within a budget of ns: complete subset sizes from both ends
// while the budget covers their kernel weight, then sampled sizes with
// complements, duplicates adding weight.
func (b *shapWork) coalitions(np, ns int, rng *rand.Rand) {
	b.masks = b.masks[:0]
	b.weights = b.weights[:0]
	if ns == 0 || np < 2 {
		return
	}
	sizes := np / 2        // ⌈(np−1)/2⌉ subset sizes s = 1…sizes, with np−s
	paired := (np - 1) / 2 // the sizes s < np−s, whose complements differ in size
	kernel := grow(&b.kernel, sizes)
	var total float64
	for i := range kernel {
		s := float64(i + 1)
		kernel[i] = float64(np-1) / (s * (float64(np) - s))
		if i < paired {
			kernel[i] *= 2
		}
		total += kernel[i]
	}
	for i := range kernel {
		kernel[i] /= total
	}
	add := func(mask []bool, w float64) {
		b.masks = append(b.masks, mask...)
		b.weights = append(b.weights, w)
	}
	if cap(b.mask) < np {
		b.mask = make([]bool, np)
	}
	mask := b.mask[:np]
	left := ns
	full := 0
	remaining := grow(&b.remaining, sizes)
	copy(remaining, kernel)
	for size := 1; size <= sizes; size++ {
		n := binomial(np, size)
		if size <= paired {
			n *= 2
		}
		if float64(left)*remaining[size-1]/n < 1-1e-8 {
			break
		}
		full++
		left -= int(n)
		if remaining[size-1] < 1 {
			r := remaining[size-1]
			for i := range remaining {
				remaining[i] /= 1 - r
			}
		}
		w := kernel[size-1] / binomial(np, size)
		if size <= paired {
			w /= 2
		}
		// Every subset of this size, in lexicographic order of indices.
		if cap(b.idx) < size {
			b.idx = make([]int, size)
		}
		idx := b.idx[:size]
		for i := range idx {
			idx[i] = i
		}
		for {
			clear(mask)
			for _, q := range idx {
				mask[q] = true
			}
			add(mask, w)
			if size <= paired {
				for q := range mask {
					mask[q] = !mask[q]
				}
				add(mask, w)
			}
			i := size - 1
			for i >= 0 && idx[i] == np-size+i {
				i--
			}
			if i < 0 {
				break
			}
			idx[i]++
			for k := i + 1; k < size; k++ {
				idx[k] = idx[k-1] + 1
			}
		}
	}
	if full == sizes || left <= 0 {
		return
	}
	fixed := len(b.weights)
	// Sample the other sizes by their share of the kernel weight (halved
	// for paired sizes, whose complement comes along).
	cum := grow(&b.cum, sizes-full)
	var sum float64
	for i := range cum {
		v := kernel[full+i]
		if full+i < paired {
			v /= 2
		}
		sum += v
		cum[i] = sum
	}
	if cap(b.perm) < np {
		b.perm = make([]int, np)
	}
	perm := b.perm[:np]
	// The table holds at most ns − fixed sampled coalitions at a load of at
	// most a half.
	tsize := 1
	for tsize < 2*(ns-fixed) {
		tsize <<= 1
	}
	if cap(b.table) < tsize {
		b.table = make([]int, tsize)
	}
	table := b.table[:tsize]
	clear(table)
	for draws := 0; left > 0 && draws < 4*(ns-fixed); draws++ {
		u := rng.Float64() * sum
		ind := 0
		for ind < len(cum)-1 && cum[ind] <= u {
			ind++
		}
		size := ind + full + 1
		// A uniform subset of the size: a partial Fisher–Yates shuffle.
		for q := range perm {
			perm[q] = q
		}
		clear(mask)
		for q := range size {
			r := q + rng.IntN(np-q)
			perm[q], perm[r] = perm[r], perm[q]
			mask[perm[q]] = true
		}
		slot := maskHash(mask) & uint64(tsize-1)
		at, seen := 0, false
		for ; table[slot] != 0; slot = (slot + 1) & uint64(tsize-1) {
			if at = table[slot] - 1; slices.Equal(b.masks[at*np:(at+1)*np], mask) {
				seen = true
				break
			}
		}
		if !seen {
			at = len(b.weights)
			table[slot] = at + 1
			add(mask, 1)
			left--
		} else {
			b.weights[at]++
		}
		if left > 0 && size <= paired {
			if !seen {
				for q := range mask {
					mask[q] = !mask[q]
				}
				add(mask, 1)
				left--
			} else {
				b.weights[at+1]++
			}
		}
	}
	// The sampled coalitions share the kernel weight of the sizes not
	// enumerated, in proportion to their counts.
	var wLeft, wSampled float64
	for _, v := range kernel[full:] {
		wLeft += v
	}
	for _, v := range b.weights[fixed:] {
		wSampled += v
	}
	for r := fixed; r < len(b.weights); r++ {
		b.weights[r] *= wLeft / wSampled
	}
}

// grow returns (*buf)[:n], reallocating it when its capacity is short.
func grow(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// maskHash is the FNV-1a hash of a coalition's membership bits.
func maskHash(mask []bool) uint64 {
	h := uint64(14695981039346656037)
	for _, in := range mask {
		v := uint64(0)
		if in {
			v = 1
		}
		h = (h ^ v) * 1099511628211
	}
	return h
}

// shapSystem is the factorised normal equations of KernelSHAP's
// regression of one instance's coalitions: the Cholesky factor, or, when
// they are singular, their eigenvalues and eigenvectors (chol nil).
type shapSystem struct {
	chol *mat.Cholesky
	vals []float64
	vecs mat.Dense
}

// factor builds the kernel-weighted design of np players' ns coalitions,
// the last player eliminated by the efficiency constraint, and factorises
// its normal equations.
func (b *shapWork) factor(np, ns int) (*shapSystem, error) {
	q := np - 1
	if cap(b.design) < ns*q {
		b.design = make([]float64, ns*q)
	}
	if cap(b.gram) < q*q {
		b.gram = make([]float64, q*q)
	}
	z := mat.NewDense(ns, q, b.design[:ns*q])
	raw := z.RawMatrix()
	for r := range ns {
		mask := b.masks[r*np : (r+1)*np]
		last := 0.0
		if mask[q] {
			last = 1
		}
		sw := math.Sqrt(b.weights[r])
		zr := raw.Data[r*raw.Stride : r*raw.Stride+q]
		for c := range zr {
			v := -last
			if mask[c] {
				v++
			}
			zr[c] = v * sw
		}
	}
	g := mat.NewSymDense(q, b.gram[:q*q])
	clear(b.gram[:q*q])
	// g += Z_blockᵀ Z_block per block of rows, as g.SymRankK(g, 1,
	// z.Slice(lo, hi, 0, q).T()) computes it, without allocating the views.
	gs := g.RawSymmetric()
	for lo := 0; lo < ns; lo += timeshapGramBlock {
		hi := min(lo+timeshapGramBlock, ns)
		blk := blas64.General{Rows: hi - lo, Cols: q, Stride: raw.Stride, Data: raw.Data[lo*raw.Stride:]}
		blas64.Syrk(blas.Trans, 1, blk, 1, gs)
	}
	sys := &b.sys
	if b.chol.Factorize(g) {
		sys.chol = &b.chol
		return sys, nil
	}
	// Singular normal equations (a player never varied apart from the
	// last): the minimum-norm solution through the pseudo-inverse.
	return sys, sys.eigen(g)
}

// eigen sets sys to the eigendecomposition of the normal equations g.
func (sys *shapSystem) eigen(g *mat.SymDense) error {
	sys.chol = nil
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		return fmt.Errorf("baselines: TimeSHAP: the regression's eigendecomposition failed")
	}
	sys.vals = eig.Values(nil)
	sys.vecs = mat.Dense{}
	eig.VectorsTo(&sys.vecs)
	return nil
}

// solve writes into phi the Shapley values of np players from ns
// coalitions with predictions pred (k per row, the explained output's in
// column col): the kernel-weighted least squares of pred − fb on the
// masks under Σφ = fx − fb, the last player eliminated, through sys (the
// factorised normal equations of the design, factor).
func (b *shapWork) solve(sys *shapSystem, phi []float64, np, ns int, pred []float64, k, col int, fx, fb float64) error {
	q := np - 1
	if cap(b.rhs) < q {
		b.rhs = make([]float64, q)
	}
	rhs := b.rhs[:q]
	clear(rhs)
	total := fx - fb
	raw := b.design[:ns*q]
	for r := range ns {
		last := 0.0
		if b.masks[r*np+q] {
			last = 1
		}
		y := math.Sqrt(b.weights[r]) * (pred[r*k+col] - fb - last*total)
		for c, v := range raw[r*q : (r+1)*q] {
			rhs[c] += v * y
		}
	}
	if sys.chol != nil {
		sol := mat.NewVecDense(q, phi[:q])
		if err := sys.chol.SolveVecTo(sol, mat.NewVecDense(q, rhs)); err == nil {
			finishPhi(phi, q, total)
			return nil
		}
		// A failed solve: the pseudo-inverse, as for singular equations.
		if err := sys.eigen(mat.NewSymDense(q, b.gram[:q*q])); err != nil {
			return err
		}
	}
	top := 0.0
	for _, v := range sys.vals {
		top = math.Max(top, math.Abs(v))
	}
	cut := top * float64(q) * 1e-12
	clear(phi[:q])
	for k, v := range sys.vals {
		if v <= cut {
			continue
		}
		var proj float64
		for c := range q {
			proj += sys.vecs.At(c, k) * rhs[c]
		}
		proj /= v
		for c := range q {
			phi[c] += proj * sys.vecs.At(c, k)
		}
	}
	finishPhi(phi, q, total)
	return nil
}

// finishPhi sets the eliminated last player's value from the efficiency
// constraint.
func finishPhi(phi []float64, q int, total float64) {
	var s float64
	for _, v := range phi[:q] {
		s += v
	}
	phi[q] = total - s
}
