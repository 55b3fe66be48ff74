package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/tempora-dev/tempora"
)

// Irregular worlds (issue 18): the problems of Generate with sequences of
// different lengths and missing values, which tempora marks with NaN (see
// tempora.Observation).
//
// Lengths. Instance i's sequence has n_i timesteps, n_i uniform on
// {⌈L/LengthSpread⌉, …, L} (LengthSpread 1: every sequence has L). Under
// tempora.AlignStart its support is [0, n_i−1] and the cells after it are
// padding (NaN); under tempora.AlignEnd its support is [L−n_i, L−1] and the
// padding comes first. The values inside the support are those the
// complete world draws there (the sequences are drawn at full length and
// cut), so a feature's process, and its window, are in aligned time.
//
// Windows lie where every sequence exists (unless FullWindows): each feature's window is drawn
// as Generate draws it, for sequences of ⌈L/LengthSpread⌉ timesteps, and
// placed at the aligned end of the time axis (the first timesteps under
// AlignStart, the last under AlignEnd). So every window timestep is inside
// every instance's support, and a window never lands on padding.
//
// Missing cells. Inside the supports each cell is missing (NaN) with
// probability MissingRate, independently (MCAR), or, under MNAR, with
// probability σ(a_j + MNARSlope·z), where z is the cell's value
// standardised over feature j's cells inside the supports and the
// intercept a_j is solved so that the mean of these probabilities over
// those cells is MissingRate: high values go missing more often, and the
// expected missing rate is the configured one under both mechanisms. Two
// corrections keep every generated dataset acceptable to
// tempora.Dataset.Observe, with supports equal to the drawn lengths: at
// each instance's last timestep (first under AlignEnd), if every feature
// came out missing, one feature drawn uniformly is kept; a feature missing
// everywhere keeps instance 0's cell at that timestep. Both change the
// missing rate by a negligible amount (under MCAR the first happens with
// probability MissingRate^D per instance).
//
// The model. A problem with Irregular set has a model that aggregates
// over observed values only (Model.ObservedValues): Max is the largest
// observed value of the window, Average their mean, a weighted sum
// Σ_{k observed} c_k v_k scaled by w/n (w the window's length, n the
// observed cells in it), and a feature with no observed value in its
// window contributes 0 (its term sits at its standardisation mean). On
// complete data this is the complete world's model, to the bit. The
// standardisation statistics are computed over the instances with an
// observed value in the window.
//
// Truth. Relevance and windows are the model's, exactly, as in the
// complete world; a timestep of a relevant feature's window is important
// in every instance (every instance has it), though in an instance where
// the cell is missing there is nothing to read (Model.InstanceTruth marks
// only observed cells). Ordering: a weighted sum is ordering sensitive
// within its window (permuting observed values among observed positions
// moves them between weights); the whole sequence's ordering matters for a
// relevant feature that is ordering sensitive or that some instance
// observes outside the window, since permuting its observed values moves
// values into and out of the window.
//
// Random streams (keys of tempora.NewRand, besides Generate's):
// ("synth", "irregular", "lengths") for the lengths, in instance order;
// ("synth", "irregular", "missing", j) for feature j's cells, in instance
// then timestep order; ("synth", "irregular", "boundary") for the kept
// boundary cells, in instance order.

// Mechanism is how cells go missing in an irregular world.
type Mechanism int

const (
	// MCAR: every cell is missing with the same probability, whatever its
	// value (missing completely at random).
	MCAR Mechanism = iota
	// MNAR: the probability depends on the value, logistic in its
	// standardised value with slope MNARSlope (missing not at random).
	MNAR
)

// MNARSlope is the slope b of the MNAR mechanism's σ(a_j + b·z): a value
// one standard deviation above its feature's mean has odds of being missing
// e² ≈ 7.4 times those of a value at the mean.
const MNARSlope = 2.0

// MaxMissingRate bounds the configured missing rate, so that every feature
// keeps observed values.
const MaxMissingRate = 0.95

var mechanismNames = [...]string{"mcar", "mnar"}

