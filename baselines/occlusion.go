package baselines

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tempora-dev/tempora"
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
// entry j·L+t.
func (b Baseline) values(x *tempora.Tensor) ([]float64, error) {
	p := x.D * x.L
	v := make([]float64, p)
	switch b {
	case ZeroBaseline:
	case MeanBaseline, EventBaseline:
		for i := range x.M {
			for c, xc := range x.Instance(i) {
				v[c] += xc
			}
		}
		for c := range v {
			v[c] /= float64(x.M)
		}
		if b == EventBaseline {
			for j := range x.D {
				row := v[j*x.L : (j+1)*x.L]
				var s float64
				for _, r := range row {
					s += r
				}
				for t := range row {
					row[t] = s / float64(x.L)
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
// The zero value occludes one cell at a time with zeros. Occlusion draws
// no random numbers. It makes 1 + D·W model calls of M instances each,
// W the number of windows per feature; windows are evaluated in parallel,
// each worker rewriting only its window of a private copy of the data, and
// combined in a fixed order, so the result does not depend on Workers.
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
}

var _ tempora.Explainer = Occlusion{}

// OcclusionResult is an occlusion run with its per-instance attributions.
type OcclusionResult struct {
	// Explanation holds the global cell scores (method "OCC").
	Explanation *tempora.Explanation
	// Local holds the per-instance attributions, M × D × L like the data:
	// the signed output change f(x) − f(x occluded) averaged over the
	// windows covering each cell.
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

// Attribute runs the occlusion and returns the global explanation and the
// per-instance attributions.
func (c Occlusion) Attribute(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*OcclusionResult, error) {
	start := time.Now()
	if err := data.Validate(1); err != nil {
		return nil, fmt.Errorf("baselines: Occlusion: %w", err)
	}
	if err := checkWorkers("Occlusion", c.Workers); err != nil {
		return nil, err
	}
	x := data.X
	w, s, b := c.Width, c.Stride, c.Baseline
	switch {
	case w == 0:
		w = DefaultOcclusionWidth
	case w < 0 || w > x.L:
		return nil, fmt.Errorf("baselines: Occlusion Width is %d, want 1 to the %d timesteps (or 0 for %d)", w, x.L, DefaultOcclusionWidth)
	}
	switch {
	case s == 0:
		s = DefaultOcclusionStride
	case s < 0 || s > w:
		return nil, fmt.Errorf("baselines: Occlusion Stride is %d, want 1 to the width %d, so that every timestep is occluded (or 0 for %d)", s, w, DefaultOcclusionStride)
	}
	if b == DefaultBaseline {
		b = ZeroBaseline
	}
	fill, err := b.values(x)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("baselines: Occlusion: nil model")
	}
	cm := newCountingModel(m, data.Task)
	base := make([]float64, x.M)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("baselines: Occlusion: %w", err)
	}
	if err := cm.Predict(base, x); err != nil {
		return nil, err
	}

	wins := occlusionWindows(x.L, w, s)
	units := x.D * len(wins)
	// delta[u·M + i] is Δ_i of unit u = j·W + window.
	delta := make([]float64, units*x.M)
	workers := min(pool.Workers(c.Workers), units)
	copies := make([]*tempora.Tensor, workers)
	preds := make([][]float64, workers)
	err = pool.Run(ctx, workers, units, func(wk, u int) error {
		if copies[wk] == nil {
			copies[wk] = x.Clone()
			preds[wk] = make([]float64, x.M)
		}
		xc, pred := copies[wk], preds[wk]
		j, win := u/len(wins), wins[u%len(wins)]
		for i := range x.M {
			copy(xc.Window(i, j, win[0], win[1]-1), fill[j*x.L+win[0]:j*x.L+win[1]])
		}
		if err := cm.Predict(pred, xc); err != nil {
			return err
		}
		for i := range x.M {
			copy(xc.Window(i, j, win[0], win[1]-1), x.Window(i, j, win[0], win[1]-1))
		}
		d := delta[u*x.M : (u+1)*x.M]
		for i, p := range pred {
			d[i] = base[i] - p
		}
		return nil
	})
	if err != nil {
		return nil, wrapRun("Occlusion", err)
	}

	// Combine in a fixed order: each cell averages its covering windows.
	e := tempora.NewExplanation("OCC", data)
	local := tempora.NewTensor(x.M, x.D, x.L)
	cover := make([]int, x.L)
	for _, win := range wins {
		for t := win[0]; t < win[1]; t++ {
			cover[t]++
		}
	}
	for u := range units {
		j, win := u/len(wins), wins[u%len(wins)]
		d := delta[u*x.M : (u+1)*x.M]
		var mean float64
		for _, v := range d {
			mean += math.Abs(v)
		}
		mean /= float64(x.M)
		for t := win[0]; t < win[1]; t++ {
			e.Cells[j*x.L+t] += mean / float64(cover[t])
			for i, v := range d {
				local.Data[local.Index(i, j, t)] += v / float64(cover[t])
			}
		}
	}
	summarise(e)
	cm.account(&e.Accounting)
	e.Accounting.Runtime = time.Since(start)
	return &OcclusionResult{Explanation: e, Local: local}, nil
}

// wrapRun gives a pool error the method's prefix unless it already has
// the package's (a model error).
func wrapRun(name string, err error) error {
	if strings.HasPrefix(err.Error(), "baselines: ") {
		return err
	}
	return fmt.Errorf("baselines: %s: %w", name, err)
}
