package baselines

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/internal/memlimit"
	"github.com/tempora-dev/tempora/internal/pool"
)

// Baseline is what stands in for a cell that a perturbation method removes:
// an occluded cell of Occlusion, a missing player's cell of TimeSHAP.
type Baseline int

const (
	// DefaultBaseline is the method's own default: ZeroBaseline for
	// Occlusion, EventBaseline for TimeSHAP.
	DefaultBaseline Baseline = iota
	// ZeroBaseline replaces a cell by 0 (captum's default baseline; the
	// reference implementation's occlusion-zero).
	ZeroBaseline
	// MeanBaseline replaces cell (j, t) by its mean over the data's
	// instances.
	MeanBaseline
	// EventBaseline replaces cell (j, t) by feature j's mean over the
	// data's instances and timesteps: TimeSHAP's "average event", the same
	// at every timestep.
	EventBaseline
)

// String returns "default", "zero", "mean" or "event".
func (b Baseline) String() string {
	switch b {
	case DefaultBaseline:
		return "default"
	case ZeroBaseline:
		return "zero"
	case MeanBaseline:
		return "mean"
	case EventBaseline:
		return "event"
	}
	return fmt.Sprintf("Baseline(%d)", int(b))
}

// ParseBaseline parses "zero", "mean" or "event", and "default" or the
// empty string as DefaultBaseline.
func ParseBaseline(s string) (Baseline, error) {
	switch s {
	case "", "default":
		return DefaultBaseline, nil
	case "zero":
		return ZeroBaseline, nil
	case "mean":
		return MeanBaseline, nil
	case "event":
		return EventBaseline, nil
	}
	return 0, fmt.Errorf("baselines: unknown baseline %q (want zero, mean or event)", s)
}

// values returns the D·L baseline values of b (not DefaultBaseline) for x,
// entry j·L+t. Means are over the observed (non-NaN) values: MeanBaseline's
// cell mean over the instances that observe the cell (NaN for a cell no
// instance observes), EventBaseline's mean of feature j's cell means over
// the timesteps at which some instance observes it. On complete data these
// are the plain means.
func (b Baseline) values(x *tempora.Tensor) ([]float64, error) {
	p := x.D * x.L
	v := make([]float64, p)
	switch b {
	case ZeroBaseline:
	case MeanBaseline, EventBaseline:
		n := make([]int, p)
		for i := range x.M {
			for c, xc := range x.Instance(i) {
				if !tempora.Missing(xc) {
					v[c] += xc
					n[c]++
				}
			}
		}
		for c := range v {
			v[c] /= float64(n[c]) // 0/0: NaN for a cell never observed
		}
		if b == EventBaseline {
			for j := range x.D {
				row := v[j*x.L : (j+1)*x.L]
				var s float64
				var k int
				for _, r := range row {
					if !tempora.Missing(r) {
						s += r
						k++
					}
				}
				for t := range row {
					row[t] = s / float64(k)
				}
			}
		}
	default:
		return nil, fmt.Errorf("baselines: unknown baseline %d", int(b))
	}
	return v, nil
}

// Defaults of the Occlusion configuration.
const (
	// DefaultOcclusionWidth is the width in timesteps of the occluded
	// window: one cell, the feature occlusion of Suresh et al. (2017) and
	// the reference implementation's occlusion-zero explainer.
	DefaultOcclusionWidth = 1
	// DefaultOcclusionStride is the step between window starts, captum's
	// default.
	DefaultOcclusionStride = 1
)

