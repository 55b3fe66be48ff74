// Package fdr implements false discovery rate control for families of
// p-values.
//
// BH is the Benjamini–Hochberg step-up procedure. For m p-values sorted in
// ascending order, p_(1) ≤ … ≤ p_(m) (ties keep their input order), it
// rejects the hypotheses of ranks 1..k, where
//
//	k = max{ i : p_(i) ≤ i·α/m }
//
// (nothing when no such i exists), and reports the adjusted p-values
//
//	q_(i) = min(1, min_{r ≥ i} m·p_(r)/r),
//
// the running minimum taken from the largest rank downward, capped at 1.
// The hypothesis of rank i is rejected exactly when q_(i) ≤ α. These are the
// values R's p.adjust(p, method = "BH") returns.
//
// References:
//
//   - Y. Benjamini and Y. Hochberg. Controlling the false discovery rate: a
//     practical and powerful approach to multiple testing. J. R. Stat. Soc. B
//     57(1):289–300, 1995.
//   - D. Yekutieli. Hierarchical false discovery rate-controlling
//     methodology. JASA 103(481):309–316, 2008.
package fdr

import (
	"fmt"
	"math"
	"slices"
)

// BH applies the Benjamini–Hochberg step-up procedure at level alpha to the
// p-values p, writing into reject whether each hypothesis is rejected and
// into adjusted its BH-adjusted p-value, both in the order of p. An empty p
// is a no-op.
//
// BH panics if reject or adjusted does not have the length of p, if a
// p-value is NaN or outside [0, 1], or if alpha is NaN or outside [0, 1]:
// these are programming errors.
func BH(reject []bool, adjusted []float64, p []float64, alpha float64) {
	m := len(p)
	if len(reject) != m || len(adjusted) != m {
		panic(fmt.Sprintf("fdr: BH output lengths %d and %d for %d p-values", len(reject), len(adjusted), m))
	}
	if math.IsNaN(alpha) || alpha < 0 || alpha > 1 {
		panic(fmt.Sprintf("fdr: BH level %v outside [0, 1]", alpha))
	}
	for i, v := range p {
		if math.IsNaN(v) || v < 0 || v > 1 {
			panic(fmt.Sprintf("fdr: p-value %d is %v, outside [0, 1]", i, v))
		}
	}
	if m == 0 {
		return
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})

	// k is the number of rejections: the largest rank whose p-value is at
	// most rank·α/m.
	k := 0
	for r := m; r >= 1; r-- {
		if p[order[r-1]] <= float64(r)*alpha/float64(m) {
			k = r
			break
		}
	}
	q := 1.0
	for r := m; r >= 1; r-- {
		i := order[r-1]
		q = min(q, float64(m)*p[i]/float64(r))
		adjusted[i] = q
		reject[i] = r <= k
	}
}
