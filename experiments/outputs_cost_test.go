package experiments

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// The cost of K outputs (issue 30): the feature tests of a model with K
// outputs should cost no more model calls than those of a one-output
// model, since the output family of every important feature reuses the
// draws of its test on the whole model (one draw gives every output's
// loss; docs/decisions.md, decision 24).

// outputsCostConfig is a forecaster of Table 1's shape: 1000 instances ×
// 10 features × 20 timesteps, 5 relevant features read by each of 10
// horizons over windows of its own (different lags and weights), target
// noise SD 1 (R² about 0.9 per horizon), and noise weights of SD 0.05 on
// every feature and timestep of the black box, so that the 5 irrelevant
// features are read by the model but by no target, as Table 1's terms
// scaled by β are: their tests are not trivial.
var outputsCostConfig = synth.OutputsConfig{Kind: tempora.Horizons, Instances: 1000, Features: 10, Timesteps: 20, Outputs: 10, Relevant: 5, NoiseScale: 0.05}

// outputsCostK are the numbers of outputs compared.
var outputsCostK = []int{1, 2, 5, 10}

// outputsCostRatio is the most the feature tests of K = 10 outputs may
// cost, in model calls, relative to one output (issue 30).
const outputsCostRatio = 1.2

// firstHorizons returns the model and data of p's first k horizons; k =
// 1 is a model with one output (Dataset.Outputs nil), as any one-output
// forecaster.
func firstHorizons(p *synth.OutputsProblem, k int) (tempora.Model, *tempora.Dataset) {
	all := p.Data.K()
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		pred := make([]float64, x.M*all)
		if err := p.Model.Predict(pred, x); err != nil {
			return err
		}
		for i := range x.M {
			copy(dst[i*k:(i+1)*k], pred[i*all:i*all+k])
		}
		return nil
	})
	data := *p.Data
	data.Y = make([]float64, p.Data.X.M*k)
	for i := range p.Data.X.M {
		copy(data.Y[i*k:(i+1)*k], p.Data.Y[i*all:i*all+k])
	}
	data.Outputs = &tempora.Outputs{Kind: tempora.Horizons, K: k}
	if k == 1 {
		data.Outputs = nil
	}
	return model, &data
}

// outputsCost is what the feature tests of one explanation cost.
type outputsCost struct {
	// overall and outputs are the draws of those kinds of test
	// (Accounting.Draws); calls the explanation's model calls.
	overall, outputs, calls int64
}

// features returns the feature tests' draws, which are their model calls
// (explainCost checks one call per draw).
func (c outputsCost) features() int64 { return c.overall + c.outputs }

// explainCost explains the first k horizons of p with TIME's defaults
// and returns the cost of its feature tests. It fails the test unless the
// explanation made one model call per draw (plus the baseline's), so that
// draws count model calls.
func explainCost(tb testing.TB, p *synth.OutputsProblem, k int, seed uint64) outputsCost {
	tb.Helper()
	model, data := firstHorizons(p, k)
	ex, err := explain.TIME{Seed: seed}.Explain(context.Background(), model, data)
	if err != nil {
		tb.Fatal(err)
	}
	var c outputsCost
	var draws int64
	for _, d := range ex.Accounting.Draws {
		draws += d.Draws
		switch d.Test {
		case "overall":
			c.overall = d.Draws
		case "outputs":
			c.outputs = d.Draws
		}
	}
	c.calls = ex.Accounting.ModelCalls
	if c.calls != 1+draws {
		tb.Fatalf("K=%d: %d model calls for %d draws: a draw is not one call", k, c.calls, draws)
	}
	return c
}

// BenchmarkOutputsCost reports, for K = 1, 2, 5 and 10 outputs of the
// Table-1-shaped forecaster (outputsCostConfig, one problem), the model
// calls of TIME's feature tests (feature-calls/op: the draws of the
// "overall" and "outputs" tests, one call each) and of the whole
// explanation (model-calls/op). Run it with
//
//	go test ./experiments -run '^$' -bench OutputsCost -benchtime 1x
func BenchmarkOutputsCost(b *testing.B) {
	seed := tempora.DeriveSeed(DefaultSeed, "outputs cost", "0")
	p, err := synth.GenerateOutputs(outputsCostConfig, seed)
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range outputsCostK {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			var c outputsCost
			for range b.N {
				c = explainCost(b, p, k, seed)
			}
			b.ReportMetric(float64(c.features()), "feature-calls/op")
			b.ReportMetric(float64(c.calls), "model-calls/op")
		})
	}
}

// TestOutputsCost checks the cost of K outputs on 6 problems of the
// Table-1-shaped forecaster (outputsCostConfig): the model calls of the
// feature tests of K = 10 outputs, summed over the problems, are at most
// 1.2 times those of the first horizon alone, a one-output model of the
// same data and targets. It logs where the draws go. With
// TEMPORA_OUTPUTS_COST=n it explains n problems, and K = 2 and 5 too.
func TestOutputsCost(t *testing.T) {
	if testing.Short() {
		t.Skip("12 explanations of 1000 × 10 × 20")
	}
	n, ks := 6, []int{1, 10}
	if s := os.Getenv("TEMPORA_OUTPUTS_COST"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("TEMPORA_OUTPUTS_COST=%q", s)
		}
		ks = outputsCostK
	}
	total := make([]outputsCost, len(ks))
	for i := range n {
		seed := tempora.DeriveSeed(DefaultSeed, "outputs cost", strconv.Itoa(i))
		p, err := synth.GenerateOutputs(outputsCostConfig, seed)
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("problem %d:", i)
		for q, k := range ks {
			c := explainCost(t, p, k, seed)
			total[q].overall += c.overall
			total[q].outputs += c.outputs
			total[q].calls += c.calls
			line += fmt.Sprintf(" K=%d %d (overall %d, outputs %d);", k, c.features(), c.overall, c.outputs)
		}
		t.Log(line)
	}
	one := float64(total[0].features())
	for q, k := range ks {
		c := total[q]
		t.Logf("K=%d: feature tests %d model calls over %d problems (overall %d, outputs %d), %.3f × one output; whole explanations %d calls",
			k, c.features(), n, c.overall, c.outputs, float64(c.features())/one, c.calls)
	}
	if os.Getenv("TEMPORA_OUTPUTS_COST") == "" {
		k10 := total[len(total)-1]
		docStates(t, fmt.Sprintf("made %d model calls against %d (%.3f times) for the first horizon alone", k10.features(), total[0].features(), float64(k10.features())/one))
		docStates(t, fmt.Sprintf("made %.1f times the model calls of one", float64(k10.calls)/float64(total[0].calls)))
		c := outputsCostConfig
		docStates(t, fmt.Sprintf("(%d × %d × %d, %d relevant features read by each of %d horizons at its own lags, noise weights %v so that the %d irrelevant features are read by the model only): on %d problems",
			c.Instances, c.Features, c.Timesteps, c.Relevant, c.Outputs, c.NoiseScale, c.Features-c.Relevant, n))
	}
	if r := float64(total[len(total)-1].features()) / one; r > outputsCostRatio {
		t.Errorf("the feature tests of %d outputs make %.3f times the model calls of one output, more than %.1f", ks[len(ks)-1], r, outputsCostRatio)
	}
}
