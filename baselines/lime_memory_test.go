package baselines

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// allocatedBy returns the bytes allocated while f runs.
func allocatedBy(f func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc - before.TotalAlloc)
}

// TestLIMEMemoryCheck is the regression test of issue 12, defect 2 (LIME
// part): Samples 2000000000 used to pass validation and then die with
// "fatal error: runtime: out of memory". It must fail with a one-line error
// naming the estimate and the limit, before allocating anything large.
func TestLIMEMemoryCheck(t *testing.T) {
	sd := make([]float64, 4*10)
	a := make([]float64, 4*10)
	for c := range sd {
		sd[c], a[c] = 1, float64(c%3)
	}
	data, f := linearProblem(t, 20, 4, 10, a, nil, sd, 1)
	var err error
	n := allocatedBy(func() {
		_, err = LIME{Samples: 2_000_000_000, Workers: 2}.Explain(context.Background(), f, data)
	})
	if err == nil {
		t.Fatal("LIME with 2000000000 samples: no error")
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{"baselines: LIME with 2000000000 samples per instance (40 columns, 2 workers) needs about 2.4 TiB of memory, more than the limit of"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("error %q is not one line", msg)
	}
	if n > 1<<20 {
		t.Errorf("the rejected run allocated %.0f bytes", n)
	}

	// An explicit limit: just above the estimate passes, just below fails,
	// negative disables the check.
	const samples, workers = 300, 1
	est := LIMEMemory(data.X.M, 40, samples, workers)
	for _, tc := range []struct {
		max   int64
		fails bool
	}{
		{int64(est) + 1, false},
		{int64(est) - 1, true},
		{-1, false},
	} {
		_, err := LIME{Samples: samples, Workers: workers, MaxMemory: tc.max}.Explain(context.Background(), f, data)
		if (err != nil) != tc.fails || (err != nil && !strings.Contains(err.Error(), "LIME.MaxMemory")) {
			t.Errorf("MaxMemory %d (estimate %.0f): got %v, want failure %v", tc.max, est, err, tc.fails)
		}
	}
}

// TestLIMEMemoryEstimate checks LIMEMemory against the bytes a run
// actually allocates, for a configuration where LIME's buffers dominate
// (2000 samples × 200 columns, so the per-worker matrices are 3.2 MB each).
// The estimate must be within 5% below (it leaves out the solver's small
// per-instance workspaces, about 1% here and vanishing as samples grow) and
// 25% above the allocation (a check that refuses runs that fit is a defect
// too).
func TestLIMEMemoryEstimate(t *testing.T) {
	const m, d, l, samples = 4, 10, 20, 2000
	sd := make([]float64, d*l)
	a := make([]float64, d*l)
	for c := range sd {
		sd[c], a[c] = 1, float64(c%5)-2
	}
	data, f := linearProblem(t, m, d, l, a, nil, sd, 2)
	for _, workers := range []int{1, 2} {
		var err error
		got := allocatedBy(func() {
			_, err = LIME{Samples: samples, Workers: workers}.Explain(context.Background(), f, data)
		})
		if err != nil {
			t.Fatal(err)
		}
		est := LIMEMemory(m, d*l, samples, workers)
		t.Logf("%d workers: estimate %.0f bytes, allocated %.0f (ratio %.3f)", workers, est, got, est/got)
		if est < 0.95*got || est > 1.25*got {
			t.Errorf("%d workers: estimate %.0f bytes, allocated %.0f", workers, est, got)
		}
	}
}
