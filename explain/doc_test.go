package explain

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// TestDocCaps checks the caps and defaults that the package documentation
// (doc.go) and caps.go state against the functions that decide them.
func TestDocCaps(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			lines = append(lines, strings.TrimPrefix(strings.TrimSpace(l), "//"))
		}
		return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
	}
	const alpha = DefaultAlpha
	cfg, err := TIME{}.config()
	if err != nil {
		t.Fatal(err)
	}
	anytime := func(m, perms int) int { n, _ := AnytimeTests.Family(m, alpha, perms); return n }
	for _, f := range []struct{ file, text string }{
		{"doc.go", fmt.Sprintf("pass BH: %d for 10 features at α = %v.", MinPermutations(10, alpha), alpha)},
		{"doc.go", fmt.Sprintf("at most AnytimeCap(P) = ⌊4P/3⌋ + 1 for the same smallest p-value: %d for 10 features at α = %v (AnytimePermutations), and %d when TIME.Permutations is 50", anytime(10, 0), alpha, anytime(10, 50))},
		{"doc.go", fmt.Sprintf("window 1, …, window k} (%d for one window at α = %v)", cfg.powerDraws(PowerHits, 2), alpha)},
		{"doc.go", fmt.Sprintf("OrderingHits times for the window orderings (%d for one window at α = %v;", cfg.powerDraws(OrderingHits, 1), alpha)},
		{"doc.go", fmt.Sprintf("exactly TIME.Permutations draws (DefaultPermutations, %d, by default)", DefaultPermutations)},
		{"doc.go", fmt.Sprintf("with h = min(%d, ⌊α·P⌋ + 1)", StopHits)},
		{"caps.go", fmt.Sprintf("pass BH (%d for 10 features at α = %v)", MinPermutations(10, alpha), alpha)},
		{"caps.go", fmt.Sprintf("window} PowerHits times MinPermutations (%d for one window at α = %v)", cfg.powerDraws(PowerHits, 2), alpha)},
		{"caps.go", fmt.Sprintf("N = ⌈k·m/α⌉ − 1 (%d for one window at α = %v)", cfg.powerDraws(PowerHits, 2), alpha)},
		{"caps.go", fmt.Sprintf("1/60 and one window, %.2f at N = %d (k = 1) against %.2f at N = %d (k = %d)", binomBelow(MinPermutations(2, alpha), 1.0/60, 1), MinPermutations(2, alpha), binomBelow(cfg.powerDraws(PowerHits, 2), 1.0/60, PowerHits), cfg.powerDraws(PowerHits, 2), PowerHits)},
		{"caps.go", fmt.Sprintf("P(Bin(%d, q) < %d) (%.2f at q = 0.05) against P(Bin(%d, q) < %d) (%.2f) at PowerHits", cfg.powerDraws(OrderingHits, 1), OrderingHits, binomBelow(cfg.powerDraws(OrderingHits, 1), 0.05, OrderingHits), cfg.powerDraws(PowerHits, 1), PowerHits, binomBelow(cfg.powerDraws(PowerHits, 1), 0.05, PowerHits))},
		{"caps.go", fmt.Sprintf("at most %d more draws per claimed window", cfg.powerDraws(OrderingHits, 1)-cfg.powerDraws(PowerHits, 1))},
		{"caps.go", fmt.Sprintf("AnytimeCap(P) for anytime tests, %d for P = %d", AnytimeCap(MinPermutations(10, alpha)), MinPermutations(10, alpha))},
		{"tests.go", fmt.Sprintf("(%d for 10 tests at 0.1)", MinPermutations(10, 0.1))},
		{"stop_anytime.go", fmt.Sprintf("(%d for p = %d)", AnytimeCap(99), 99)},
	} {
		if doc := read(f.file); !strings.Contains(doc, f.text) {
			t.Errorf("%s does not state %q (the value the code has now)", f.file, f.text)
		}
	}
}

// binomBelow returns P(Bin(n, q) < k).
func binomBelow(n int, q float64, k int) float64 {
	p, term := 0.0, math.Pow(1-q, float64(n))
	for i := 0; i < k; i++ {
		p += term
		term *= float64(n-i) / float64(i+1) * q / (1 - q)
	}
	return p
}
