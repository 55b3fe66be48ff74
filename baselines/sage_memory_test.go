package baselines

import (
	"context"
	"strings"
	"testing"
)

// TestSAGEMemoryCheck checks that an absurd BatchSize fails with a
// one-line error naming the estimate and the limit before anything large is
// allocated (issue 12, defect 2: sizes that pass validation must not die
// with "fatal error: out of memory"), and that MaxMemory works as LIME's.
func TestSAGEMemoryCheck(t *testing.T) {
	sd := make([]float64, 4*10)
	a := make([]float64, 4*10)
	for c := range sd {
		sd[c], a[c] = 1, float64(c%3)
	}
	data, f := linearProblem(t, 20, 4, 10, a, nil, sd, 1)
	var err error
	n := allocatedBy(func() {
		_, err = SAGE{Imputer: Mean, BatchSize: 2_000_000_000, Workers: 2}.Explain(context.Background(), f, data)
	})
	if err == nil {
		t.Fatal("SAGE with batches of 2000000000: no error")
	}
	msg := err.Error()
	want := "baselines: SAGE-m with batches of 2000000000 permutations (40 columns, background of 1 rows, 2 workers) needs about 1.2 TiB of memory, more than the limit of"
	if !strings.HasPrefix(msg, want) || strings.ContainsAny(msg, "\n\r") {
		t.Errorf("error %q, want one line starting %q", msg, want)
	}
	if n > 1<<20 {
		t.Errorf("the rejected run allocated %.0f bytes", n)
	}

	// An explicit limit: just above the estimate passes, just below fails,
	// negative disables the check. Marginal imputation over 8 background
	// rows: 64 rows per unit, 2 units per batch of 128.
	const batch = 128
	est := SAGEMemory(40, batch, 8, 64, 2)
	for _, tc := range []struct {
		max   int64
		fails bool
	}{
		{int64(est) + 1, false},
		{int64(est) - 1, true},
		{-1, false},
	} {
		_, err := SAGE{Background: 8, BatchSize: batch, MaxPermutations: batch, Workers: 2, MaxMemory: tc.max}.Explain(context.Background(), f, data)
		if (err != nil) != tc.fails || (err != nil && !strings.Contains(err.Error(), "SAGE.MaxMemory")) {
			t.Errorf("MaxMemory %d (estimate %.0f): got %v, want failure %v", tc.max, est, err, tc.fails)
		}
	}
}

// TestSAGEMemoryEstimate checks SAGEMemory against the bytes a run
// allocates where SAGE's buffers dominate: one batch of 4096 permutations
// of 200 columns (scores and permutations 6.6 MB each) with mean
// imputation (units of 64 rows, 0.1 MB of imputed instances per worker).
// The estimate must be within 10% below the allocation (it leaves out a
// small random source per permutation and the explanation, about 1% in
// all) and 25% above it (a check that refuses runs that fit is a defect
// too).
func TestSAGEMemoryEstimate(t *testing.T) {
	const m, d, l, batch, bg = 16, 10, 20, 4096, 1
	sd := make([]float64, d*l)
	a := make([]float64, d*l)
	for c := range sd {
		sd[c], a[c] = 1, float64(c%5)-2
	}
	data, f := linearProblem(t, m, d, l, a, nil, sd, 2)
	for _, workers := range []int{1, 2} {
		var err error
		got := allocatedBy(func() {
			_, err = SAGE{Imputer: Mean, BatchSize: batch, MaxPermutations: batch, Workers: workers}.Explain(context.Background(), f, data)
		})
		if err != nil {
			t.Fatal(err)
		}
		est := SAGEMemory(d*l, batch, bg, 64, workers)
		t.Logf("%d workers: estimate %.0f bytes, allocated %.0f (ratio %.3f)", workers, est, got, est/got)
		if est < 0.90*got || est > 1.25*got {
			t.Errorf("%d workers: estimate %.0f bytes, allocated %.0f", workers, est, got)
		}
	}
}
