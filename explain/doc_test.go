package explain

import (
	"fmt"
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
		{"doc.go", fmt.Sprintf("%d for 10 features at α = %v, %d for the pair {ordering, window}", MinPermutations(10, alpha), alpha, MinPermutations(2, alpha))},
		{"doc.go", fmt.Sprintf("at most AnytimeCap(P) = ⌊4P/3⌋ + 1 for the same smallest p-value: %d for 10 features at α = %v (AnytimePermutations), and %d when TIME.Permutations is 50", anytime(10, 0), alpha, anytime(10, 50))},
		{"doc.go", fmt.Sprintf("(%d for one window at α = %v)", cfg.familyDraws(1), alpha)},
		{"doc.go", fmt.Sprintf("exactly TIME.Permutations draws (DefaultPermutations, %d, by default)", DefaultPermutations)},
		{"doc.go", fmt.Sprintf("with h = min(%d, ⌊α·P⌋ + 1)", StopHits)},
		{"caps.go", fmt.Sprintf("(%d for 10 features at α = %v, %d for the pair {ordering, window})", MinPermutations(10, alpha), alpha, MinPermutations(2, alpha))},
		{"caps.go", fmt.Sprintf("AnytimeCap(P) for anytime tests, %d for P = %d", AnytimeCap(MinPermutations(10, alpha)), MinPermutations(10, alpha))},
		{"caps.go", fmt.Sprintf("(%d for one window at α = %v)", cfg.familyDraws(1), alpha)},
		{"tests.go", fmt.Sprintf("(%d for 10 tests at 0.1)", MinPermutations(10, 0.1))},
		{"stop_anytime.go", fmt.Sprintf("(%d for p = %d)", AnytimeCap(99), 99)},
	} {
		if doc := read(f.file); !strings.Contains(doc, f.text) {
			t.Errorf("%s does not state %q (the value the code has now)", f.file, f.text)
		}
	}
}
