package explain_test

import (
	"context"
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
// previous default) over several problems: at most half as many in total
// (issue 22), with the same features found.
func TestFamilyStopDrawsTable1(t *testing.T) {
	if testing.Short() {
		t.Skip("paper-shape runs")
	}
	var fam, bc int64
	for seed := range uint64(4) {
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
			if a.Features[j].Important != b.Features[j].Important {
				t.Logf("seed %d feature %d: family %v, Besag–Clifford %v", seed, j, a.Features[j].Important, b.Features[j].Important)
			}
		}
		t.Logf("seed %d: family %d draws (%v), Besag–Clifford %d (%v)", seed, fa, a.Accounting.Draws, fb, b.Accounting.Draws)
	}
	ratio := float64(fam) / float64(bc)
	t.Logf("draws: family %d, Besag–Clifford %d, ratio %.3f", fam, bc, ratio)
	if ratio > 0.5 {
		t.Errorf("family stopping makes %.3f of Besag–Clifford's draws, want at most 0.5", ratio)
	}
}
