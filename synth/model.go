package synth

import (
	"fmt"
	"math"

	"github.com/tempora-dev/tempora"
)

// Aggregator reduces a feature's window to one number.
type Aggregator int

const (
	// Max is the largest value in the window.
	Max Aggregator = iota
	// Average is the unweighted mean of the window.
	Average
	// MonotonicWeightedSum is Σ c_k v_k with c = linspace(1, 2, w): weight 1
	// at the window's first timestep, 2 at its last. It is not normalised
	// (the standardisation removes the scale).
	MonotonicWeightedSum
	// RandomWeightedSum is Σ c_k v_k with c a random permutation of
	// linspace(1, 2, w), drawn once per feature.
	RandomWeightedSum
)

var aggregatorNames = [...]string{"max", "average", "monotonic_weighted_sum", "random_weighted_sum"}

// String returns "max", "average", "monotonic_weighted_sum" or
// "random_weighted_sum".
func (a Aggregator) String() string {
	if a >= 0 && int(a) < len(aggregatorNames) {
		return aggregatorNames[a]
	}
	return fmt.Sprintf("Aggregator(%d)", int(a))
}

// OrderingSensitive reports whether permuting the window's values can change
// the aggregate (true for the weighted sums).
func (a Aggregator) OrderingSensitive() bool {
	return a == MonotonicWeightedSum || a == RandomWeightedSum
}

