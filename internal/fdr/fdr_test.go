package fdr

import (
	"math"
	"testing"
)

// adjTol is the tolerance for adjusted p-values computed by hand as
// fractions and rounded to 12 digits in the tables below.
const adjTol = 1e-12

func TestBH(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        []float64
		alpha    float64
		adjusted []float64
		reject   []bool
	}{
		{
			// m = 1: the adjusted value is the p-value itself; rejected iff p ≤ α.
			name: "single", p: []float64{0.05}, alpha: 0.1,
			adjusted: []float64{0.05}, reject: []bool{true},
		},
		{
			name: "single not rejected", p: []float64{0.1 + 1e-9}, alpha: 0.1,
			adjusted: []float64{0.1 + 1e-9}, reject: []bool{false},
		},
		{
			// p.adjust(c(0.01, 0.04, 0.03, 0.005), "BH"), computed by hand:
			// sorted 0.005, 0.01, 0.03, 0.04 (ranks 1..4, m = 4);
			// m·p/r = 0.02, 0.02, 0.04, 0.04; running minimum from the top
			// leaves them unchanged. Input order: 0.02, 0.04, 0.04, 0.02.
			// At α = 0.05 the thresholds r·α/m are 0.0125, 0.025, 0.0375,
			// 0.05; p_(4) = 0.04 ≤ 0.05, so all four are rejected.
			name: "all rejected", p: []float64{0.01, 0.04, 0.03, 0.005}, alpha: 0.05,
			adjusted: []float64{0.02, 0.04, 0.04, 0.02}, reject: []bool{true, true, true, true},
		},
		{
			// p.adjust(c(0.04, 0.001, 0.2, 0.03, 0.04), "BH"), by hand:
			// sorted 0.001 (#1), 0.03 (#3), 0.04 (#0), 0.04 (#4), 0.2 (#2),
			// ties in input order; m·p/r = 0.005, 0.075, 0.0666…, 0.05, 0.2;
			// running minimum from the top: 0.2, 0.05, 0.05, 0.05, 0.005.
			// Input order: 0.05, 0.005, 0.2, 0.05, 0.05. At α = 0.05 the
			// thresholds are 0.01, 0.02, 0.03, 0.04, 0.05: the largest rank
			// with p_(r) ≤ rα/m is 4 (0.04 ≤ 0.04), so four are rejected even
			// though p_(2) = 0.03 > 0.02 (step-up).
			name: "ties and step-up", p: []float64{0.04, 0.001, 0.2, 0.03, 0.04}, alpha: 0.05,
			adjusted: []float64{0.05, 0.005, 0.2, 0.05, 0.05}, reject: []bool{true, true, false, true, true},
		},
		{
			// Ties at the rejection boundary. p = (0.02, 0.02, 0.5), m = 3:
			// m·p/r = 0.06, 0.03, 0.5 → running min 0.03, 0.03, 0.5.
			// At α = 0.03: thresholds 0.01, 0.02, 0.03; rank 2 has 0.02 ≤ 0.02.
			name: "tied at boundary", p: []float64{0.02, 0.02, 0.5}, alpha: 0.03,
			adjusted: []float64{0.03, 0.03, 0.5}, reject: []bool{true, true, false},
		},
		{
			// Nothing rejected. p = (0.9, 0.6), m = 2: sorted 0.6, 0.9;
			// m·p/r = 1.2, 0.9; running minimum from the top: 0.9, 0.9.
			name: "none rejected", p: []float64{0.9, 0.6}, alpha: 0.1,
			adjusted: []float64{0.9, 0.9}, reject: []bool{false, false},
		},
		{
			// p = (1, 1, 1): m·p/r = 3, 1.5, 1 → running minimum 1, 1, 1.
			name: "all ones", p: []float64{1, 1, 1}, alpha: 0.1,
			adjusted: []float64{1, 1, 1}, reject: []bool{false, false, false},
		},
		{
			// The TIME reference's golden row: five features at p = 1/51 in
			// a family of ten give adjusted (10/5)·(1/51) = 0.0392156862745.
			name: "reference golden", p: []float64{1.0 / 51, 1.0 / 51, 1, 1.0 / 51, 1, 1, 1.0 / 51, 1, 1.0 / 51, 1}, alpha: 0.1,
			adjusted: []float64{2.0 / 51, 2.0 / 51, 1, 2.0 / 51, 1, 1, 2.0 / 51, 1, 2.0 / 51, 1},
			reject:   []bool{true, true, false, true, false, false, true, false, true, false},
		},
		{
			// One p-value at 1/51 among ten cannot be rejected at α = 0.1:
			// 1/51 = 0.0196 > 1·0.1/10 = 0.01; its adjusted value is 10/51.
			name: "single minimum among ten", p: []float64{1.0 / 51, 1, 1, 1, 1, 1, 1, 1, 1, 1}, alpha: 0.1,
			adjusted: []float64{10.0 / 51, 1, 1, 1, 1, 1, 1, 1, 1, 1},
			reject:   []bool{false, false, false, false, false, false, false, false, false, false},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reject := make([]bool, len(tc.p))
			adj := make([]float64, len(tc.p))
			BH(reject, adj, tc.p, tc.alpha)
			for i := range tc.p {
				if math.Abs(adj[i]-tc.adjusted[i]) > adjTol {
					t.Errorf("adjusted[%d] = %v, want %v", i, adj[i], tc.adjusted[i])
				}
				if reject[i] != tc.reject[i] {
					t.Errorf("reject[%d] = %v, want %v", i, reject[i], tc.reject[i])
				}
				// Rejection agrees with the adjusted values.
				if reject[i] != (adj[i] <= tc.alpha+adjTol) {
					t.Errorf("reject[%d] = %v inconsistent with adjusted %v at α = %v", i, reject[i], adj[i], tc.alpha)
				}
			}
		})
	}
}

func TestBHEmpty(t *testing.T) {
	BH(nil, nil, nil, 0.1) // must not panic
}

func TestBHPanics(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reject []bool
		adj    []float64
		p      []float64
		alpha  float64
	}{
		{"short reject", make([]bool, 1), make([]float64, 2), []float64{0.1, 0.2}, 0.1},
		{"short adjusted", make([]bool, 2), make([]float64, 1), []float64{0.1, 0.2}, 0.1},
		{"NaN p", make([]bool, 1), make([]float64, 1), []float64{math.NaN()}, 0.1},
		{"p above 1", make([]bool, 1), make([]float64, 1), []float64{1.5}, 0.1},
		{"negative alpha", make([]bool, 1), make([]float64, 1), []float64{0.5}, -0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("BH did not panic")
				}
			}()
			BH(tc.reject, tc.adj, tc.p, tc.alpha)
		})
	}
}
