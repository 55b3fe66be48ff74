package experiments

import (
	"context"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// TestTIMEFidelityTable1 runs TIME on 20 seeded problems of the paper's
// Table 1 setting (classification, 1000 instances × 10 features × 20
// timesteps, half of the features relevant, automatic noise) and checks the
// mean feature power and FDR against the paper's TIME row (power 0.930,
// FDR 0.037 over 100 models): power ≥ 0.9 and FDR ≤ 0.1 (the nominal FDR
// level). Power and FDR are computed here, independently of the
// experiments package's metrics: recall and 1 − precision of the important
// features, with precision 1 when nothing is selected and recall 1 when
// nothing is relevant.
func TestTIMEFidelityTable1(t *testing.T) {
	if testing.Short() {
		t.Skip("runs TIME on 20 Table-1 problems")
	}
	const (
		models   = 20
		minPower = 0.9
		maxFDR   = 0.1
	)
	cfg := synth.Config{
		Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5,
		Task: tempora.Classification, Noise: synth.AutoNoise,
	}
	var sumPower, sumFDR float64
	for k := range models {
		seed := uint64(1 + k)
		p, err := synth.Generate(cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := explain.TIME{Seed: seed}.Explain(context.Background(), p.Model, p.Data)
		if err != nil {
			t.Fatal(err)
		}
		truth := make([]bool, len(ex.Features))
		found := make([]bool, len(ex.Features))
		for j, f := range ex.Features {
			truth[j], found[j] = p.Truth[j].Relevant, f.Important
		}
		power, fdr := PowerFDR(truth, found)
		t.Logf("seed %d: power %.2f FDR %.2f", seed, power, fdr)
		sumPower += power
		sumFDR += fdr
	}
	power, fdr := sumPower/models, sumFDR/models
	t.Logf("mean feature power %.3f, FDR %.3f over %d models (paper: 0.930, 0.037)", power, fdr, models)
	if power < minPower {
		t.Errorf("mean feature power %.3f < %.2f", power, minPower)
	}
	if fdr > maxFDR {
		t.Errorf("mean feature FDR %.3f > %.2f", fdr, maxFDR)
	}
}
