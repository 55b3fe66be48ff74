package tempora

import (
	"fmt"
	"math"
	"slices"

	"github.com/tempora-dev/tempora/internal/finite"
)

// Missing values. A cell (i, j, t) of a data tensor that was never observed
// holds NaN, as in NumPy, pandas and scikit-learn; ±Inf is always an error.
// NaN is the one owner of the observation mask: a mask given separately
// (a file, a Python argument) is applied at input by writing NaN into the
// unobserved cells, and every summary below is derived from the NaNs.
//
// Sequences of different lengths are the special case of cells missing in
// every feature at the end (or, end-aligned, at the start) of an instance:
// the instance's support (Observation.Support) is the span of timesteps it
// has, and its cells outside the support are padding. The Alignment of a
// dataset says which end of the time axis the sequences share. Timestep t of
// an explanation means "t steps from each sequence's start" (AlignStart) or
// "L−1−t steps before each sequence's end" (AlignEnd); windows are only
// meaningful in this aligned time.

// Missing reports whether v marks a missing value (NaN).
func Missing(v float64) bool { return v != v }

// Alignment says how sequences of different lengths share the time axis of
// a data tensor.
type Alignment int

const (
	// AlignStart: timestep 0 is each sequence's first step; shorter
	// sequences end early and are padded at the end. The default.
	AlignStart Alignment = iota
	// AlignEnd: timestep L−1 is each sequence's last step (for example
	// "hours before discharge"); shorter sequences start late and are
	// padded at the start.
	AlignEnd
)

// String returns "start" or "end".
func (a Alignment) String() string {
	switch a {
	case AlignStart:
		return "start"
	case AlignEnd:
		return "end"
	}
	return fmt.Sprintf("Alignment(%d)", int(a))
}

