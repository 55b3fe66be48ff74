// Package finite tells cheaply whether float64 values are all finite, for
// the checks that every run makes over its whole data tensor (no ±Inf;
// NaN, a missing value, found where it matters). Those checks look at
// tens of millions of values on the common input, which holds neither:
// All passes such values in one tight pass, and the callers search value
// by value only where it says no.
package finite

// All reports whether s holds neither NaN nor ±Inf. v-v is +0 for a finite
// v and NaN for NaN and ±Inf, and NaN stays NaN through any sum, so the sum
// of v-v over s is 0 exactly when every value is finite: no branch per
// value. Four sums instead of one let the additions overlap rather than
// each wait for the one before.
func All(s []float64) bool {
	var a0, a1, a2, a3 float64
	k := 0
	for ; k+4 <= len(s); k += 4 {
		q := s[k : k+4 : k+4] // one bounds check for the four values
		a0 += q[0] - q[0]
		a1 += q[1] - q[1]
		a2 += q[2] - q[2]
		a3 += q[3] - q[3]
	}
	for _, v := range s[k:] {
		a0 += v - v
	}
	return a0+a1+a2+a3 == 0
}

// Index returns the index of the first value of s for which bad reports
// true, or -1 if there is none. bad must be false for every finite value:
// blocks of finite values (all of them, on complete data) then pass in one
// tight pass of All, and only a block holding a NaN or an infinity is
// searched value by value, in order, so that the index is the first.
func Index(s []float64, bad func(float64) bool) int {
	const block = 1024 // values: 8 KiB, still in cache for the search
	for lo := 0; lo < len(s); lo += block {
		b := s[lo:min(lo+block, len(s))]
		if All(b) {
			continue
		}
		for k, v := range b {
			if bad(v) {
				return lo + k
			}
		}
	}
	return -1
}
