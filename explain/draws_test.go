package explain_test

import (
	"context"
	"math"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// table1 returns the Table-1 problem of the paper (1000 × 10 × 20,
// classification, automatic noise) for seed.
func table1(t testing.TB, seed uint64) *synth.Problem {
	t.Helper()
	noise, err := synth.ParseNoise("auto")
	if err != nil {
		t.Fatal(err)
	}
	p, err := synth.Generate(synth.Config{Task: tempora.Classification, Noise: noise}, seed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func totalDraws(ex *tempora.Explanation) int64 {
	var n int64
	for _, d := range ex.Accounting.Draws {
		n += d.Draws
	}
	return n
}

// TestFamilyStopDrawsTable1 measures, at Table-1 shape, the draws of the
// family stopping rule against Besag–Clifford's sequential tests (the
// previous default) over 16 problems: at most half as many in total
// (issue 22), with a power (relevant features found) within one SE of
// Besag–Clifford's (binomial SE over the relevant features).
func TestFamilyStopDrawsTable1(t *testing.T) {
	if testing.Short() {
		t.Skip("paper-shape runs")
	}
	var fam, bc int64
	var found [2]int
	relevant := 0
	for seed := range uint64(16) {
		p := table1(t, seed)
		a, err := explain.TIME{Seed: seed}.Explain(context.Background(), p.Model, p.Data)
		if err != nil {
			t.Fatal(err)
		}
		b, err := explain.TIME{Seed: seed, BesagClifford: true}.Explain(context.Background(), p.Model, p.Data)
		if err != nil {
			t.Fatal(err)
		}
		fa, fb := totalDraws(a), totalDraws(b)
		fam += fa
		bc += fb
		for j := range a.Features {
			if p.Truth[j].Relevant {
				relevant++
				if a.Features[j].Important {
					found[0]++
				}
				if b.Features[j].Important {
					found[1]++
				}
			}
			if a.Features[j].Important != b.Features[j].Important {
				t.Logf("seed %d feature %d: family %v, Besag–Clifford %v", seed, j, a.Features[j].Important, b.Features[j].Important)
			}
		}
		t.Logf("seed %d: family %d draws (%v), Besag–Clifford %d (%v)", seed, fa, a.Accounting.Draws, fb, b.Accounting.Draws)
	}
	ratio := float64(fam) / float64(bc)
	t.Logf("draws: family %d, Besag–Clifford %d, ratio %.3f", fam, bc, ratio)
	pa, pb := float64(found[0])/float64(relevant), float64(found[1])/float64(relevant)
	se := math.Sqrt(pb * (1 - pb) / float64(relevant))
	t.Logf("power: family %.3f, Besag–Clifford %.3f (SE %.3f) over %d relevant features", pa, pb, se, relevant)
	if pa < pb-se {
		t.Errorf("family power %.3f below Besag–Clifford's %.3f by more than one SE %.3f", pa, pb, se)
	}
	if ratio > 0.5 {
		t.Errorf("family stopping makes %.3f of Besag–Clifford's draws, want at most 0.5", ratio)
	}
}
