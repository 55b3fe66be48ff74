package experiments

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// BenchmarkTIME runs TIME (P = 50, default settings, GOMAXPROCS workers) on
// synthetic classification problems at the paper's Table 1 scale and at
// the largest size of the test-set sweep. Besides sec/op it reports the
// model calls and instance evaluations of one explanation and:
//
//   - ns/instance: the bare model's serial cost per instance, timed (with
//     the benchmark timer stopped) by predicting the whole dataset on one
//     goroutine just before every explanation, so that it sees the same
//     machine load;
//   - overhead = wall time / (instance evaluations × ns/instance): the wall
//     time relative to the serial cost of the model evaluations alone
//     (below 1 when the workers' parallelism more than pays for the
//     permutations, losses and bookkeeping);
//   - model-share: the time the workers spend inside Model.Predict during
//     the explanation, divided by workers × wall time; 1 − model-share is
//     the engine's own share (plus idle time) whatever the machine load.
func BenchmarkTIME(b *testing.B) {
	for _, cfg := range []synth.Config{
		{Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5},
		{Instances: 6400, Features: 30, Timesteps: 50, FractionRelevant: 1.0 / 3},
	} {
		cfg.Task, cfg.Noise = tempora.Classification, synth.AutoNoise
		name := fmt.Sprintf("M=%d/D=%d/L=%d", cfg.Instances, cfg.Features, cfg.Timesteps)
		b.Run(name, func(b *testing.B) {
			p, err := synth.Generate(cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			model := &timedModel{m: p.Model}
			var (
				acc     tempora.Accounting
				costSum time.Duration
			)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				costSum += modelCost(b, p.Model, p.Data.X)
				model.ns.Store(0)
				b.StartTimer()
				ex, err := explain.TIME{Seed: 1, Tests: explain.FixedTests}.Explain(context.Background(), model, p.Data)
				if err != nil {
					b.Fatal(err)
				}
				acc = ex.Accounting
			}
			wall := b.Elapsed().Seconds() / float64(b.N)
			perInstance := costSum.Seconds() / float64(b.N)
			inModel := float64(model.ns.Load()) / 1e9 // the last explanation's
			b.ReportMetric(wall, "sec/op")
			b.ReportMetric(float64(acc.ModelCalls), "model-calls/op")
			b.ReportMetric(float64(acc.InstanceEvals), "instance-evals/op")
			b.ReportMetric(perInstance*1e9, "ns/instance")
			b.ReportMetric(wall/(float64(acc.InstanceEvals)*perInstance), "overhead")
			b.ReportMetric(inModel/(float64(runtime.GOMAXPROCS(0))*acc.Runtime.Seconds()), "model-share")
		})
	}
}

// timedModel adds up the time spent in its model's Predict.
type timedModel struct {
	m  tempora.Model
	ns atomic.Int64
}

func (t *timedModel) Predict(dst []float64, x *tempora.Tensor) error {
	start := time.Now()
	err := t.m.Predict(dst, x)
	t.ns.Add(int64(time.Since(start)))
	return err
}

// modelCost returns the serial time per instance of m.Predict on x: the
// median of 5 timings of at least 20 ms each.
func modelCost(b *testing.B, m tempora.Model, x *tempora.Tensor) time.Duration {
	b.Helper()
	dst := make([]float64, x.M)
	per := make([]time.Duration, 5)
	for k := range per {
		n := 0
		start := time.Now()
		for time.Since(start) < 20*time.Millisecond {
			if err := m.Predict(dst, x); err != nil {
				b.Fatal(err)
			}
			n++
		}
		per[k] = time.Since(start) / time.Duration(n*x.M)
	}
	slices.Sort(per)
	return per[2]
}
