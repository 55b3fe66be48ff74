package explain_test

import (
	"context"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// TestEstimates checks the run's estimates: after the baseline, the worst
// case of TIME.Estimate with a measured cost per instance; once the
// feature tests are decided, a bound on the run's calls and evaluations
// that holds and is below the first; for each batch size.
func TestEstimates(t *testing.T) {
	data, f := benchProblem(80)
	for _, batch := range []int{0, 30, explain.BatchAuto} {
		var got []tempora.RunEstimate
		cfg := explain.TIME{Seed: 3, Workers: 2, Batch: batch, Estimates: func(e tempora.RunEstimate) { got = append(got, e) }}
		ex, err := cfg.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].After != "baseline" || got[1].After != "feature tests" {
			t.Fatalf("batch %d: estimates %+v", batch, got)
		}
		worst, err := cfg.Estimate(data)
		if err != nil {
			t.Fatal(err)
		}
		first, second := got[0], got[1]
		acc := ex.Accounting
		tuning := acc.InstanceEvals - int64(data.X.M)*(1+acc.TotalDraws().Draws) // the passes of batch auto
		if batch != explain.BatchAuto && (first.ModelCalls != worst.ModelCalls || first.InstanceEvals != worst.InstanceEvals) {
			t.Errorf("batch %d: first estimate %+v, TIME.Estimate's worst case %+v", batch, first, worst)
		}
		if first.InstanceEvals != worst.InstanceEvals+float64(tuning) || !(first.SecondsPerInstance > 0) || first.SecondsLeft != first.SecondsPerInstance*worst.Draws*80 {
			t.Errorf("batch %d: first estimate %+v (worst %+v, tuning %d)", batch, first, worst, tuning)
		}
		if !(second.ModelCalls >= float64(acc.ModelCalls) && second.InstanceEvals >= float64(acc.InstanceEvals) && second.ModelCalls < first.ModelCalls) {
			t.Errorf("batch %d: second estimate %+v, first %+v, run %+v", batch, second, first, acc)
		}
		t.Logf("batch %d: run %d calls; estimated %.0f, then %.0f", batch, acc.ModelCalls, first.ModelCalls, second.ModelCalls)
	}
}