// Occlusion is sliding-window feature occlusion (Zeiler and Fergus 2014,
// applied to time series as feature occlusion by Suresh et al. 2017 and as
// captum's Occlusion with a window over time per feature). For each
// feature j and each window [s, s+Width) of its timesteps, the window's
// cells of every instance are replaced by the Baseline, and the change of
// the model's output
//
//	Δ_i(j, window) = f(x_i) − f(x_i with the window occluded)
//
// is recorded (the probability of class 1 for classification). Windows
// start at 0, Stride, 2·Stride, … until one reaches the last timestep; as
// in captum, the last window may be cut off at the end of the sequence.
//
// The score of a window is the output change, not a loss increase: that is
// how occlusion is defined and run in the literature (captum, the
// reference implementation), and it needs no targets. A cell's global
// score (Explanation.Cells) is the mean over instances of |Δ_i|, averaged
// over the windows covering the cell; its per-instance attribution
// (OcclusionResult.Local) is the signed Δ_i averaged over the same
// windows, as captum attributes. Feature scores follow the benchmark's
// rule (method.FeatureScores).
//
// On data with missing values (docs/decisions.md, decision 21) a window
// replaces only the observed cells of each instance; missing cells and
// padding stay NaN, as the model sees them. A window's score is the mean
// |Δ_i| over the instances in which it occluded an observed cell, a cell
// that no instance observes scores 0, and an instance's unobserved cell
// has no attribution. The mean and event baselines are means over the
// observed values.
//
// The zero value occludes one cell at a time with zeros. Occlusion draws
// no random numbers. It predicts the M instances once unoccluded and once
// per (feature, window), 1 + D·W times, W the number of windows per
// feature. The units are packed into model calls: a call holds several
// copies of small data (up to 2 MiB of values), each with one unit's
// window occluded, or one copy of larger data, or, when every worker's
// copy would not fit MemoryBudget, a chunk of instances of one unit
// (internal/memlimit.ChunkRows, the rule of TIME's working copies). Calls
// are evaluated in parallel, each worker rewriting only the windows of
// its private copies, and combined in a fixed order, so the result does
// not depend on Workers or on how the calls are packed.
//
// References:
//
//   - M. D. Zeiler and R. Fergus. Visualizing and understanding
//     convolutional networks. ECCV 2014 (occlusion with a sliding window).
//   - H. Suresh, N. Hunt, A. Johnson, L. A. Celi, P. Szolovits and
//     M. Ghassemi. Clinical intervention prediction and understanding with
//     deep neural networks. MLHC 2017 (feature occlusion over time).
//   - N. Kokhlikyan et al. Captum: a unified and generic model
//     interpretability library for PyTorch. arXiv:2009.07896, 2020
//     (Occlusion: windows, strides, cut-off last window, averaging over
//     covering windows).
type Occlusion struct {
	// Width is the window width in timesteps; zero means
	// DefaultOcclusionWidth. It must not exceed the data's timesteps.
	Width int
	// Stride is the step between window starts; zero means
	// DefaultOcclusionStride. It must not exceed the width, which would
	// leave timesteps that no window occludes.
	Stride int
	// Baseline replaces the occluded cells; DefaultBaseline means
	// ZeroBaseline.
	Baseline Baseline
	// Workers is the number of goroutines; zero means GOMAXPROCS.
	Workers int
	// MemoryBudget is the bytes the workers' working copies of the data may
	// use, as for TIME (explain.TIME.MemoryBudget): each worker copies the
	// whole data when every worker's copy fits, else it predicts chunks of
	// instances. Zero means memlimit's default (CopyBudget), the smaller of
	// 256 MiB and a quarter of the memory limit. Results are the same either way.
	MemoryBudget int64
	// Output is the prediction whose change is recorded, for a model with
	// several outputs: one output's (explain.OutputOf; a class's
	// probability), or with explain.WholeModel, the zero value, every
	// output's from the same model calls: a cell's score is then the mean
	// over the outputs of each output's score, which the explanation's
	// Outputs holds, and OcclusionResult.Local holds every output's
	// attributions.
	Output explain.Output
}

var _ tempora.Explainer = Occlusion{}

// OcclusionResult is an occlusion run with its per-instance attributions.
type OcclusionResult struct {
	// Explanation holds the global cell scores (method "OCC").
	Explanation *tempora.Explanation
	// Local holds the per-instance attributions, M × D × L like the data:
	// the signed output change f(x) − f(x occluded) averaged over the
	// windows covering each cell. For the whole model of a model with K
	// outputs it holds every output's, M × K × D × L as a tensor of M·K
	// rows (row i·K + k is instance i's attributions of output k).
	Local *tempora.Tensor
}