// ParseAlignment parses "start" or "end".
func ParseAlignment(s string) (Alignment, error) {
	switch s {
	case "start":
		return AlignStart, nil
	case "end":
		return AlignEnd, nil
	}
	return 0, fmt.Errorf("tempora: unknown alignment %q (want start or end)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (a Alignment) MarshalText() ([]byte, error) {
	if a != AlignStart && a != AlignEnd {
		return nil, fmt.Errorf("tempora: invalid alignment %d", int(a))
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Alignment) UnmarshalText(b []byte) error {
	v, err := ParseAlignment(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// Observation summarises where a data tensor is observed. It is derived
// from the NaNs of the tensor by Dataset.Observe and is never edited.
type Observation struct {
	M, D, L int
	// Alignment is the dataset's alignment, which fixes what the supports
	// are.
	Alignment Alignment
	// Support[i] is the span of timesteps instance i has: [0, last] for
	// AlignStart, where last is the latest timestep at which any feature of
	// instance i is observed, and [first, L−1] for AlignEnd. Cells outside
	// the support are padding; cells inside it that hold NaN are missing.
	Support []Window
	// Span[j] is the span [first, last] of timesteps at which feature j is
	// observed in at least one instance. A window of feature j lies inside
	// its span: outside it, the feature is padding or missing everywhere.
	Span []Window
	// Missing[j] counts the missing cells of feature j inside the
	// instances' supports (padding is not counted); Cells counts all cells
	// inside the supports, per feature (the sum of the support lengths).
	Missing []int
	Cells   int
	// Observed holds D*L counts in row-major order, as Explanation.Cells:
	// Observed[j*L+t] is the number of instances whose feature j is
	// observed at timestep t (padding and missing cells alike are not).
	// It is counted here, in the one pass over the data, so that an
	// explanation's summary (Summary) needs no second pass.
	Observed []int
}

// Complete reports whether every cell of the tensor is observed: no
// missing values and every sequence of full length.
func (o *Observation) Complete() bool {
	if o.Cells != o.M*o.L {
		return false
	}
	for _, n := range o.Missing {
		if n != 0 {
			return false
		}
	}
	return true
}

// VariableLength reports whether some instance's support is shorter than L.
func (o *Observation) VariableLength() bool { return o.Cells != o.M*o.L }

// MissingRate returns the fraction of feature j's cells inside the
// instances' supports that are missing.
func (o *Observation) MissingRate(j int) float64 {
	if o.Cells == 0 {
		return 0
	}
	return float64(o.Missing[j]) / float64(o.Cells)
}

// Lengths returns the support length of every instance, in instance order.
func (o *Observation) Lengths() []int {
	n := make([]int, len(o.Support))
	for i, s := range o.Support {
		n[i] = s.Len()
	}
	return n
}

// Summary returns the summary an explanation carries of where the data
// is observed (Explanation.Data), or nil for complete data: there every
// length is L, every missing rate 0 and every observed share 1, so the
// summary would say nothing, and complete data's explanations stay as they
// were before it existed (their JSON, golden files and record checksums).
func (o *Observation) Summary() *DataSummary {
	if o.Complete() {
		return nil
	}
	s := &DataSummary{Lengths: o.Lengths(), MissingRate: make([]float64, o.D), Observed: make([]float64, len(o.Observed))}
	for j := range s.MissingRate {
		s.MissingRate[j] = o.MissingRate(j)
	}
	for k, n := range o.Observed {
		s.Observed[k] = float64(n) / float64(o.M)
	}
	return s
}

// LengthQuantiles returns the minimum, median and maximum support length.
func (o *Observation) LengthQuantiles() (lo, median, hi int) {
	n := o.Lengths()
	if len(n) == 0 {
		return 0, 0, 0
	}
	slices.Sort(n)
	return n[0], n[len(n)/2], n[len(n)-1]
}

// observe derives the observation summary of x under alignment a. names
// gives feature names for messages (nil: indices). It returns an error for
// ±Inf, an instance with no observed value and a feature never observed.
func observe(x *Tensor, a Alignment, name func(int) string) (*Observation, error) {
	if a != AlignStart && a != AlignEnd {
		return nil, fmt.Errorf("tempora: invalid alignment %d", int(a))
	}
	m, d, l := x.M, x.D, x.L
	o := &Observation{M: m, D: d, L: l, Alignment: a, Support: make([]Window, m), Span: make([]Window, d), Missing: make([]int, d), Observed: make([]int, d*l)}
	for j := range o.Span {
		o.Span[j] = Window{Start: l, End: -1}
	}
	nan := make([]int, d) // NaN cells of feature j in instance i
	firsts, lasts := make([]int, m), make([]int, m)
	for i := range m {
		first, last := l, -1
		clear(nan)
		for j := range d {
			s := x.Series(i, j)
			// A series padded to a shorter length has NaN at an end:
			// it goes straight to the loop below, sparing a pass of
			// finite.All that could only fail.
			if !Missing(s[0]) && !Missing(s[l-1]) && finite.All(s) {
				// What the loop below finds for a series observed
				// everywhere, without its branches per value: on
				// complete data, the common case, observe is one
				// pass of finite.All.
				first, last = min(first, 0), max(last, l-1)
				sp := &o.Span[j]
				sp.Start, sp.End = min(sp.Start, 0), max(sp.End, l-1)
				continue
			}
			// unseen[t] counts the instances whose feature j is NaN at t,
			// for Observed: counting NaN rather than observed values
			// keeps the work where the NaN are, which is none for
			// series of the fast path above.
			unseen := o.Observed[j*l : (j+1)*l]
			unseen = unseen[:len(s)] // the same length, which spares unseen[t] its bounds check
			for t, v := range s {
				switch {
				case v != v:
					nan[j]++
					unseen[t]++
				case math.IsInf(v, 0):
					return nil, dataErrorf(KindInfinite, "tempora: value at instance %d, feature %s, timestep %d is %v (a missing value is NaN; infinities are errors)", i, name(j), t, v).At(i, j, t).WithValue(v).WithCount(CountInf(x.Data))
				default:
					first, last = min(first, t), max(last, t)
					sp := &o.Span[j]
					sp.Start, sp.End = min(sp.Start, t), max(sp.End, t)
				}
			}
		}
		if last < 0 {
			return nil, dataErrorf(KindUnobservedInstance, "tempora: instance %d has no observed value (every value is NaN)", i).At(i, -1, -1)
		}
		firsts[i], lasts[i] = first, last
		sup := Window{Start: 0, End: last}
		if a == AlignEnd {
			sup = Window{Start: first, End: l - 1}
		}
		o.Support[i] = sup
		o.Cells += sup.Len()
		pad := l - sup.Len()
		for j := range d {
			o.Missing[j] += nan[j] - pad
		}
	}
	if err := checkAlignment(a, l, firsts, lasts); err != nil {
		return nil, err
	}
	for j, sp := range o.Span {
		if sp.End < 0 {
			return nil, dataErrorf(KindUnobservedFeature, "tempora: feature %s is never observed (every value is NaN)", name(j)).At(-1, j, -1)
		}
	}
	for k, n := range o.Observed {
		o.Observed[k] = m - n // the NaN counts become observed counts
	}
	return o, nil
}

// PermuteInstancesWithin is PermuteInstances for data with missing values,
// under the receiver rule (docs/decisions.md, decision 19): a sequence's length
// stays with its instance, and a feature's values move with their
// missingness. For every instance i and feature j in feats, the cells of
// [start, end] inside support[i] receive instance perm[i]'s cells (values
// and NaNs alike); the cells outside support[i], which are padding, keep
// src's values. A donor's value that would land on the receiver's padding
// is dropped. With every support equal to [0, L−1] it is PermuteInstances.
func PermuteInstancesWithin(dst, src *Tensor, feats []int, start, end int, perm []int, support []Window) {
	checkBlock(dst, src, feats, start, end)
	if len(perm) != src.M || len(support) != src.M {
		panic(fmt.Sprintf("tempora: instance permutation of length %d and %d supports for %d instances", len(perm), len(support), src.M))
	}
	w := end - start + 1
	for i, p := range perm {
		s, e := max(start, support[i].Start), min(end, support[i].End)
		for _, j := range feats {
			do := dst.Index(i, j, start)
			so := src.Index(i, j, start)
			if s > e {
				copy(dst.Data[do:do+w], src.Data[so:so+w])
				continue
			}
			// Padding before and after the support keeps the receiver's
			// cells (the copies are skipped when empty: this loop runs
			// once per instance and feature of every draw).
			if s > start {
				copy(dst.Data[do:do+s-start], src.Data[so:so+s-start])
			}
			if e < end {
				copy(dst.Data[do+e-start+1:do+w], src.Data[so+e-start+1:so+w])
			}
			po := src.Index(p, j, s)
			copy(dst.Data[do+s-start:do+e-start+1], src.Data[po:po+e-s+1])
		}
	}
}

// PermuteTimestepsObserved is PermuteTimesteps for data with missing values:
// each series' observed values in [start, end] are permuted among its
// observed positions only, and its missing cells stay missing. The
// permutation of series (i, j) is the one order induces on its observed
// positions (the observed offsets taken in the sequence order lists them),
// so it is uniform on those positions when order is uniform, and it is
// order itself for a fully observed series: on complete data the result is
// PermuteTimesteps's.
func PermuteTimestepsObserved(dst, src *Tensor, feats []int, start, end int, order []int) {
	checkBlock(dst, src, feats, start, end)
	if len(order) != end-start+1 {
		panic(fmt.Sprintf("tempora: timestep permutation of length %d for a window of %d", len(order), end-start+1))
	}
	for i := 0; i < src.M; i++ {
		for _, j := range feats {
			do := dst.Index(i, j, start)
			so := src.Index(i, j, start)
			PermuteObserved(dst.Data[do:do+len(order)], src.Data[so:so+len(order)], order)
		}
	}
}

// PermuteObserved is PermuteTimestepsObserved for one series: it sets dst
// to src with its observed values permuted among its observed positions by
// the permutation order induces on them, and its missing cells missing.
// dst, src and order have the same length and dst must not share storage
// with src.
func PermuteObserved(dst, src []float64, order []int) {
	q := 0
	for k, v := range src {
		if v != v {
			dst[k] = v
			continue
		}
		// The next observed offset in order's sequence.
		for src[order[q]] != src[order[q]] {
			q++
		}
		dst[k] = src[order[q]]
		q++
	}
}

// checkAlignment refuses data whose sequences visibly share the other end
// of the time axis than the alignment says: every instance observed at the
// axis's first timestep while at least half end before its last is
// start-aligned data, and the mirror image is end-aligned. Read with the
// wrong alignment, the padding would count as missing values inside the
// sequences and the tests would compare values across lengths
// (docs/decisions.md, decision 19): a wrong answer without a word. Missing
// values alone do not trigger it, since every instance would have to be
// observed at one end while half have nothing at the other. first and
// last are each instance's first and last observed timesteps.
func checkAlignment(a Alignment, l int, first, last []int) error {
	m := len(first)
	if m < 2 || l < 2 {
		return nil
	}
	atStart, atEnd, endEarly, startLate := 0, 0, 0, 0
	lo, hi := l, 0 // lengths implied by the other alignment
	for i := range m {
		if first[i] == 0 {
			atStart++
		}
		if last[i] == l-1 {
			atEnd++
		}
		if last[i] < l-1 {
			endEarly++
		}
		if first[i] > 0 {
			startLate++
		}
	}
	switch {
	case a == AlignEnd && atStart == m && 2*endEarly >= m:
		for i := range m {
			lo, hi = min(lo, last[i]+1), max(hi, last[i]+1)
		}
		e := dataErrorf(KindAlignment, "tempora: alignment end, but the data lines up the sequences' starts: every instance is observed at timestep 0 and %d of %d end before the last timestep (lengths %d to %d); use alignment start, or place each sequence so that timestep %d is its last step (NaN padding at the start)", endEarly, m, lo, hi, l-1).WithCount(endEarly)
		e.Lengths, e.Alignment = [2]int{lo, hi}, a
		return e
	case a == AlignStart && atEnd == m && 2*startLate >= m:
		for i := range m {
			lo, hi = min(lo, l-first[i]), max(hi, l-first[i])
		}
		e := dataErrorf(KindAlignment, "tempora: alignment start (the default), but the data lines up the sequences' ends: every instance is observed at the last timestep and %d of %d start after timestep 0 (lengths %d to %d); use alignment end (the last timestep is each sequence's last step), or place each sequence so that timestep 0 is its first step (NaN padding at the end)", startLate, m, lo, hi).WithCount(startLate)
		e.Lengths, e.Alignment = [2]int{lo, hi}, a
		return e
	}
	return nil
}
