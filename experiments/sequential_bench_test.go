package experiments

import (
	"context"
	"testing"

	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// BenchmarkTIMESequential explains one Table-1 problem (seed 1) in the
// default sequential mode and in the paper's fixed P = 50, reporting per
// explanation the model calls, the instance evaluations and, for the
// sequential mode, fixed-evals/seq-evals: the ratio of the two modes'
// instance evaluations measured in the same benchmark run.
//
//	go test ./experiments/ -run '^$' -bench TIMESequential -benchtime 1x
func BenchmarkTIMESequential(b *testing.B) {
	p, err := synth.Generate(table1, 1)
	if err != nil {
		b.Fatal(err)
	}
	evals := map[bool]int64{}
	for _, fixed := range []bool{true, false} {
		name := "mode=sequential"
		if fixed {
			name = "mode=fixed-P50"
		}
		b.Run(name, func(b *testing.B) {
			var calls, ev int64
			for b.Loop() {
				ex, err := explain.TIME{Seed: 1, Tests: map[bool]explain.Tests{true: explain.FixedTests}[fixed]}.Explain(context.Background(), p.Model, p.Data)
				if err != nil {
					b.Fatal(err)
				}
				calls, ev = ex.Accounting.ModelCalls, ex.Accounting.InstanceEvals
			}
			evals[fixed] = ev
			b.ReportMetric(float64(calls), "model-calls/op")
			b.ReportMetric(float64(ev), "instance-evals/op")
			if !fixed && evals[true] > 0 {
				b.ReportMetric(float64(evals[true])/float64(ev), "fixed-evals/seq-evals")
			}
		})
	}
}
