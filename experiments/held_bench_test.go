package experiments

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/resident"
	"github.com/tempora-dev/tempora/synth"
)

// heldBenchInstances is the instance count of BenchmarkSweepHeld: a
// quarter of the test-size sweeps' 6400, so that the plain run takes
// about half a minute on one core.
const heldBenchInstances = 1600

// timedHeld is a held-data capability that sums the wall time of its
// predictions.
type timedHeld struct {
	resident.Model
	ns *atomic.Int64
}

func (h timedHeld) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	defer h.add(time.Now())
	return h.Model.PredictBlocks(dst, x, blocks)
}

func (h timedHeld) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	defer h.add(time.Now())
	return h.Model.PredictBlocksFilled(dst, x, blocks, scratch, fill)
}

func (h timedHeld) add(start time.Time) { h.ns.Add(int64(time.Since(start))) }

// BenchmarkSweepHeld measures docs/decisions.md, decision 28, in one run:
// one explanation of a test-size sweep problem (classification, 30
// features, 50 timesteps, 10 relevant, heldBenchInstances instances) in
// the paper configuration on one worker, with the synthetic model plain
// and with its held data, reporting the process's CPU seconds of each,
// the seconds inside the model of each (for the held model, its block
// calls, which include writing the draw's block) and the CPU ratio, and
// failing when the two explanations or their model calls differ.
func BenchmarkSweepHeld(b *testing.B) {
	cfg := synth.Config{Instances: heldBenchInstances, Features: 30, Timesteps: 50, FractionRelevant: 0.33,
		Task: tempora.Classification, Noise: synth.AutoNoise}
	p, err := synth.Generate(cfg, 7)
	if err != nil {
		b.Fatal(err)
	}
	c := explain.PaperTIME()
	c.Seed, c.Workers = 7, 1
	for b.Loop() {
		var plainNS, heldNS atomic.Int64
		plainModel := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			defer func(start time.Time) { plainNS.Add(int64(time.Since(start))) }(time.Now())
			return p.Model.Predict(dst, x)
		})
		cpu0 := cpuSeconds(b)
		plain, err := c.Explain(context.Background(), plainModel, p.Data)
		if err != nil {
			b.Fatal(err)
		}
		cpu1 := cpuSeconds(b)
		held, err := c.ExplainHeld(context.Background(), p.Model, timedHeld{p.Model.Held(), &heldNS}, p.Data)
		if err != nil {
			b.Fatal(err)
		}
		cpu2 := cpuSeconds(b)
		if a, h := fmt.Sprintf("%+v", plain.Features), fmt.Sprintf("%+v", held.Features); a != h {
			b.Fatalf("the explanations differ with held data:\n%s\n%s", a, h)
		}
		if plain.Accounting.ModelCalls != held.Accounting.ModelCalls || plain.Accounting.InstanceEvals != held.Accounting.InstanceEvals {
			b.Fatalf("model calls %d and %d, evaluations %d and %d", plain.Accounting.ModelCalls, held.Accounting.ModelCalls,
				plain.Accounting.InstanceEvals, held.Accounting.InstanceEvals)
		}
		b.ReportMetric(cpu1-cpu0, "plain-cpu-s")
		b.ReportMetric(cpu2-cpu1, "held-cpu-s")
		b.ReportMetric((cpu1-cpu0)/(cpu2-cpu1), "cpu-ratio")
		b.ReportMetric(time.Duration(plainNS.Load()).Seconds(), "plain-model-s")
		b.ReportMetric(time.Duration(heldNS.Load()).Seconds(), "held-model-s")
	}
}
