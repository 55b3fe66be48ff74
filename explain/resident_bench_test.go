package explain_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/resident"
)

// timedBlocks times the PredictBlocks calls of a holdModel.
type timedBlocks struct {
	*holdModel
	inside time.Duration
}

func (t *timedBlocks) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	began := time.Now()
	err := t.holdModel.PredictBlocks(dst, x, blocks)
	t.inside += time.Since(began)
	return err
}

func (t *timedBlocks) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	return resident.FillScratch(dst, x, blocks, scratch, fill, t.PredictBlocks)
}

// BenchmarkResidentDrawCost is BenchmarkDrawCost on the resident path:
// the same shapes (issue 22: Table 1's 1000 × 10 × 20, 1000 × 40 × 20,
// 6400 × 30 × 50, 500 × 100 × 200), model, tests and single worker, with
// the model's held data capability (Engine.Hold) held in process (as a
// model process does: it applies each block to its
// copy, predicts the block's rows and restores them). Reported per op:
// draws; model calls (PredictBlocks calls, packed draws); ns per instance
// evaluation (ns/eval); the model's own ns per instance (model-ns/eval,
// timed around its predictions); the model side's cost of applying and
// restoring the blocks (side-ns/eval); tempora's own cost, the rest
// (own-ns/eval: permuting the block in the worker's copy, gathering it,
// the losses); and that cost per perturbed cell (own-ns/cell). own-ns/eval
// does not grow with D, and own-ns/cell stays flat as L grows: what
// tempora does per draw is proportional to the cells it perturbs, and it
// never copies or sends the unchanged ones.
func BenchmarkResidentDrawCost(b *testing.B) {
	for _, sh := range []struct{ m, d, l int }{{1000, 10, 20}, {1000, 40, 20}, {6400, 30, 50}, {500, 100, 200}} {
		b.Run(fmt.Sprintf("%dx%dx%d", sh.m, sh.d, sh.l), func(b *testing.B) {
			data, inner := drawCostProblem(sh.m, sh.d, sh.l)
			var predicting time.Duration
			model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
				began := time.Now()
				err := inner(dst, x)
				predicting += time.Since(began)
				return err
			})
			const draws = 4
			tests := make([]explain.Test, sh.d)
			for j := range tests {
				tests[j] = explain.Test{Features: []int{j}, Window: tempora.Window{Start: 0, End: sh.l - 1}, Permutations: draws, Key: strconv.Itoa(j)}
			}
			tb := &timedBlocks{holdModel: &holdModel{inner: model}}
			eng, err := explain.NewEngine(model, data, nil, 1, 1)
			if err != nil {
				b.Fatal(err)
			}
			eng.Hold(tb)
			if _, err := eng.Run(context.Background(), tests); err != nil { // the working copies
				b.Fatal(err)
			}
			calls0 := tb.calls.Load()
			tb.inside, predicting = 0, 0
			b.ResetTimer()
			for b.Loop() {
				if _, err := eng.Run(context.Background(), tests); err != nil {
					b.Fatal(err)
				}
			}
			nd := float64(sh.d * draws)
			evals := nd * float64(sh.m) * float64(b.N)
			perEval := float64(b.Elapsed().Nanoseconds()) / evals
			modelNs := float64(predicting.Nanoseconds()) / evals
			sideNs := float64((tb.inside - predicting).Nanoseconds()) / evals
			own := perEval - modelNs - sideNs
			b.ReportMetric(nd, "draws")
			b.ReportMetric(float64(tb.calls.Load()-calls0)/float64(b.N), "calls")
			b.ReportMetric(perEval, "ns/eval")
			b.ReportMetric(modelNs, "model-ns/eval")
			b.ReportMetric(sideNs, "side-ns/eval")
			b.ReportMetric(own, "own-ns/eval")
			b.ReportMetric(own/float64(sh.l), "own-ns/cell")
		})
	}
}
