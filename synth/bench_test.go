package synth

import (
	"fmt"
	"testing"

	"github.com/tempora-dev/tempora"
)

var benchSizes = []Config{
	{Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5},  // Table 1
	{Instances: 6400, Features: 30, Timesteps: 50, FractionRelevant: 0.33}, // test-set-size sweep
}

func sizeName(c Config) string {
	return fmt.Sprintf("size=%dx%dx%d", c.Instances, c.Features, c.Timesteps)
}

func BenchmarkGenerate(b *testing.B) {
	for _, cfg := range benchSizes {
		cfg.Task, cfg.Noise = tempora.Classification, AutoNoise
		b.Run(sizeName(cfg), func(b *testing.B) {
			b.ReportAllocs()
			seed := uint64(0)
			for b.Loop() {
				if _, err := Generate(cfg, seed); err != nil {
					b.Fatal(err)
				}
				seed++
			}
		})
	}
}

// BenchmarkPredict measures one Predict call on all instances of a
// problem; evals/s is the number of instances predicted per second.
func BenchmarkPredict(b *testing.B) {
	for _, cfg := range benchSizes {
		cfg.Task, cfg.Noise = tempora.Classification, AutoNoise
		p, err := Generate(cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		x := p.Data.X
		dst := make([]float64, x.M)
		b.Run(sizeName(cfg), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Model.Predict(dst, x); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(x.M)/b.Elapsed().Seconds(), "evals/s")
		})
	}
}
