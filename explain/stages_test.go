package explain_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// TestTIMEReproducesTests checks that every p-value and score TIME reports
// with fixed or Besag–Clifford tests
// comes from the test docs/decisions.md documents: the block, the kind of
// permutation, the stream key time/feature/<j>/<test>, the cap and the
// stopping rule. Each test is rerun alone on a fresh Engine with the same
// seed and must give the same p-value and score exactly. The model reads
// feature 2 strongly over [5, 9] and, very weakly, at timestep 0 (a share
// of the importance far below the search threshold), so the window is
// [5, 9] while a test of the whole sequence gives different losses: a
// window test run on the wrong block cannot reproduce the reported score.
// (The explanation reports no ordering scores, so the ordering tests are
// compared by p-value only.)
func TestTIMEReproducesTests(t *testing.T) {
	const m, d, l = 400, 4, 15
	x := gaussianData(m, d, l, 11)
	strong := weightedWindow(2, 5, []float64{1, 2, 3, 4, 5})
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		if err := strong(dst, x); err != nil {
			return err
		}
		for i := range dst {
			dst[i] += 0.02 * x.At(i, 2, 0)
		}
		return nil
	})
	data := regressionData(t, x, model, 0.5, 11)
	alpha := explain.DefaultAlpha
	// The sequential configurations use Besag–Clifford's tests, each
	// reproducible alone; the family stopping rule's tests depend on their
	// family (TestFamilyStop* in pvalue_test.go).
	for _, cfg := range []explain.TIME{{Seed: 3, Tests: explain.BesagCliffordTests}, {Seed: 3, Tests: explain.FixedTests}, {Seed: 3, Permutations: 40, Tests: explain.BesagCliffordTests}} {
		t.Run(fmt.Sprintf("tests=%v/P=%d", cfg.Tests, cfg.Permutations), func(t *testing.T) {
			ex, err := cfg.Explain(context.Background(), model, data)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, ex, alpha)
			// The cap and stopping rule of a test in a family of size fam,
			// for a block of n permuted elements (within-window tests of
			// the default caps enumerate windows of up to 4 timesteps).
			rule := func(fam int, within bool, n int) (int, explain.Stop) {
				p := cfg.Permutations
				switch {
				case p > 0:
				case cfg.Tests == explain.FixedTests:
					p = explain.DefaultPermutations
				default:
					p = explain.MinPermutations(fam, alpha)
					if f := map[int]int{1: 1, 2: 2, 3: 6, 4: 24}[n]; within && f > 0 {
						p = max(p, f-1)
					}
				}
				if cfg.Tests == explain.FixedTests {
					return p, explain.Fixed{}
				}
				return p, explain.SequentialStop(alpha, p)
			}
			whole := tempora.Window{Start: 0, End: l - 1}
			check := func(what string, j int, kind string, w tempora.Window, k explain.Perturbation, fam int, p, score float64) {
				t.Helper()
				n := w.Len()
				perms, stop := rule(fam, k == (explain.WithinWindow{}), n)
				eng, err := explain.NewEngine(model, data, nil, cfg.Seed, 2)
				if err != nil {
					t.Fatal(err)
				}
				res, err := eng.Run(context.Background(), []explain.Test{{
					Features: []int{j}, Window: w, Kind: k, Permutations: perms, Stop: stop,
					Key: fmt.Sprintf("time/feature/%d/%s", j, kind),
				}})
				if err != nil {
					t.Fatal(err)
				}
				if res[0].PValue != p || (!math.IsNaN(score) && res[0].Score != score) {
					t.Errorf("feature %d %s: reported p %v score %v, the documented test gives p %v score %v", j, what, p, score, res[0].PValue, res[0].Score)
				}
			}
			if !ex.Features[2].Important {
				t.Fatalf("feature 2 is not important: %+v", ex.Features[2])
			}
			for j, f := range ex.Features {
				check("overall", j, "overall", whole, explain.AcrossInstances{}, d, f.PValue, f.Score)
				if !f.Important {
					continue
				}
				if j != 2 || *f.Window != (tempora.Window{Start: 5, End: 9}) {
					t.Fatalf("feature %d important with window %v, want feature 2 with window [5, 9]", j, f.Window)
				}
				// The caps below an important feature are those of
				// PowerHits times as many tests for the family {ordering,
				// window} (2 tests), OrderingHits times for the window
				// ordering (a family of 1).
				k := explain.PowerHits
				check("ordering", j, "ordering", whole, explain.WithinWindow{}, 2*k, f.OrderingPValue, math.NaN())
				check("window", j, "window", *f.Window, explain.AcrossInstances{}, 2*k, f.WindowPValue, f.WindowScore)
				check("window ordering", j, "window-ordering", *f.Window, explain.WithinWindow{}, explain.OrderingHits, f.WindowOrderingPValue, math.NaN())
			}
		})
	}
}

// TestTIMEWindowOrderingLevel checks the level of the window-ordering test,
// a family of one decided at p ≤ α. The model weighs the window [5, 8] by
// (1, 1, 3, 5): of the 23 non-identity orderings exactly one, the swap of
// the two unit weights, leaves every prediction unchanged (x+y = y+x
// exactly in floating point), and every other one changes them, so the
// exact test gives p = (1 + 1)/24 = 0.083, between α/2 and α: significant.
// Windows of 4 timesteps are enumerated exactly in both modes.
func TestTIMEWindowOrderingLevel(t *testing.T) {
	x := gaussianData(400, 3, 12, 12)
	f := weightedWindow(1, 5, []float64{1, 1, 3, 5})
	data := regressionData(t, x, f, 0.1, 12)
	for _, cfg := range []explain.TIME{{Seed: 1}, {Seed: 1, Tests: explain.FixedTests}} {
		ex, err := cfg.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, ex, explain.DefaultAlpha)
		fr := ex.Features[1]
		if !fr.Important || fr.Window == nil || *fr.Window != (tempora.Window{Start: 5, End: 8}) || !fr.WindowSignificant {
			t.Fatalf("fixed=%v: feature 1 %+v, want important with a significant window [5, 8]", (cfg.Tests == explain.FixedTests), fr)
		}
		if fr.WindowOrderingPValue != 2.0/24 || !fr.WindowOrderingImportant {
			t.Errorf("fixed=%v: window ordering p %v important %v, want 2/24 and important", (cfg.Tests == explain.FixedTests), fr.WindowOrderingPValue, fr.WindowOrderingImportant)
		}
		if c := ex.Accounting.Draws[4]; c.Tests != 1 || c.Draws != 23 {
			t.Errorf("fixed=%v: window-ordering draws %+v, want one exact test of 23 draws", (cfg.Tests == explain.FixedTests), c)
		}
	}
}
