package procmodel

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tempora-dev/tempora/internal/examplemodel"
)

// BenchmarkPredict measures the example additive model (10 features × 20
// timesteps) in process and served by the examples/gomodel child process,
// for several batch sizes. Each reports ns/instance; the subprocess variant
// also reports the protocol's overhead per instance and the ratio of its
// time to the in-process time (measured just before, on the same data).
// The example model is cheap (three window means), so the ratio is an upper
// bound on what a real model (e.g. an LSTM) would see.
func BenchmarkPredict(b *testing.B) {
	const d, l = 10, 20
	terms, err := examplemodel.ParseTerms(examplemodel.DefaultTerms)
	if err != nil {
		b.Fatal(err)
	}
	twin := &examplemodel.Model{Terms: terms, Classification: true}
	bin := gomodelPath(b)
	m, err := Start(context.Background(), []string{bin, "-task", "classification"}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for _, size := range []int{100, 1000, 10000} {
		x := randomTensor(size, d, l, "bench")
		dst := make([]float64, size)
		b.Run(fmt.Sprintf("batch=%d/impl=inprocess", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				twin.Predict(dst, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/instance")
		})
		b.Run(fmt.Sprintf("batch=%d/impl=subprocess", size), func(b *testing.B) {
			// In-process reference time per instance, over at least 20ms.
			var calls int
			start := time.Now()
			for calls == 0 || time.Since(start) < 20*time.Millisecond {
				twin.Predict(dst, x)
				calls++
			}
			inproc := float64(time.Since(start).Nanoseconds()) / float64(calls*size)
			b.ReportAllocs()
			for b.Loop() {
				if err := m.Predict(dst, x); err != nil {
					b.Fatal(err)
				}
			}
			sub := float64(b.Elapsed().Nanoseconds()) / float64(b.N*size)
			b.ReportMetric(sub, "ns/instance")
			b.ReportMetric(sub-inproc, "overhead-ns/instance")
			b.ReportMetric(sub/inproc, "ratio")
		})
	}
}
