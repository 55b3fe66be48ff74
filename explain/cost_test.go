package explain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// TestCostGuard: an absurd α (1e−300) is refused at once, before the
// model is called, with the estimate in the error, whatever the limit; a
// configuration above MaxDraws is refused with its estimate, and runs
// with a negative (no) limit; the estimate bounds the draws of a run.
func TestCostGuard(t *testing.T) {
	x := gaussianData(50, 3, 6, 1)
	f := weightedWindow(0, 2, []float64{1, 2})
	data := regressionData(t, x, f, 0.1, 1)
	calls := 0
	counting := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		calls++
		return f(dst, x)
	})
	for _, limit := range []int64{0, -1} {
		began := time.Now()
		_, err := explain.TIME{Alpha: 1e-300, MaxDraws: limit}.Explain(context.Background(), counting, data)
		if err == nil || !strings.Contains(err.Error(), "alpha 1e-300") || !strings.Contains(err.Error(), "e+30") || calls != 0 {
			t.Errorf("alpha 1e-300, limit %d: error %v after %d model calls", limit, err, calls)
		}
		if d := time.Since(began); d > time.Second {
			t.Errorf("alpha 1e-300 took %v to refuse", d)
		}
	}
	cost, err := explain.TIME{Alpha: 1e-4}.Estimate(data)
	if err != nil {
		t.Fatal(err)
	}
	_, err = explain.TIME{Alpha: 1e-4, MaxDraws: int64(cost.Draws) - 1}.Explain(context.Background(), counting, data)
	if err == nil || !strings.Contains(err.Error(), "above the limit") || calls != 0 {
		t.Errorf("limit below the estimate %v: error %v after %d calls", cost.Draws, err, calls)
	}
	for _, cfg := range []explain.TIME{{}, {BesagClifford: true}, {Fixed: true}, {Permutations: 30}, {Alpha: 1e-3, MaxDraws: -1}} {
		cost, err := cfg.Estimate(data)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := cfg.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		var draws int64
		for _, d := range ex.Accounting.Draws {
			draws += d.Draws
		}
		if float64(draws) > cost.Draws || float64(ex.Accounting.InstanceEvals) > cost.InstanceEvals || float64(ex.Accounting.ModelCalls) > cost.ModelCalls {
			t.Errorf("%+v: run made %d draws, %+v; estimate %+v", cfg, draws, ex.Accounting, cost)
		}
		if n, exact := cfg.EstimateEvals(data); exact || float64(n) != cost.InstanceEvals {
			t.Errorf("%+v: EstimateEvals %d %v, want the bound %v (not exact)", cfg, n, exact, cost.InstanceEvals)
		}
	}
}