// occlusionWindows returns the windows [start, end) of width w and stride
// s ≤ w over l ≥ w timesteps, the last cut off at l.
func occlusionWindows(l, w, s int) [][2]int {
	var ws [][2]int
	for start := 0; ; start += s {
		ws = append(ws, [2]int{start, min(start+w, l)})
		if start+w >= l {
			return ws
		}
	}
}

// Explain implements tempora.Explainer. The method name is "OCC".
func (c Occlusion) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	r, err := c.Attribute(ctx, m, data)
	if err != nil {
		return nil, err
	}
	return r.Explanation, nil
}

// occSetup is an Occlusion configuration resolved against a dataset.
type occSetup struct {
	complete bool // the data has no missing value
	w, s     int
	b        Baseline
	wins     [][2]int
	sel      outputs
}

// resolve checks the data (which may have missing values) and the
// configuration and resolves the defaults: Attribute and EstimateEvals
// share it, so each check has one owner.
func (c Occlusion) resolve(data *tempora.Dataset) (*occSetup, error) {
	obs, err := data.Observe(1)
	if err != nil {
		return nil, fmt.Errorf("baselines: Occlusion: %w", err)
	}
	if err := checkWorkers("Occlusion", c.Workers); err != nil {
		return nil, err
	}
	x := data.X
	u := &occSetup{w: c.Width, s: c.Stride, b: c.Baseline, complete: obs.Complete()}
	switch {
	case u.w == 0:
		u.w = DefaultOcclusionWidth
	case u.w < 0 || u.w > x.L:
		return nil, fmt.Errorf("baselines: Occlusion Width is %d, want 1 to the %d timesteps (or 0 for %d)", u.w, x.L, DefaultOcclusionWidth)
	}
	switch {
	case u.s == 0:
		u.s = DefaultOcclusionStride
	case u.s < 0 || u.s > u.w:
		return nil, fmt.Errorf("baselines: Occlusion Stride is %d, want 1 to the width %d, so that every timestep is occluded (or 0 for %d)", u.s, u.w, DefaultOcclusionStride)
	}
	if u.b == DefaultBaseline {
		u.b = ZeroBaseline
	}
	if u.b < ZeroBaseline || u.b > EventBaseline {
		return nil, fmt.Errorf("baselines: unknown baseline %d", int(u.b))
	}
	u.wins = occlusionWindows(x.L, u.w, u.s)
	if u.sel, err = selectOutput("Occlusion", c.Output, data); err != nil {
		return nil, err
	}
	return u, nil
}

// occChunkValues is memlimit.ChunkValues, and occPackValues the most
// values a call packs copies of small data into (2 MiB of float64, so
// that a cheap model's input stays in cache): variables so that tests can
// force chunking and packing.
var (
	occChunkValues = memlimit.ChunkValues
	occPackValues  = 1 << 18
)

// occCalls plans the model calls of the occlusion of units (feature,
// window) pairs over the M instances of x. A call predicts group whole
// copies of the data, each with one unit's window occluded: several when
// the data is small (occPackValues / (M·D·L) units per call, so that a
// model with a cost per call is not called once per unit on a few
// instances), one when it is larger and every worker's copy fits the
// budget. Otherwise (rows < M) a call predicts a chunk of rows instances
// of one unit, each worker holding one chunk. group does not depend on
// the workers; rows does only when the data is chunked.
func occCalls(x *tempora.Tensor, units, workers int, budget int64) (group, rows int) {
	rows = memlimit.ChunkRows(x.M, x.D*x.L, workers, budget, occChunkValues)
	if rows < x.M {
		return 1, rows
	}
	return max(1, min(units, occPackValues/(x.M*x.D*x.L))), x.M
}

