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
	for _, cfg := range []explain.TIME{{}, {Tests: explain.BesagCliffordTests}, {Tests: explain.FixedTests}, {Permutations: 30}, {Alpha: 1e-3, MaxDraws: -1}} {
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

// TestCostBoundsSeveralWindows checks that the estimate bounds runs that
// split windows: a feature read over two disjoint windows and one over a
// single window of a longer series, so that the gap probes, the window
// family of k + 1 tests and the window orderings (capped for power) all
// run.
func TestCostBoundsSeveralWindows(t *testing.T) {
	x := gaussianData(80, 3, 16, 3)
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			var s float64
			for _, t := range []int{2, 3, 4, 11, 12, 13} {
				s += x.At(i, 0, t)
			}
			for t := 5; t <= 9; t++ {
				s += 2 * x.At(i, 1, t) * float64(t-4) // order-sensitive
			}
			dst[i] = s
		}
		return nil
	})
	data := regressionData(t, x, model, 0.1, 3)
	for _, cfg := range []explain.TIME{{}, {Windows: 1}, {Tests: explain.BesagCliffordTests}, {Permutations: 30}, {Tests: explain.FixedTests}} {
		cost, err := cfg.Estimate(data)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := cfg.Explain(context.Background(), model, data)
		if err != nil {
			t.Fatal(err)
		}
		var draws int64
		for _, d := range ex.Accounting.Draws {
			draws += d.Draws
		}
		if float64(draws) > cost.Draws || float64(ex.Accounting.ModelCalls) > cost.ModelCalls {
			t.Errorf("%+v: run made %d draws and %d model calls; estimate %+v", cfg, draws, ex.Accounting.ModelCalls, cost)
		}
		t.Logf("%+v: %d draws of at most %.0f; windows of feature 0: %d", cfg, draws, cost.Draws, len(ex.Features[0].Windows))
	}
}