// MarshalText implements encoding.TextMarshaler.
func (a Aggregator) MarshalText() ([]byte, error) {
	if a < 0 || int(a) >= len(aggregatorNames) {
		return nil, fmt.Errorf("synth: invalid aggregator %d", int(a))
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Aggregator) UnmarshalText(b []byte) error {
	for i, n := range aggregatorNames {
		if string(b) == n {
			*a = Aggregator(i)
			return nil
		}
	}
	return fmt.Errorf("synth: unknown aggregator %q", b)
}

// Nonlinearity is applied to a feature's aggregate.
type Nonlinearity int

const (
	// Identity leaves the aggregate unchanged.
	Identity Nonlinearity = iota
	// Abs takes its absolute value.
	Abs
	// Square squares it.
	Square
)

var nonlinearityNames = [...]string{"identity", "abs", "square"}

// String returns "identity", "abs" or "square".
func (n Nonlinearity) String() string {
	if n >= 0 && int(n) < len(nonlinearityNames) {
		return nonlinearityNames[n]
	}
	return fmt.Sprintf("Nonlinearity(%d)", int(n))
}

// MarshalText implements encoding.TextMarshaler.
func (n Nonlinearity) MarshalText() ([]byte, error) {
	if n < 0 || int(n) >= len(nonlinearityNames) {
		return nil, fmt.Errorf("synth: invalid nonlinearity %d", int(n))
	}
	return []byte(n.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (n *Nonlinearity) UnmarshalText(b []byte) error {
	for i, s := range nonlinearityNames {
		if string(b) == s {
			*n = Nonlinearity(i)
			return nil
		}
	}
	return fmt.Errorf("synth: unknown nonlinearity %q", b)
}

// FeatureFunction is one feature's term of an additive model:
//
//	g(x) = (Nonlinearity(Aggregator(x[Window])) − Mean) / SD
//
// and its coefficient.
type FeatureFunction struct {
	// Window is the range of timesteps the function reads.
	Window tempora.Window
	// Aggregator reduces the window; Weights are the weights of a weighted
	// sum (one per window timestep, first timestep first) and nil for Max and
	// Average.
	Aggregator Aggregator
	Weights    []float64
	// Nonlinearity is applied to the aggregate.
	Nonlinearity Nonlinearity
	// Mean and SD standardise the result; SD must be positive.
	Mean, SD float64
	// Coefficient is the feature's α.
	Coefficient float64
	// Relevant marks a term of the noise-free model F_0; an irrelevant
	// term is multiplied by the noise multiplier β.
	Relevant bool
}

// raw returns Nonlinearity(Aggregator(w)) for the window values w, before
// standardisation.
func (f *FeatureFunction) raw(w []float64) float64 {
	v := f.aggregate(w)
	switch f.Nonlinearity {
	case Abs:
		v = math.Abs(v)
	case Square:
		v *= v
	}
	return v
}

// aggregate returns Aggregator(w) for the window values w, with the
// operations of blockParts in the same order (the held model's terms
// equal Predict's bit for bit: held.go).
func (f *FeatureFunction) aggregate(w []float64) float64 {
	var v float64
	switch f.Aggregator {
	case Max:
		v = w[0]
		for _, u := range w[1:] {
			if u > v {
				v = u
			}
		}
	case Average:
		for _, u := range w {
			v += u
		}
		v /= float64(len(w))
	default:
		c := f.Weights[:len(w)]
		for k, u := range w {
			v += c[k] * u
		}
	}
	return v
}

// linspace12 returns w weights evenly spaced from 1 to 2 (w ≥ 2).
func linspace12(w int) []float64 {
	c := make([]float64, w)
	for k := range c {
		c[k] = 1 + float64(k)/float64(w-1)
	}
	return c
}

// Model is the additive black-box model of a synthetic problem:
//
//	F_β(x) = Σ_{j relevant} α_j g_j(x_j) + β Σ_{j irrelevant} α_j g_j(x_j)
//
// A regression model predicts F_β(x); a classification model predicts the
// probability sigmoid(F_β(x) − τ), where τ is the median of F_0 over the
// generated instances. A Model is immutable and safe for concurrent use.
type Model struct {
	task  tempora.Task
	d, l  int
	beta  float64
	tau   float64
	feats []term
	// observed makes the model aggregate over observed values only
	// (irregular.go).
	observed bool
	// block is the number of instances blockParts evaluates together: as
	// many as keep their rows within blockBytes, at most the array size.
	block int
}

// term is a FeatureFunction laid out for evaluation: lo and hi are the
// offsets of the window in an instance's row of D·L values.
type term struct {
	FeatureFunction
	lo, hi int
	// scale is Coefficient/SD, so the term's contribution is
	// scale·(raw − Mean).
	scale float64
}

var _ tempora.Model = (*Model)(nil)

// NewModel returns the model with the given task, shape (d features, l
// timesteps), noise multiplier beta, classification threshold tau (ignored
// for regression) and one function per feature. It returns an error if a
// function does not fit the shape or has invalid parameters. The functions
// are copied.
func NewModel(task tempora.Task, d, l int, beta, tau float64, feats []FeatureFunction) (*Model, error) {
	if task != tempora.Regression && task != tempora.Classification {
		return nil, fmt.Errorf("synth: unknown task %d", int(task))
	}
	if d < 1 || l < 1 {
		return nil, fmt.Errorf("synth: model shape %d features × %d timesteps", d, l)
	}
	// An instance must fit in a data tensor (found by FuzzModelJSON: a
	// model.json with 2^61 timesteps overflowed 8·D·L below).
	if d > maxValues/l {
		return nil, fmt.Errorf("synth: model shape %d features × %d timesteps has more than %d values per instance", d, l, maxValues)
	}
	if len(feats) != d {
		return nil, fmt.Errorf("synth: %d feature functions for %d features", len(feats), d)
	}
	if !finite(beta) || beta < 0 {
		return nil, fmt.Errorf("synth: noise multiplier %v, want a finite number ≥ 0", beta)
	}
	if !finite(tau) {
		return nil, fmt.Errorf("synth: classification threshold %v is not finite", tau)
	}
	if task == tempora.Regression {
		tau = 0
	}
	m := &Model{task: task, d: d, l: l, beta: beta, tau: tau, feats: make([]term, d)}
	m.block = max(1, min(block, blockBytes/(8*d*l)))
	for j, f := range feats {
		if err := f.validate(l); err != nil {
			return nil, fmt.Errorf("synth: feature %d: %w", j, err)
		}
		f.Weights = append([]float64(nil), f.Weights...)
		m.feats[j] = term{FeatureFunction: f, lo: j*l + f.Window.Start, hi: j*l + f.Window.End + 1, scale: f.Coefficient / f.SD}
	}
	return m, nil
}

func (f *FeatureFunction) validate(l int) error {
	if err := checkWindow(f.Window, l); err != nil {
		return err
	}
	if f.Aggregator < 0 || int(f.Aggregator) >= len(aggregatorNames) {
		return fmt.Errorf("invalid aggregator %d", int(f.Aggregator))
	}
	if f.Nonlinearity < 0 || int(f.Nonlinearity) >= len(nonlinearityNames) {
		return fmt.Errorf("invalid nonlinearity %d", int(f.Nonlinearity))
	}
	if f.Aggregator.OrderingSensitive() {
		if len(f.Weights) != f.Window.Len() {
			return fmt.Errorf("%d weights for a window of %d timesteps", len(f.Weights), f.Window.Len())
		}
		for k, c := range f.Weights {
			if !finite(c) {
				return fmt.Errorf("weight %d is %v", k, c)
			}
		}
	} else if f.Weights != nil {
		return fmt.Errorf("aggregator %v takes no weights", f.Aggregator)
	}
	if !finite(f.Mean) {
		return fmt.Errorf("standardisation mean %v is not finite", f.Mean)
	}
	if !finite(f.SD) || f.SD <= 0 {
		return fmt.Errorf("standardisation SD %v, want a finite positive number", f.SD)
	}
	if !finite(f.Coefficient) {
		return fmt.Errorf("coefficient %v is not finite", f.Coefficient)
	}
	return nil
}

// Task returns the model's task.
func (m *Model) Task() tempora.Task { return m.task }

// NumFeatures returns D.
func (m *Model) NumFeatures() int { return m.d }

// Beta returns the noise multiplier β.
func (m *Model) Beta() float64 { return m.beta }

// Threshold returns the classification threshold τ (0 for regression).
func (m *Model) Threshold() float64 { return m.tau }

// Feature returns a copy of feature j's function. It panics if j is out of
// range.
func (m *Model) Feature(j int) FeatureFunction {
	f := m.feats[j].FeatureFunction
	f.Weights = append([]float64(nil), f.Weights...)
	return f
}

// Relevant returns the indices of the relevant features in increasing order.
func (m *Model) Relevant() []int {
	var r []int
	for j := range m.feats {
		if m.feats[j].Relevant {
			r = append(r, j)
		}
	}
	return r
}

func (m *Model) check(n int, x *tempora.Tensor) error {
	if m == nil || m.block < 1 {
		return fmt.Errorf("synth: model not created by NewModel, Generate or Load")
	}
	if x == nil {
		return fmt.Errorf("synth: nil data tensor")
	}
	if x.D != m.d || x.L != m.l {
		return fmt.Errorf("synth: data has %d features × %d timesteps, model expects %d × %d", x.D, x.L, m.d, m.l)
	}
	if x.M < 0 || len(x.Data) != x.M*x.D*x.L {
		return fmt.Errorf("synth: data tensor holds %d values, shape %d×%d×%d needs %d", len(x.Data), x.M, x.D, x.L, x.M*x.D*x.L)
	}
	if n != x.M {
		return fmt.Errorf("synth: %d predictions requested for %d instances", n, x.M)
	}
	return nil
}

// Predict writes the model's predictions for the instances of x into dst:
// F_β(x) for regression, sigmoid(F_β(x) − τ) for classification. It returns
// an error if x does not have the model's D and L or len(dst) ≠ x.M. It does
// not allocate and is safe for concurrent use.
func (m *Model) Predict(dst []float64, x *tempora.Tensor) error {
	if err := m.Polynomial(dst, x, m.beta); err != nil {
		return err
	}
	if m.task == tempora.Classification {
		for i, f := range dst {
			dst[i] = sigmoid(f - m.tau)
		}
	}
	return nil
}

// Polynomial writes F_beta(x) (the additive model before any link, with
// noise multiplier beta) for the instances of x into dst. beta = 0 gives the
// noise-free F_0.
func (m *Model) Polynomial(dst []float64, x *tempora.Tensor, beta float64) error {
	if err := m.check(len(dst), x); err != nil {
		return err
	}
	var rel, irr [block]float64
	bs := m.block
	for lo := 0; lo < len(dst); lo += bs {
		n := min(bs, len(dst)-lo)
		m.parts(rel[:n], irr[:n], x.Data[lo*m.d*m.l:(lo+n)*m.d*m.l])
		for i := range n {
			dst[lo+i] = rel[i] + beta*irr[i]
		}
	}
	return nil
}

// block is the largest number of instances evaluated together by
// blockParts, and blockBytes the amount of data they may span, so that a
// block's rows stay in cache while every feature is evaluated on them.
const (
	block      = 32
	blockBytes = 16 << 10
)

// parts is blockParts, or blockPartsObserved for a model over observed
// values.
func (m *Model) parts(rel, irr, data []float64) {
	if m.observed {
		m.blockPartsObserved(rel, irr, data)
		return
	}
	m.blockParts(rel, irr, data)
}

// blockParts sets rel[i] and irr[i] to the relevant and irrelevant sums of
// instance i of data (len(rel) consecutive rows of D·L values). Every
// output of the model is computed from these two sums, so F_β = rel + β·irr
// is the same floating-point number wherever it is evaluated, whatever the
// block size (each instance adds its terms in feature order). Features are
// the outer loop, so each aggregator runs as a tight loop over the
// instances of a block: this is the hot loop of every explainer.
func (m *Model) blockParts(rel, irr, data []float64) {
	clear(rel)
	clear(irr)
	n := m.d * m.l
	for k := range m.feats {
		f := &m.feats[k]
		acc := irr
		if f.Relevant {
			acc = rel
		}
		switch f.Aggregator {
		case Max:
			for i := range acc {
				w := data[i*n+f.lo : i*n+f.hi]
				v := w[0]
				for _, u := range w[1:] {
					if u > v {
						v = u
					}
				}
				acc[i] += f.term(v)
			}
		case Average:
			wlen := float64(f.hi - f.lo)
			for i := range acc {
				v := 0.0
				for _, u := range data[i*n+f.lo : i*n+f.hi] {
					v += u
				}
				acc[i] += f.term(v / wlen)
			}
		default:
			c := f.Weights
			for i := range acc {
				w := data[i*n+f.lo : i*n+f.hi]
				w = w[:len(c)]
				v := 0.0
				for j, u := range w {
					v += c[j] * u
				}
				acc[i] += f.term(v)
			}
		}
	}
}

// term returns the contribution α·g of a feature whose aggregate is v.
func (f *term) term(v float64) float64 {
	switch f.Nonlinearity {
	case Abs:
		v = math.Abs(v)
	case Square:
		v *= v
	}
	return f.scale * (v - f.Mean)
}

// Targets writes the ground-truth targets of the instances of x into dst:
// F_0(x) for regression and the label 1{F_0(x) > τ} for classification.
func (m *Model) Targets(dst []float64, x *tempora.Tensor) error {
	if err := m.Polynomial(dst, x, 0); err != nil {
		return err
	}
	if m.task == tempora.Classification {
		for i, f := range dst {
			dst[i] = label(f, m.tau)
		}
	}
	return nil
}

// FeatureValues writes the standardised feature function g_j of every
// instance of x into dst.
func (m *Model) FeatureValues(dst []float64, x *tempora.Tensor, j int) error {
	if err := m.check(len(dst), x); err != nil {
		return err
	}
	if j < 0 || j >= m.d {
		return fmt.Errorf("synth: feature %d outside 0..%d", j, m.d-1)
	}
	f := &m.feats[j]
	n := m.d * m.l
	for i := range dst {
		w := x.Data[i*n+f.lo : i*n+f.hi]
		if m.observed {
			// No observed value in the window: the term is 0.
			dst[i] = 0
			if v, ok := f.rawObserved(w); ok {
				dst[i] = (v - f.Mean) / f.SD
			}
			continue
		}
		dst[i] = (f.raw(w) - f.Mean) / f.SD
	}
	return nil
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func label(f, tau float64) float64 {
	if f > tau {
		return 1
	}
	return 0
}

// InstanceTruth writes the per-instance truth of the instances of x into
// dst, M × D × L in the layout of x: the cells that move instance i's
// output. For a relevant feature aggregated by Max these are the window's
// cells holding its maximum (the argmax timestep; every one of them when
// tied), since changing any other cell a little leaves the output
// unchanged; for Average and the weighted sums, every cell of the window.
// Irrelevant features have no true cells (their terms are noise, scaled by
// β). Summed over instances the true cells of a relevant feature lie in its
// window, the global truth; under Max an instance's truth is usually one
// cell of it. A missing cell (NaN) is never true: nothing is read there.
func (m *Model) InstanceTruth(dst []bool, x *tempora.Tensor) error {
	if x == nil {
		return m.check(0, x)
	}
	if err := m.check(x.M, x); err != nil {
		return err
	}
	n := m.d * m.l
	if len(dst) != x.M*n {
		return fmt.Errorf("synth: %d truth values for %d instances × %d features × %d timesteps", len(dst), x.M, m.d, m.l)
	}
	clear(dst)
	for i := range x.M {
		row := x.Data[i*n : (i+1)*n]
		for k := range m.feats {
			f := &m.feats[k]
			if !f.Relevant {
				continue
			}
			// A missing cell (NaN) is never read, so never true.
			if f.Aggregator != Max {
				for c := f.lo; c < f.hi; c++ {
					dst[i*n+c] = row[c] == row[c]
				}
				continue
			}
			v := math.Inf(-1)
			for _, u := range row[f.lo:f.hi] {
				if u > v {
					v = u
				}
			}
			for c := f.lo; c < f.hi; c++ {
				dst[i*n+c] = row[c] == v
			}
		}
	}
	return nil
}
