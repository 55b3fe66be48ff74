package explain

import "math"

// exactDraws returns n! − 1 and true if n! − 1 ≤ limit, or 0 and false
// otherwise. It does not overflow for any limit.
func exactDraws(n, limit int) (int, bool) {
	if limit == math.MaxInt {
		limit-- // n! ≤ MaxInt is then still decided exactly below
	}
	f, ok := factorial(n, limit+1)
	if !ok {
		return 0, false
	}
	return f - 1, true
}

// factorial returns n! and true if n! ≤ limit, or 0 and false otherwise.
// It never overflows.
func factorial(n, limit int) (int, bool) {
	f := 1
	for k := 2; k <= n; k++ {
		if f > limit/k {
			return 0, false
		}
		f *= k
	}
	if f > limit {
		return 0, false
	}
	return f, true
}

// unrank writes into perm the permutation of 0..len(perm)-1 of lexicographic
// rank r (rank 0 is the identity), using the factorial number system. r must
// be less than len(perm)!.
func unrank(perm []int, r int) {
	n := len(perm)
	for i := range perm {
		perm[i] = i
	}
	f := 1
	for k := 2; k < n; k++ {
		f *= k
	}
	// perm[i:] holds the unused elements in ascending order.
	for i := 0; i < n-1; i++ {
		q := r / f
		r %= f
		// Move element i+q to position i, shifting the rest right.
		v := perm[i+q]
		copy(perm[i+1:i+q+1], perm[i:i+q])
		perm[i] = v
		f /= n - 1 - i
	}
}