// String returns "mcar" or "mnar".
func (m Mechanism) String() string {
	if m >= 0 && int(m) < len(mechanismNames) {
		return mechanismNames[m]
	}
	return fmt.Sprintf("Mechanism(%d)", int(m))
}

// ParseMechanism parses "mcar" or "mnar".
func ParseMechanism(s string) (Mechanism, error) {
	for i, n := range mechanismNames {
		if s == n {
			return Mechanism(i), nil
		}
	}
	return 0, fmt.Errorf("synth: unknown missing mechanism %q (want mcar or mnar)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (m Mechanism) MarshalText() ([]byte, error) {
	if m < 0 || int(m) >= len(mechanismNames) {
		return nil, fmt.Errorf("synth: invalid missing mechanism %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Mechanism) UnmarshalText(b []byte) error {
	v, err := ParseMechanism(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Irregular configures the irregular part of a world (Config.Irregular).
// The zero value (length spread 0, taken as 1) is a complete world whose
// model aggregates over observed values.
type Irregular struct {
	// LengthSpread is the ratio of the longest to the shortest possible
	// sequence: lengths are uniform on {⌈L/LengthSpread⌉, …, L}. 1 (or 0,
	// the default) gives every sequence L timesteps.
	LengthSpread float64 `json:"length_spread"`
	// Alignment is the time axis the sequences share.
	Alignment tempora.Alignment `json:"alignment"`
	// MissingRate is the expected fraction of missing cells inside the
	// sequences, in [0, MaxMissingRate].
	MissingRate float64 `json:"missing_rate"`
	// Mechanism is MCAR (the default) or MNAR.
	Mechanism Mechanism `json:"missing_mechanism"`
	// FullWindows draws windows over the whole time axis, as the complete
	// world does, instead of where every sequence exists: a window may
	// then reach timesteps that short sequences lack (their padding), where
	// the truth's important timesteps are read only in the instances that
	// have them. The worlds that show what padding with zeros does use it
	// (suite irregular, padding=zeros).
	FullWindows bool `json:"full_windows,omitempty"`
}

// spread returns the length spread with its default.
func (ir *Irregular) spread() float64 {
	if ir.LengthSpread == 0 {
		return 1
	}
	return ir.LengthSpread
}

// MinLength returns the shortest possible sequence, ⌈l/LengthSpread⌉.
func (ir *Irregular) MinLength(l int) int {
	return int(math.Ceil(float64(l)/ir.spread() - 1e-9))
}

// validate checks the irregular configuration for sequences of l
// timesteps.
func (ir *Irregular) validate(l int) error {
	s := ir.spread()
	switch {
	case !finite(s) || s < 1:
		return fmt.Errorf("synth: length spread %v, want a finite number ≥ 1", ir.LengthSpread)
	case ir.Alignment != tempora.AlignStart && ir.Alignment != tempora.AlignEnd:
		return fmt.Errorf("synth: invalid alignment %d", int(ir.Alignment))
	case !(ir.MissingRate >= 0 && ir.MissingRate <= MaxMissingRate):
		return fmt.Errorf("synth: missing rate %v, want a number in [0, %v]", ir.MissingRate, MaxMissingRate)
	case ir.Mechanism != MCAR && ir.Mechanism != MNAR:
		return fmt.Errorf("synth: invalid missing mechanism %d", int(ir.Mechanism))
	}
	if n := ir.MinLength(l); n < 2 {
		return fmt.Errorf("synth: length spread %v leaves sequences of %d timestep of %d, need at least 2 (every window has two)", s, n, l)
	}
	return nil
}

// span returns where windows are drawn: the timesteps every sequence has,
// or with FullWindows every timestep.
func (ir *Irregular) span(l int) tempora.Window {
	n := ir.MinLength(l)
	if ir.FullWindows {
		n = l
	}
	if ir.Alignment == tempora.AlignEnd {
		return tempora.Window{Start: l - n, End: l - 1}
	}
	return tempora.Window{Start: 0, End: n - 1}
}

// support returns the support of a sequence of n timesteps.
func (ir *Irregular) support(n, l int) tempora.Window {
	if ir.Alignment == tempora.AlignEnd {
		return tempora.Window{Start: l - n, End: l - 1}
	}
	return tempora.Window{Start: 0, End: n - 1}
}

// boundary returns the timestep of a support that fixes it: its last
// (AlignStart) or its first (AlignEnd).
func (ir *Irregular) boundary(s tempora.Window) int {
	if ir.Alignment == tempora.AlignEnd {
		return s.Start
	}
	return s.End
}

// apply cuts the complete data x to the drawn lengths and makes cells
// missing, writing NaN. It returns the supports.
func (ir *Irregular) apply(x *tempora.Tensor, seed uint64) []tempora.Window {
	m, d, l := x.M, x.D, x.L
	lo := ir.MinLength(l)
	lr := tempora.NewRand(seed, "synth", "irregular", "lengths")
	sup := make([]tempora.Window, m)
	for i := range sup {
		sup[i] = ir.support(lo+lr.IntN(l-lo+1), l)
	}
	nan := math.NaN()
	parallel(d, func(j int) {
		rng := tempora.NewRand(seed, "synth", "irregular", "missing", strconv.Itoa(j))
		p := ir.probabilities(x, j, sup)
		for i := range m {
			s := x.Series(i, j)
			for t := range s {
				if !sup[i].Contains(t) {
					s[t] = nan
					continue
				}
				if rng.Float64() < p(s[t]) {
					s[t] = nan
				}
			}
		}
	})
	return sup
}

// probabilities returns the chance that a cell of feature j with value v
// (inside the supports sup of x, before any cell is made missing) is
// missing.
func (ir *Irregular) probabilities(x *tempora.Tensor, j int, sup []tempora.Window) func(v float64) float64 {
	r := ir.MissingRate
	if ir.Mechanism == MCAR || r == 0 {
		return func(float64) float64 { return r }
	}
	var vals []float64
	for i, s := range sup {
		vals = append(vals, x.Window(i, j, s.Start, s.End)...)
	}
	mean, sd := meanSD(vals)
	if sd < minSD {
		return func(float64) float64 { return r }
	}
	for k, v := range vals {
		vals[k] = MNARSlope * (v - mean) / sd
	}
	a := mnarIntercept(vals, r)
	return func(v float64) float64 { return sigmoid(a + MNARSlope*(v-mean)/sd) }
}

// mnarIntercept returns the a with mean σ(a + z_k) = r over z (r in
// (0, 1)): Newton's method on the increasing, concave-convex mean, kept
// inside a bracket that halves when a step leaves it.
func mnarIntercept(z []float64, r float64) float64 {
	f := func(a float64) (float64, float64) {
		s, ds := 0.0, 0.0
		for _, v := range z {
			p := sigmoid(a + v)
			s += p
			ds += p * (1 - p)
		}
		n := float64(len(z))
		return s/n - r, ds / n
	}
	lo, hi := -60.0, 60.0
	a := math.Log(r / (1 - r))
	for range 100 {
		v, dv := f(a)
		if math.Abs(v) < 1e-12 {
			break
		}
		if v > 0 {
			hi = a
		} else {
			lo = a
		}
		next := a - v/dv
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		a = next
	}
	return a
}

// restoreBoundaries restores, at each instance's boundary timestep where
// every feature is missing, one feature drawn uniformly, and, for a
// feature missing everywhere, instance 0's boundary cell, with the values
// of full (x before apply): so every dataset is acceptable to Observe,
// with the drawn supports.
func (ir *Irregular) restoreBoundaries(x, full *tempora.Tensor, sup []tempora.Window, seed uint64) {
	rng := tempora.NewRand(seed, "synth", "irregular", "boundary")
	for i, s := range sup {
		t := ir.boundary(s)
		seen := false
		for j := range x.D {
			if v := x.Data[x.Index(i, j, t)]; v == v {
				seen = true
				break
			}
		}
		if !seen {
			j := rng.IntN(x.D)
			k := x.Index(i, j, t)
			x.Data[k] = full.Data[k]
		}
	}
	for j := range x.D {
		seen := false
		for i := 0; i < x.M && !seen; i++ {
			for _, v := range x.Series(i, j) {
				if v == v {
					seen = true
					break
				}
			}
		}
		if !seen {
			k := x.Index(0, j, ir.boundary(sup[0]))
			x.Data[k] = full.Data[k]
		}
	}
}

// makeIrregular applies ir to the complete data x in place and returns the
// supports.
func makeIrregular(ir *Irregular, x *tempora.Tensor, seed uint64) []tempora.Window {
	full := x.Clone()
	sup := ir.apply(x, seed)
	ir.restoreBoundaries(x, full, sup, seed)
	return sup
}

// ObservedValues reports whether the model aggregates over observed values
// only (the model of an irregular world), taking NaN as a missing value.
// Other models propagate a NaN to their predictions.
func (m *Model) ObservedValues() bool { return m.observed }

// aggregateObserved returns the aggregate of the observed (non-NaN)
// values of the window w and whether it has any, before the nonlinearity.
func (f *FeatureFunction) aggregateObserved(w []float64) (float64, bool) {
	n := 0
	v := 0.0
	switch f.Aggregator {
	case Max:
		v = math.Inf(-1)
		for _, u := range w {
			if u == u {
				n++
				if u > v {
					v = u
				}
			}
		}
	case Average:
		for _, u := range w {
			if u == u {
				n++
				v += u
			}
		}
		if n > 0 {
			v /= float64(n)
		}
	default:
		c := f.Weights[:len(w)]
		for k, u := range w {
			if u == u {
				n++
				v += c[k] * u
			}
		}
		if n > 0 && n < len(w) {
			v *= float64(len(w)) / float64(n)
		}
	}
	return v, n > 0
}

// rawObserved is raw over the observed values of w: the nonlinearity of
// aggregateObserved.
func (f *FeatureFunction) rawObserved(w []float64) (float64, bool) {
	v, ok := f.aggregateObserved(w)
	switch f.Nonlinearity {
	case Abs:
		v = math.Abs(v)
	case Square:
		v *= v
	}
	return v, ok
}

// blockPartsObserved is blockParts for a model over observed values: a
// term whose window has no observed value adds 0.
func (m *Model) blockPartsObserved(rel, irr, data []float64) {
	clear(rel)
	clear(irr)
	n := m.d * m.l
	for k := range m.feats {
		f := &m.feats[k]
		acc := irr
		if f.Relevant {
			acc = rel
		}
		for i := range acc {
			if v, ok := f.aggregateObserved(data[i*n+f.lo : i*n+f.hi]); ok {
				acc[i] += f.term(v)
			}
		}
	}
}

// standardiseObserved sets f's Mean and SD over the instances of x with an
// observed value in f's window (feature j), 0 and 1 when there are none.
func standardiseObserved(f *FeatureFunction, x *tempora.Tensor, j int) {
	var raw []float64
	for i := range x.M {
		if v, ok := f.rawObserved(x.Window(i, j, f.Window.Start, f.Window.End)); ok {
			raw = append(raw, v)
		}
	}
	f.Mean, f.SD = 0, 1
	if len(raw) > 0 {
		f.Mean, f.SD = meanSD(raw)
	}
	if f.SD < minSD {
		f.SD = 1
	}
}

// observedOutside reports whether some instance of x observes feature j
// outside the window w.
func observedOutside(x *tempora.Tensor, j int, w tempora.Window) bool {
	for i := range x.M {
		for t, v := range x.Series(i, j) {
			if v == v && !w.Contains(t) {
				return true
			}
		}
	}
	return false
}

// windowIn draws a window as sampleWindow does, inside span.
func windowIn(rng *rand.Rand, span tempora.Window) tempora.Window {
	w := sampleWindow(rng, span.Len())
	return tempora.Window{Start: w.Start + span.Start, End: w.End + span.Start}
}
