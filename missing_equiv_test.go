package tempora

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

// observeReference is observe as it was written before its fast path for
// series observed everywhere (finite.All): every value goes through the
// per-cell logic. TestObserveMatchesReference holds observe to it.
func observeReference(x *Tensor, a Alignment, name func(int) string) (*Observation, error) {
	if a != AlignStart && a != AlignEnd {
		return nil, fmt.Errorf("tempora: invalid alignment %d", int(a))
	}
	m, d, l := x.M, x.D, x.L
	o := &Observation{M: m, D: d, L: l, Alignment: a, Support: make([]Window, m), Span: make([]Window, d), Missing: make([]int, d), Observed: make([]int, d*l)}
	for j := range o.Span {
		o.Span[j] = Window{Start: l, End: -1}
	}
	nan := make([]int, d)
	firsts, lasts := make([]int, m), make([]int, m)
	for i := range m {
		first, last := l, -1
		clear(nan)
		for j := range d {
			s := x.Series(i, j)
			for t, v := range s {
				switch {
				case v != v:
					nan[j]++
				case math.IsInf(v, 0):
					return nil, fmt.Errorf("tempora: value at instance %d, feature %s, timestep %d is %v (a missing value is NaN; infinities are errors)", i, name(j), t, v)
				default:
					first, last = min(first, t), max(last, t)
					sp := &o.Span[j]
					sp.Start, sp.End = min(sp.Start, t), max(sp.End, t)
					o.Observed[j*l+t]++
				}
			}
		}
		if last < 0 {
			return nil, fmt.Errorf("tempora: instance %d has no observed value (every value is NaN)", i)
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
			return nil, fmt.Errorf("tempora: feature %s is never observed (every value is NaN)", name(j))
		}
	}
	return o, nil
}

// sameObservation fails unless observe and observeReference agree on x
// under a: the same Observation, field by field, or the same error message.
func sameObservation(t *testing.T, what string, x *Tensor, a Alignment) {
	t.Helper()
	name := func(j int) string { return fmt.Sprintf("%d (%q)", j, fmt.Sprint("f", j)) }
	got, gerr := observe(x, a, name)
	want, werr := observeReference(x, a, name)
	switch {
	case (gerr == nil) != (werr == nil):
		t.Errorf("%s, alignment %v: error %v, reference %v", what, a, gerr, werr)
	case gerr != nil && gerr.Error() != werr.Error():
		t.Errorf("%s, alignment %v: error\n%v\nreference\n%v", what, a, gerr, werr)
	case !reflect.DeepEqual(got, want):
		t.Errorf("%s, alignment %v: observation\n%+v\nreference\n%+v", what, a, got, want)
	}
}

