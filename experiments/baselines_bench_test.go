package experiments

import (
	"context"
	"sync"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// baselinesBenchProblem is the Table-1 classification problem of the paper's
// baseline comparison (1000 instances × 10 features × 20 timesteps, half
// of the features relevant, automatic noise), generated once per test
// binary.
var baselinesBenchProblem = sync.OnceValues(func() (*synth.Problem, error) {
	return synth.Generate(synth.Config{
		Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5,
		Task: tempora.Classification, Noise: synth.Noise{Auto: true},
	}, 1)
})

// BenchmarkBaselines runs each baseline once per iteration on the Table-1
// classification problem with the paper's settings (SAGE capped at
// baselines.SAGEMaxPermutations, as the experiments run it) and reports the
// wall time per explanation (sec/op), the model calls and instance
// evaluations per explanation, and, for SAGE, the permutations sampled and
// whether the run converged.
//
// Targets on a 2-core machine: PERM ≤ 5 s, LIME ≤ 60 s, SAGE ≤ 120 s,
// SAGE-m and SAGE-z ≤ 10 s each. Run one method with, for example,
//
//	go test ./experiments/ -run '^$' -bench 'Baselines/method=PERM$' -benchtime 1x
func BenchmarkBaselines(b *testing.B) {
	p, err := baselinesBenchProblem()
	if err != nil {
		b.Fatal(err)
	}
	sage := func(imp baselines.Imputer) tempora.Explainer {
		return baselines.SAGE{Imputer: imp, MaxPermutations: baselines.SAGEMaxPermutations, Seed: 1}
	}
	for _, tc := range []struct {
		name string
		exp  tempora.Explainer
	}{
		{"PERM", baselines.PERM{Seed: 1, Tests: explain.FixedTests}},
		{"LIME", baselines.LIME{Seed: 1}},
		{"SAGE", sage(baselines.Marginal)},
		{"SAGE-m", sage(baselines.Mean)},
		{"SAGE-z", sage(baselines.Zero)},
	} {
		b.Run("method="+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var calls, evals, perms, converged float64
			for b.Loop() {
				var e *tempora.Explanation
				var err error
				if s, ok := tc.exp.(baselines.SAGE); ok {
					var r *baselines.SAGEResult
					r, err = s.Estimate(context.Background(), p.Model, p.Data)
					if err == nil {
						perms += float64(r.Permutations)
						if r.Converged {
							converged++
						}
						e = &tempora.Explanation{Accounting: r.Accounting}
					}
				} else {
					e, err = tc.exp.Explain(context.Background(), p.Model, p.Data)
				}
				if err != nil {
					b.Fatal(err)
				}
				calls += float64(e.Accounting.ModelCalls)
				evals += float64(e.Accounting.InstanceEvals)
			}
			n := float64(b.N)
			b.ReportMetric(b.Elapsed().Seconds()/n, "sec/op")
			b.ReportMetric(calls/n, "model-calls/op")
			b.ReportMetric(evals/n, "instance-evals/op")
			if _, ok := tc.exp.(baselines.SAGE); ok {
				b.ReportMetric(perms/n, "permutations/op")
				b.ReportMetric(converged/n, "converged/op")
			}
		})
	}
}
