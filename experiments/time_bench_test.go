package experiments

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tempora"
	"tempora/explain"
	"tempora/synth"
)

// BenchmarkTIME runs TIME (P = 50, default settings) on synthetic
// classification problems at the paper's Table 1 scale and at the largest
// size of the test-set sweep. Besides sec/op it reports the model calls and
// instance evaluations of one explanation, the bare model's cost per
// instance (ns/instance, timed in the same benchmark by predicting the
// whole dataset repeatedly on one goroutine) and
//
//	overhead = wall time / (instance evaluations × ns/instance),
//
// the wall time relative to the serial cost of the model evaluations alone
// (below 1 when the workers' parallelism more than pays for the
// permutation and loss bookkeeping).
func BenchmarkTIME(b *testing.B) {
	for _, cfg := range []synth.Config{
		{Instances: 1000, Features: 10, Timesteps: 20},
		{Instances: 6400, Features: 30, Timesteps: 50},
	} {
		cfg.FractionRelevant = 1.0 / 3
		if cfg.Features == 10 {
			cfg.FractionRelevant = 0.5
		}
		cfg.Task, cfg.Noise = tempora.Classification, synth.AutoNoise
		name := fmt.Sprintf("M=%d/D=%d/L=%d", cfg.Instances, cfg.Features, cfg.Timesteps)
		b.Run(name, func(b *testing.B) {
			p, err := synth.Generate(cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			perInstance := modelCost(b, p.Model, p.Data.X)
			var acc tempora.Accounting
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				ex, err := explain.TIME{Seed: 1}.Explain(context.Background(), p.Model, p.Data)
				if err != nil {
					b.Fatal(err)
				}
				acc = ex.Accounting
			}
			wall := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(wall, "sec/op")
			b.ReportMetric(float64(acc.ModelCalls), "model-calls/op")
			b.ReportMetric(float64(acc.InstanceEvals), "instance-evals/op")
			b.ReportMetric(perInstance.Seconds()*1e9, "ns/instance")
			b.ReportMetric(wall/(float64(acc.InstanceEvals)*perInstance.Seconds()), "overhead")
		})
	}
}

// modelCost returns the serial time per instance of m.Predict on x, the
// median of 5 timings of at least 50 ms each.
func modelCost(b *testing.B, m tempora.Model, x *tempora.Tensor) time.Duration {
	b.Helper()
	dst := make([]float64, x.M)
	var per []time.Duration
	for range 5 {
		n := 0
		start := time.Now()
		for time.Since(start) < 50*time.Millisecond {
			if err := m.Predict(dst, x); err != nil {
				b.Fatal(err)
			}
			n++
		}
		per = append(per, time.Since(start)/time.Duration(n*x.M))
	}
	for i := range per { // insertion sort of 5 values
		for k := i; k > 0 && per[k] < per[k-1]; k-- {
			per[k], per[k-1] = per[k-1], per[k]
		}
	}
	return per[2]
}
