package finite

import (
	"math"
	"testing"
)

// TestAll puts a NaN, +Inf or -Inf at every position of slices of lengths
// around the four-way unrolling, among finite values that include the
// extremes (whose v-v is still 0), and compares All with the definition.
func TestAll(t *testing.T) {
	finite := []float64{0, math.Copysign(0, -1), 1, -2.5, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e308}
	for n := range 11 {
		s := make([]float64, n)
		for k := range s {
			s[k] = finite[k%len(finite)]
		}
		if !All(s) {
			t.Errorf("length %d, all finite: All = false", n)
		}
		for k := range s {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				old := s[k]
				s[k] = bad
				if All(s) {
					t.Errorf("length %d, %v at %d: All = true", n, bad, k)
				}
				s[k] = old
			}
		}
	}
	// Finite values whose sum overflows are still all finite: All adds
	// v-v, never v.
	if !All([]float64{math.MaxFloat64, math.MaxFloat64, math.MaxFloat64, math.MaxFloat64, math.MaxFloat64}) {
		t.Error("values whose sum overflows: All = false")
	}
}

func TestIndex(t *testing.T) {
	isInf := func(v float64) bool { return math.IsInf(v, 0) }
	for _, n := range []int{0, 1, 1023, 1024, 1025, 3000} {
		s := make([]float64, n)
		if k := Index(s, isInf); k != -1 {
			t.Errorf("length %d, all finite: Index = %d, want -1", n, k)
		}
		for _, at := range []int{0, n / 2, n - 1} {
			if at < 0 || at >= n {
				continue
			}
			// A NaN before the infinity is skipped by bad, not by the block
			// check: the index is the infinity's, the first bad value.
			if at > 0 {
				s[at-1] = math.NaN()
			}
			s[at] = math.Inf(-1)
			if n > 1 && at < n-1 {
				s[n-1] = math.Inf(1) // a later infinity is not the first
			}
			if k := Index(s, isInf); k != at {
				t.Errorf("length %d, infinity at %d: Index = %d", n, at, k)
			}
			clear(s)
		}
	}
}
