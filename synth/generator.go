package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tempora-dev/tempora"
)

// FeatureType is the kind of values a feature takes.
type FeatureType int

const (
	// Numeric features are Markov chains with Gaussian emissions,
	// optionally accumulated into a trend.
	Numeric FeatureType = iota
	// Categorical features are Markov chains over 3 to 5 states whose value
	// is the state index.
	Categorical
	// Binary features take the values 0 and 1, from a Bernoulli process or a
	// two-state Markov chain.
	Binary
)

var featureTypeNames = [...]string{"numeric", "categorical", "binary"}

// String returns "numeric", "categorical" or "binary".
func (t FeatureType) String() string {
	if t >= 0 && int(t) < len(featureTypeNames) {
		return featureTypeNames[t]
	}
	return fmt.Sprintf("FeatureType(%d)", int(t))
}

// MarshalText implements encoding.TextMarshaler.
func (t FeatureType) MarshalText() ([]byte, error) {
	if t < 0 || int(t) >= len(featureTypeNames) {
		return nil, fmt.Errorf("synth: invalid feature type %d", int(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *FeatureType) UnmarshalText(b []byte) error {
	for i, n := range featureTypeNames {
		if string(b) == n {
			*t = FeatureType(i)
			return nil
		}
	}
	return fmt.Errorf("synth: unknown feature type %q", b)
}

// Chain is a Markov chain over n states 0..n-1.
type Chain struct {
	// Transition is the n × n transition matrix; row s is the distribution
	// of the state following s.
	Transition [][]float64 `json:"transition"`
	// Means and SDs are the Gaussian emission parameters of each state for
	// numeric features; both are nil for discrete features, whose value is
	// the state index.
	Means []float64 `json:"means,omitempty"`
	SDs   []float64 `json:"sds,omitempty"`
}

// States returns the number of states.
func (c *Chain) States() int { return len(c.Transition) }

// next draws the state following s.
func (c *Chain) next(s int, rng *rand.Rand) int {
	row := c.Transition[s]
	u := rng.Float64()
	for k, p := range row {
		u -= p
		if u < 0 {
			return k
		}
	}
	// Rounding left u ≥ 0 after the last subtraction: the last state with
	// positive probability.
	for k := len(row) - 1; k > 0; k-- {
		if row[k] > 0 {
			return k
		}
	}
	return 0
}

// emit draws the value emitted in state s.
func (c *Chain) emit(s int, rng *rand.Rand) float64 {
	if c.Means == nil {
		return float64(s)
	}
	return c.Means[s] + c.SDs[s]*rng.NormFloat64()
}

// Generator is the random process of one feature's sequences. It is created
// by Generate and recorded in the problem for reproducibility and
// inspection.
type Generator struct {
	// Type is the feature's value type.
	Type FeatureType `json:"type"`
	// Bernoulli is true for a Bernoulli process (binary features only),
	// false for a Markov chain.
	Bernoulli bool `json:"bernoulli,omitempty"`
	// Window is the feature's window. Unless WindowIndependent is set, the
	// sequence is drawn from a separate process inside it.
	Window tempora.Window `json:"-"`
	// WindowIndependent marks a process that ignores the window.
	WindowIndependent bool `json:"window_independent,omitempty"`
	// P is the probability of a 1 outside the window for a Bernoulli
	// process; inside the window it is 1 − P (unless WindowIndependent).
	P float64 `json:"p,omitempty"`
	// Trend makes a numeric feature the cumulative sum, starting from
	// InitValue, of its emissions.
	Trend     bool    `json:"trend,omitempty"`
	InitValue float64 `json:"init_value,omitempty"`
	// In is the chain used inside the window, Out the chain used outside.
	// With WindowIndependent, In is the only chain and Out is nil. Both are
	// nil for a Bernoulli process.
	In  *Chain `json:"in,omitempty"`
	Out *Chain `json:"out,omitempty"`
	// Attempt counts the candidate features discarded for low variance
	// before this one was accepted.
	Attempt int `json:"attempt"`
}

// Sample fills dst (one sequence, of the problem's length L) with a draw
// from g using rng.
//
// A Markov chain starts in a uniformly drawn state of the out-of-window
// chain; unless the process is window independent, the state is re-drawn
// uniformly from the in-window chain at the window's first timestep and from
// the out-of-window chain just after its last, so the chain never
// transitions across a window border. A trend feature's value is its
// InitValue plus the sum of the emissions so far.
func (g *Generator) Sample(dst []float64, rng *rand.Rand) {
	left, right := g.Window.Start, g.Window.End
	dep := !g.WindowIndependent
	if g.Bernoulli {
		for t := range dst {
			p := g.P
			if dep && t >= left && t <= right {
				p = 1 - g.P
			}
			dst[t] = 0
			if rng.Float64() < p {
				dst[t] = 1
			}
		}
		return
	}
	c := g.Out
	if !dep {
		c = g.In
	}
	s := rng.IntN(c.States())
	v := g.InitValue
	for t := range dst {
		if dep {
			if t == left {
				c = g.In
				s = rng.IntN(c.States())
			} else if t == right+1 {
				c = g.Out
				s = rng.IntN(c.States())
			}
		}
		e := c.emit(s, rng)
		if g.Trend {
			v += e
		} else {
			v = e
		}
		dst[t] = v
		s = c.next(s, rng)
	}
}

// sampleWindow draws a window of a sequence of length l ≥ 2 as the
// reference does: the end uniform on {⌊l/2⌋, …, l−1}, then the start uniform
// on {0, …, end−1}. Every window has at least two timesteps.
func sampleWindow(rng *rand.Rand, l int) tempora.Window {
	h := l / 2
	end := h + rng.IntN(l-h)
	return tempora.Window{Start: rng.IntN(end), End: end}
}

// uniform returns a draw from U(lo, hi).
func uniform(rng *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }

// newGenerator draws the process of a feature of type typ with the feature's
// private stream, in the reference's order. states > 0 forces the state count
// of a categorical feature (the default draw is still made, as in the
// reference).
func newGenerator(rng *rand.Rand, typ FeatureType, states int, w tempora.Window, independent bool) *Generator {
	g := &Generator{Type: typ, Window: w, WindowIndependent: independent}
	var n int
	switch typ {
	case Binary:
		if rng.IntN(2) == 0 {
			g.Bernoulli = true
			g.P = uniform(rng, 0.01, 0.99)
			return g
		}
		n = 2
	case Categorical:
		n = 3 + rng.IntN(3)
		if states > 0 {
			n = states
		}
	case Numeric:
		n = 2 + rng.IntN(4)
		g.Trend = rng.IntN(2) == 1
		if g.Trend && !independent {
			n = min(n, 4)
		}
	default:
		panic(fmt.Sprintf("synth: invalid feature type %d", int(typ)))
	}
	g.InitValue = uniform(rng, -1, 1)
	g.In = newChain(rng, n, typ == Numeric, g.Trend)
	if !independent {
		g.Out = newChain(rng, n, typ == Numeric, g.Trend)
	}
	return g
}

// newChain draws a chain of n states: for each state a transition row of n
// uniforms normalised to sum 1 and, for numeric features, an emission mean
// U(0.1, 1) and SD U(0.1, 1)·0.05. With a trend the mean depends on the
// state index: +mean, −mean, 0, then a fresh U(−1, 1).
func newChain(rng *rand.Rand, n int, numeric, trend bool) *Chain {
	c := &Chain{Transition: make([][]float64, n)}
	if numeric {
		c.Means = make([]float64, n)
		c.SDs = make([]float64, n)
	}
	for s := range n {
		row := make([]float64, n)
		sum := 0.0
		for k := range row {
			row[k] = rng.Float64()
			sum += row[k]
		}
		for k := range row {
			row[k] /= sum
		}
		c.Transition[s] = row
		if !numeric {
			continue
		}
		mean := uniform(rng, 0.1, 1)
		c.SDs[s] = uniform(rng, 0.1, 1) * 0.05
		if trend {
			switch s {
			case 0:
			case 1:
				mean = -mean
			case 2:
				mean = 0
			default:
				mean = uniform(rng, -1, 1)
			}
		}
		c.Means[s] = mean
	}
	return c
}

// validate checks a generator read from a file against the sequence length.
func (g *Generator) validate(l int) error {
	if g.Type < 0 || int(g.Type) >= len(featureTypeNames) {
		return fmt.Errorf("invalid feature type %d", int(g.Type))
	}
	if err := checkWindow(g.Window, l); err != nil {
		return err
	}
	if g.Bernoulli {
		if g.Type != Binary {
			return fmt.Errorf("a Bernoulli process must be binary, not %v", g.Type)
		}
		if !(g.P >= 0 && g.P <= 1) {
			return fmt.Errorf("probability %v of a Bernoulli process is outside [0, 1]", g.P)
		}
		return nil
	}
	if !finite(g.InitValue) {
		return fmt.Errorf("initial value %v is not finite", g.InitValue)
	}
	if g.Trend && g.Type != Numeric {
		return fmt.Errorf("a %v feature cannot have a trend", g.Type)
	}
	if g.In == nil {
		return fmt.Errorf("missing in-window chain")
	}
	if err := g.In.validate(g.Type); err != nil {
		return fmt.Errorf("in-window chain: %w", err)
	}
	if g.WindowIndependent {
		if g.Out != nil {
			return fmt.Errorf("a window-independent feature has an out-of-window chain")
		}
		return nil
	}
	if g.Out == nil {
		return fmt.Errorf("missing out-of-window chain")
	}
	if g.Out.States() != g.In.States() {
		return fmt.Errorf("in- and out-of-window chains have %d and %d states", g.In.States(), g.Out.States())
	}
	if err := g.Out.validate(g.Type); err != nil {
		return fmt.Errorf("out-of-window chain: %w", err)
	}
	return nil
}

func (c *Chain) validate(typ FeatureType) error {
	n := c.States()
	if n < 1 {
		return fmt.Errorf("no states")
	}
	if typ == Binary && n != 2 {
		return fmt.Errorf("a binary chain has %d states, want 2", n)
	}
	for s, row := range c.Transition {
		if len(row) != n {
			return fmt.Errorf("transition row %d has %d entries for %d states", s, len(row), n)
		}
		sum := 0.0
		for _, p := range row {
			if !(p >= 0 && p <= 1) {
				return fmt.Errorf("transition row %d has probability %v", s, p)
			}
			sum += p
		}
		// Rows are normalised uniforms written with full precision.
		if math.Abs(sum-1) > 1e-9 {
			return fmt.Errorf("transition row %d sums to %v, want 1", s, sum)
		}
	}
	if typ != Numeric {
		if c.Means != nil || c.SDs != nil {
			return fmt.Errorf("a %v chain has emission parameters", typ)
		}
		return nil
	}
	if len(c.Means) != n || len(c.SDs) != n {
		return fmt.Errorf("%d means and %d SDs for %d states", len(c.Means), len(c.SDs), n)
	}
	for s := range n {
		if !finite(c.Means[s]) || !finite(c.SDs[s]) || c.SDs[s] < 0 {
			return fmt.Errorf("state %d has emission mean %v and SD %v", s, c.Means[s], c.SDs[s])
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func checkWindow(w tempora.Window, l int) error {
	if w.Start < 0 || w.End >= l || w.Start > w.End {
		return fmt.Errorf("window %v outside 0..%d", w, l-1)
	}
	return nil
}
