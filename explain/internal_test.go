package explain

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tempora-dev/tempora"
)

func TestUnrankLexicographic(t *testing.T) {
	for n := 1; n <= 5; n++ {
		f, _ := factorial(n, math.MaxInt)
		prev := make([]int, n)
		perm := make([]int, n)
		for r := range f {
			unrank(perm, r)
			if r == 0 {
				for i, v := range perm {
					if v != i {
						t.Fatalf("n=%d: rank 0 is %v, want the identity", n, perm)
					}
				}
			} else if slices.Compare(prev, perm) >= 0 {
				t.Fatalf("n=%d: rank %d gives %v, not after rank %d's %v", n, r, perm, r-1, prev)
			}
			sorted := slices.Sorted(slices.Values(perm))
			for i, v := range sorted {
				if v != i {
					t.Fatalf("n=%d: rank %d gives %v, not a permutation", n, r, perm)
				}
			}
			copy(prev, perm)
		}
		// Strictly increasing over f ranks of n! distinct permutations: the
		// last must be the reversal.
		for i, v := range prev {
			if v != n-1-i {
				t.Fatalf("n=%d: last rank gives %v, want the reversal", n, prev)
			}
		}
	}
}

func TestFactorial(t *testing.T) {
	for _, tc := range []struct {
		n, limit, want int
		ok             bool
	}{
		{0, 1, 1, true}, {1, 1, 1, true}, {2, 2, 2, true}, {3, 6, 6, true}, {3, 5, 0, false},
		{4, 51, 24, true}, {5, 51, 0, false}, {1000, 51, 0, false},
	} {
		got, ok := factorial(tc.n, tc.limit)
		if got != tc.want || ok != tc.ok {
			t.Errorf("factorial(%d, %d) = %d, %v, want %d, %v", tc.n, tc.limit, got, ok, tc.want, tc.ok)
		}
	}
}

// TestWindowSearchOracle drives the bisection with a deterministic,
// monotone oracle (a range's score is the number of true-window timesteps
// it contains, the overall score is the window length, θ·|I| < 1), for
// every true window of every length L in a set, and checks exact recovery
// and the probe bound ⌈log₂ L⌉ + ⌈log₂(L − start)⌉.
func TestWindowSearchOracle(t *testing.T) {
	for _, l := range []int{1, 2, 3, 4, 5, 7, 10, 20, 48, 50} {
		for a := 0; a < l; a++ {
			for b := a; b < l; b++ {
				n := &node{res: &tempora.FeatureResult{Score: float64(b - a + 1)}}
				s := &search{n: n, l: l, thr: 0.5 / float64(b-a+1) * n.res.Score, hi: l}
				s.advance()
				probes := 0
				for !s.done() {
					w, _ := s.probe()
					if w.Start < 0 || w.End >= l || w.Start > w.End {
						t.Fatalf("L=%d window [%d, %d]: probe %v out of range", l, a, b, w)
					}
					lo, hi := max(w.Start, a), min(w.End, b)
					s.update(float64(max(0, hi-lo+1)))
					probes++
				}
				if got := s.window(); got != (tempora.Window{Start: a, End: b}) {
					t.Errorf("L=%d: found %v, want [%d, %d]", l, got, a, b)
				}
				bound := ceilLog2(l) + ceilLog2(l-a)
				if probes > bound {
					t.Errorf("L=%d window [%d, %d]: %d probes, want at most %d", l, a, b, probes, bound)
				}
			}
		}
	}
}

func ceilLog2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

func TestPerturbationString(t *testing.T) {
	for k, want := range map[Perturbation]string{AcrossInstances: "across-instances", WithinWindow: "within-window", 7: "Perturbation(7)"} {
		if got := fmt.Sprint(k); got != want {
			t.Errorf("%d: %q, want %q", int(k), got, want)
		}
	}
}