// TestObserveMatchesReference compares observe with observeReference on
// tensors with NaN at the ends and in the middle of series, series and
// instances and features without an observed value, ±Inf at various
// places (alone, after NaN, after an instance that fails otherwise),
// padding at either end read with either alignment, and series lengths
// around the four-way unrolling of finite.All; then on random tensors.
func TestObserveMatchesReference(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	type cell struct {
		i, j, t int
		v       float64
	}
	// padStart and padEnd give instance i (of m) a length of its own,
	// l−i−1 for i < l, placed at the start or the end of the time axis.
	padEnd := func(m, d, l int) []cell {
		var c []cell
		for i := range m {
			for j := range d {
				for t := max(l-i%l, 1); t < l; t++ {
					c = append(c, cell{i, j, t, nan})
				}
			}
		}
		return c
	}
	padStart := func(m, d, l int) []cell {
		var c []cell
		for i := range m {
			for j := range d {
				for t := range min(i%l, l-1) {
					c = append(c, cell{i, j, t, nan})
				}
			}
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		m, d, l int
		cells   []cell
	}{
		{"complete", 3, 2, 8, nil},
		{"complete, one timestep", 3, 2, 1, nil},
		{"complete, one value", 1, 1, 1, nil},
		{"NaN first", 3, 2, 8, []cell{{1, 0, 0, nan}}},
		{"NaN last", 3, 2, 8, []cell{{1, 1, 7, nan}}},
		{"NaN in the middle", 3, 2, 9, []cell{{0, 1, 4, nan}, {2, 0, 5, nan}}},
		{"NaN at both ends", 3, 2, 7, []cell{{0, 0, 0, nan}, {0, 0, 6, nan}, {0, 1, 0, nan}, {0, 1, 6, nan}}},
		{"all-NaN series", 3, 2, 5, []cell{{1, 0, 0, nan}, {1, 0, 1, nan}, {1, 0, 2, nan}, {1, 0, 3, nan}, {1, 0, 4, nan}}},
		{"all-NaN instance", 3, 1, 3, []cell{{1, 0, 0, nan}, {1, 0, 1, nan}, {1, 0, 2, nan}}},
		{"feature never observed", 2, 2, 2, []cell{{0, 1, 0, nan}, {0, 1, 1, nan}, {1, 1, 0, nan}, {1, 1, 1, nan}}},
		{"+Inf first", 3, 2, 8, []cell{{0, 0, 0, inf}}},
		{"+Inf last", 3, 2, 8, []cell{{2, 1, 7, inf}}},
		{"-Inf in the middle", 3, 2, 6, []cell{{1, 1, 3, -inf}}},
		{"Inf after NaN in its series", 3, 2, 6, []cell{{1, 0, 1, nan}, {1, 0, 4, -inf}}},
		{"Inf before NaN in its series", 3, 2, 6, []cell{{1, 0, 1, inf}, {1, 0, 4, nan}}},
		{"Inf after a series with NaN", 3, 2, 6, []cell{{1, 0, 2, nan}, {1, 1, 5, inf}}},
		{"two Inf, the first named", 3, 2, 6, []cell{{1, 1, 5, inf}, {1, 1, 2, -inf}, {2, 0, 0, inf}}},
		{"Inf in an instance otherwise all NaN", 2, 1, 2, []cell{{1, 0, 0, nan}, {1, 0, 1, inf}}},
		{"Inf after an all-NaN instance", 2, 1, 2, []cell{{0, 0, 0, nan}, {0, 0, 1, nan}, {1, 0, 1, inf}}},
		{"Inf and a feature never observed", 2, 2, 1, []cell{{0, 1, 0, nan}, {1, 1, 0, nan}, {1, 0, 0, inf}}},
		{"padded at the end", 6, 3, 7, padEnd(6, 3, 7)},
		{"padded at the start", 6, 3, 7, padStart(6, 3, 7)},
		{"padded at the end, with a gap", 6, 3, 7, append(padEnd(6, 3, 7), cell{0, 2, 3, nan})},
		{"padded at the start, with Inf", 6, 3, 7, append(padStart(6, 3, 7), cell{4, 1, 6, -inf})},
	} {
		for _, l := range []int{tc.l, tc.l + 1, tc.l + 2, tc.l + 3} {
			// The same cells in longer series (the extra timesteps
			// observed), so that each case meets every remainder of
			// the unrolling.
			if l != tc.l && tc.l < 5 {
				continue // the short cases are about their exact lengths
			}
			x := NewTensor(tc.m, tc.d, l)
			for k := range x.Data {
				x.Data[k] = float64(k%7) - 3
			}
			for _, c := range tc.cells {
				x.Set(c.i, c.j, c.t, c.v)
			}
			for _, a := range []Alignment{AlignStart, AlignEnd} {
				sameObservation(t, fmt.Sprintf("%s (L = %d)", tc.name, l), x, a)
			}
		}
	}
	// Random tensors: each series complete, with a few NaN, padded at one
	// end, all NaN, or (rarely) with an infinity.
	r := NewRand(1, "observe-reference")
	for n := range 2000 {
		m, d, l := 1+r.IntN(5), 1+r.IntN(4), 1+r.IntN(11)
		x := NewTensor(m, d, l)
		for k := range x.Data {
			x.Data[k] = r.NormFloat64()
		}
		for i := range m {
			for j := range d {
				s := x.Series(i, j)
				switch r.IntN(6) {
				case 0:
					s[r.IntN(l)] = nan
				case 1:
					for t := l - r.IntN(l+1); t < l; t++ {
						s[t] = nan
					}
				case 2:
					for t := range r.IntN(l + 1) {
						s[t] = nan
					}
				case 3:
					if r.IntN(10) == 0 {
						for t := range s {
							s[t] = nan
						}
					}
				}
				if r.IntN(40) == 0 {
					s[r.IntN(l)] = math.Inf(1 - 2*r.IntN(2))
				}
			}
		}
		for _, a := range []Alignment{AlignStart, AlignEnd} {
			sameObservation(t, fmt.Sprintf("random tensor %d (%d×%d×%d)", n, m, d, l), x, a)
		}
	}
}
