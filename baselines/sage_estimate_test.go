package baselines

import (
	"context"
	"testing"
	"time"

	"github.com/tempora-dev/tempora/method"
)

// TestSAGEEstimateEvals checks SAGE's cost estimate against the instance
// evaluations of real runs: exactly the bound MaxPermutations·(D·L+1)·
// background for a capped run that does not converge (Threshold 1e-9), no
// more than it for one that converges first, for each imputer; and no
// estimate without a cap (convergence alone, or a time budget, ends the
// run) or for a configuration the run rejects.
func TestSAGEEstimateEvals(t *testing.T) {
	a := []float64{2, -1, 0.5, 0, 1.5, 0}
	sd := []float64{1, 2, 1, 1, 0.5, 3}
	data, f := linearProblem(t, 300, 2, 3, a, nil, sd, 4)
	ctx := context.Background()
	for _, tc := range []struct {
		cfg   SAGE
		bg    int
		exact bool // the run makes every permutation of the cap
	}{
		{SAGE{Imputer: Marginal, Background: 5, MaxPermutations: 70, BatchSize: 32, Threshold: 1e-9}, 5, true},
		{SAGE{Imputer: Mean, MaxPermutations: 90, BatchSize: 32, Threshold: 1e-9}, 1, true},
		{SAGE{Imputer: Zero, MaxPermutations: 64, Threshold: 1e-9}, 1, true},
		{SAGE{Imputer: Mean, MaxPermutations: 1 << 18, BatchSize: 100}, 1, false},
		{SAGE{Imputer: Marginal, MaxPermutations: 1 << 18, BatchSize: 100}, 128, false},
	} {
		est, exact, ok := method.EstimateEvals(tc.cfg, data)
		want := int64(tc.cfg.MaxPermutations) * int64(data.X.D*data.X.L+1) * int64(tc.bg)
		if !ok || exact || est != want {
			t.Errorf("%s %+v: estimate %d (exact %v, ok %v), want the bound %d", tc.cfg.Imputer, tc.cfg, est, exact, ok, want)
			continue
		}
		r, err := tc.cfg.Estimate(ctx, f, data)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Accounting.InstanceEvals
		switch {
		case tc.exact && got != est:
			t.Errorf("%s capped at %d without converging: %d instance evaluations, want the estimate %d", tc.cfg.Imputer, tc.cfg.MaxPermutations, got, est)
		case !tc.exact && (!r.Converged || got > est):
			t.Errorf("%s: converged %v after %d instance evaluations, want converged within the estimate %d", tc.cfg.Imputer, r.Converged, got, est)
		}
	}
	for _, cfg := range []SAGE{{}, {MaxTime: time.Hour}, {MaxPermutations: 10, Background: 301}, {MaxPermutations: 10, BatchSize: -1}} {
		if est, _, ok := method.EstimateEvals(cfg, data); ok {
			t.Errorf("%+v: estimate %d, want none", cfg, est)
		}
	}
}