// Attribute runs the occlusion and returns the global explanation and the
// per-instance attributions.
func (c Occlusion) Attribute(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*OcclusionResult, error) {
	start := time.Now()
	u, err := c.resolve(data)
	if err != nil {
		return nil, err
	}
	x := data.X
	fill, err := u.b.values(x)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("baselines: Occlusion: nil model")
	}
	cm := newCountingModel(m, data)
	delta, err := c.deltas(ctx, cm, x, u, fill)
	if err != nil {
		return nil, err
	}
	e := tempora.NewExplanation("OCC", data)
	cells, local := u.combine(x, delta)
	u.sel.finish(e, cells)
	cm.account(&e.Accounting)
	e.Accounting.Runtime = time.Since(start)
	return &OcclusionResult{Explanation: e, Local: local}, nil
}

// deltas predicts the data unoccluded and with every unit (feature,
// window) occluded and returns the output changes: entry (v·M + i)·n + o is
// Δ_i of unit v = j·W + window for the o-th of the n explained outputs, 0
// for an instance with no observed cell in the window (nothing occluded).
func (c Occlusion) deltas(ctx context.Context, cm *countingModel, x *tempora.Tensor, u *occSetup, fill []float64) ([]float64, error) {
	k, cols := u.sel.k, u.sel.cols
	n := len(cols)
	base := make([]float64, x.M*k)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("baselines: Occlusion: %w", err)
	}
	if err := cm.Predict(base, x); err != nil {
		return nil, err
	}
	wins, complete := u.wins, u.complete
	units := x.D * len(wins)
	delta := make([]float64, units*x.M*n)
	// record sets the changes of instance i under unit v from the
	// predictions pred of its occluded copy (K values).
	record := func(v, i int, pred []float64) {
		for o, col := range cols {
			delta[(v*x.M+i)*n+o] = base[i*k+col] - pred[col]
		}
	}
	workers := min(pool.Workers(c.Workers), units)
	group, rows := occCalls(x, units, workers, c.MemoryBudget)
	chunks := (x.M + rows - 1) / rows
	calls := (units + group - 1) / group * chunks
	workers = min(workers, calls)
	copies := make([]*tempora.Tensor, workers)
	preds := make([][]float64, workers)
	// occlude fills the observed cells of unit v's window in instance i of
	// x (stored as instance r of xc).
	occlude := func(xc *tempora.Tensor, r, i, v int) {
		j, win := v/len(wins), wins[v%len(wins)]
		dst, src := xc.Window(r, j, win[0], win[1]-1), x.Window(i, j, win[0], win[1]-1)
		if complete {
			copy(dst, fill[j*x.L+win[0]:j*x.L+win[1]])
			return
		}
		for t, val := range src {
			if !tempora.Missing(val) {
				dst[t] = fill[j*x.L+win[0]+t]
			}
		}
	}
	err := pool.Run(ctx, workers, calls, func(wk, call int) error {
		if copies[wk] == nil {
			if rows == x.M {
				copies[wk] = tempora.NewTensor(group*x.M, x.D, x.L)
				for g := range group {
					copy(copies[wk].Data[g*len(x.Data):(g+1)*len(x.Data)], x.Data)
				}
			} else {
				copies[wk] = tempora.NewTensor(rows, x.D, x.L)
			}
			preds[wk] = make([]float64, group*rows*k)
		}
		xc := copies[wk]
		if rows < x.M { // a chunk of instances [lo, hi) of one unit
			v, lo := call/chunks, call%chunks*rows
			hi := min(lo+rows, x.M)
			in := xc.Rows(0, hi-lo)
			copy(in.Data, x.Rows(lo, hi).Data)
			for r := range hi - lo {
				occlude(in, r, lo+r, v)
			}
			pred := preds[wk][:(hi-lo)*k]
			j, win := v/len(wins), wins[v%len(wins)]
			if err := cm.predictRows(pred, in, func(r int) string { return occRow(lo+r, j, win) }); err != nil {
				return err
			}
			for r := range hi - lo {
				if complete || occluded(x, lo+r, j, win) {
					record(v, lo+r, pred[r*k:(r+1)*k])
				}
			}
			return nil
		}
		// group copies of the data, copy g with unit call·group + g occluded.
		v0 := call * group
		ng := min(group, units-v0)
		in := xc
		if ng < group {
			in = xc.Rows(0, ng*x.M)
		}
		for g := range ng {
			for i := range x.M {
				occlude(in, g*x.M+i, i, v0+g)
			}
		}
		pred := preds[wk][:ng*x.M*k]
		err := cm.predictRows(pred, in, func(r int) string {
			v := v0 + r/x.M
			return occRow(r%x.M, v/len(wins), wins[v%len(wins)])
		})
		if err != nil {
			return err
		}
		for g := range ng {
			j, win := (v0+g)/len(wins), wins[(v0+g)%len(wins)]
			for i := range x.M {
				if complete || occluded(x, i, j, win) {
					r := g*x.M + i
					record(v0+g, i, pred[r*k:(r+1)*k])
				}
				copy(in.Window(g*x.M+i, j, win[0], win[1]-1), x.Window(i, j, win[0], win[1]-1))
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrapRun("Occlusion", err)
	}
	return delta, nil
}

// combine turns the output changes delta (see deltas) into each explained
// output's cell scores and the per-instance attributions, in a fixed
// order: each cell averages its covering windows. A window's score is the
// mean |Δ_i| over the instances in which it occluded an observed cell; a
// cell no instance observes scores 0, and so does an instance's
// unobserved cell. The attributions of several outputs are M·n rows, row
// i·n + o instance i's of the o-th output.
func (u *occSetup) combine(x *tempora.Tensor, delta []float64) ([][]float64, *tempora.Tensor) {
	wins, complete := u.wins, u.complete
	n := len(u.sel.cols)
	units := x.D * len(wins)
	cells := make([][]float64, n)
	for o := range cells {
		cells[o] = make([]float64, x.D*x.L)
	}
	local := tempora.NewTensor(x.M*n, x.D, x.L)
	cover := make([]int, x.L)
	for _, win := range wins {
		for t := win[0]; t < win[1]; t++ {
			cover[t]++
		}
	}
	observed := make([]bool, x.D*x.L) // cell (j, t) observed in some instance
	for i := range x.M {
		if complete {
			for c := range observed {
				observed[c] = true
			}
			break
		}
		for c, v := range x.Instance(i) {
			observed[c] = observed[c] || !tempora.Missing(v)
		}
	}
	for v := range units {
		j, win := v/len(wins), wins[v%len(wins)]
		for o := range n {
			var mean float64
			var count int
			for i := range x.M {
				mean += math.Abs(delta[(v*x.M+i)*n+o])
				if complete || occluded(x, i, j, win) {
					count++
				}
			}
			if count > 0 {
				mean /= float64(count)
			}
			for t := win[0]; t < win[1]; t++ {
				if !observed[j*x.L+t] {
					continue
				}
				cells[o][j*x.L+t] += mean / float64(cover[t])
				for i := range x.M {
					if complete || !tempora.Missing(x.At(i, j, t)) {
						local.Data[local.Index(i*n+o, j, t)] += delta[(v*x.M+i)*n+o] / float64(cover[t])
					}
				}
			}
		}
	}
	return cells, local
}

// occRow describes a row of an occlusion call for a model error.
func occRow(i, j int, win [2]int) string {
	return fmt.Sprintf("instance %d with feature %d's timesteps [%d, %d] occluded", i, j, win[0], win[1]-1)
}

// occluded reports whether the window win of feature j holds an observed
// cell of instance i, so that occluding it changes the instance.
func occluded(x *tempora.Tensor, i, j int, win [2]int) bool {
	for _, v := range x.Window(i, j, win[0], win[1]-1) {
		if !tempora.Missing(v) {
			return true
		}
	}
	return false
}

// wrapRun gives a pool error the method's prefix unless it already has
// the package's (a model error).
func wrapRun(name string, err error) error {
	if strings.HasPrefix(err.Error(), "baselines: ") {
		return err
	}
	return fmt.Errorf("baselines: %s: %w", name, err)
}
