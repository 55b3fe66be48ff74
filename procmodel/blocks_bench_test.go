package procmodel

import (
	"fmt"
	"testing"
	"time"

	"github.com/tempora-dev/tempora/resident"
)

// BenchmarkDrawTransport measures what one permutation draw costs through
// a model process (procmodel.Serve in a child, serving windowModel, issue
// 22's cheap model) at the shapes of issue 22: Table 1's 1000 × 10 × 20,
// 1000 × 40 × 20, 6400 × 30 × 50 and 500 × 100 × 200. A draw perturbs one
// feature over the whole sequence (M × L cells).
//
//   - whole: the draw as a plain request, the whole perturbed tensor
//     (Predict; how every draw went before the data was held).
//   - blocks: the draw as a block request, the perturbed block alone
//     (PredictBlocks on resident data), as many draws per call as the
//     explainer packs without a batch limit (explain.DefaultPackRows rows).
//
// Reported: ns per instance evaluation (ns/eval), the model's own ns per
// instance in process on the same data (model-ns/eval), the transport's
// cost, their difference (transport-ns/eval), and that cost per perturbed
// cell (transport-ns/cell). With blocks, the transport's cost per
// evaluation does not grow with D, and per cell it is flat in L; with the
// whole tensor it grows with D·L.
func BenchmarkDrawTransport(b *testing.B) {
	cmd, env := helperCommand("serve-window")
	m, err := Start(b.Context(), cmd, Options{Env: env})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for _, sh := range []struct{ m, d, l int }{{1000, 10, 20}, {1000, 40, 20}, {6400, 30, 50}, {500, 100, 200}} {
		x := randomTensor(sh.m, sh.d, sh.l, "transport")
		// The model's own time per instance, in process, over at least 20ms.
		dst := make([]float64, sh.m)
		var calls int
		start := time.Now()
		for calls == 0 || time.Since(start) < 20*time.Millisecond {
			windowModel(dst, x)
			calls++
		}
		model := float64(time.Since(start).Nanoseconds()) / float64(calls*sh.m)
		report := func(b *testing.B, draws int) {
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N*draws*sh.m)
			b.ReportMetric(per, "ns/eval")
			b.ReportMetric(model, "model-ns/eval")
			b.ReportMetric(per-model, "transport-ns/eval")
			b.ReportMetric((per-model)/float64(sh.l), "transport-ns/cell")
		}
		b.Run(fmt.Sprintf("%dx%dx%d/whole", sh.m, sh.d, sh.l), func(b *testing.B) {
			for b.Loop() {
				if err := m.Predict(dst, x); err != nil {
					b.Fatal(err)
				}
			}
			report(b, 1)
		})
		b.Run(fmt.Sprintf("%dx%dx%d/blocks", sh.m, sh.d, sh.l), func(b *testing.B) {
			k := max(1, (1<<14)/sh.m)
			vals := make([]float64, sh.m*sh.l)
			copy(vals, x.Data)
			blocks := make([]resident.Block, k)
			for i := range blocks {
				blocks[i] = resident.Block{Lo: 0, Hi: sh.m, Features: []int{i % sh.d}, Start: 0, End: sh.l - 1, Values: vals}
			}
			pred := make([]float64, k*sh.m)
			// The resident data goes once, before the timing.
			if err := m.PredictBlocks(pred, x, blocks); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := m.PredictBlocks(pred, x, blocks); err != nil {
					b.Fatal(err)
				}
			}
			report(b, k)
		})
	}
}
