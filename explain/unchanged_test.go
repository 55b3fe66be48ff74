package explain_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// TestModelWritesIntoBatch: a model that reads features 0 and 1 of a 200 ×
// 4 × 6 problem and then writes zeros into its batch (issue 33) is stopped
// with an error naming the write, whether it writes at the baseline
// prediction (the caller's data) or only in later draws (a worker's copy),
// instead of having all four features reported important.
func TestModelWritesIntoBatch(t *testing.T) {
	x := gaussianData(200, 4, 6, 3)
	read := func(dst []float64, x *tempora.Tensor) {
		for i := range dst {
			var v float64
			for j := range 2 {
				for _, s := range x.Window(i, j, 0, 5) {
					v += s
				}
			}
			dst[i] = v
		}
	}
	y := make([]float64, x.M)
	read(y, x)
	for _, tc := range []struct {
		name string
		from int64 // the first call that writes
		want string
	}{
		{"baseline", 1, "wrote into its batch, the data itself (baseline)"},
		{"draws", 2, "wrote into its batch (instance 0, feature 0, timestep 0:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			model := tempora.ModelFunc(func(dst []float64, b *tempora.Tensor) error {
				read(dst, b)
				if calls.Add(1) >= tc.from {
					clear(b.Data)
				}
				return nil
			})
			data := &tempora.Dataset{X: x.Clone(), Y: y, Task: tempora.Regression}
			_, err := explain.TIME{Seed: 1}.Explain(context.Background(), model, data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// The same model without the write: exactly features 0 and 1.
	data := &tempora.Dataset{X: x.Clone(), Y: y, Task: tempora.Regression}
	e, err := explain.TIME{Seed: 1}.Explain(context.Background(), tempora.ModelFunc(func(dst []float64, b *tempora.Tensor) error { read(dst, b); return nil }), data)
	if err != nil {
		t.Fatal(err)
	}
	for j, f := range e.Features {
		if f.Important != (j < 2) {
			t.Errorf("feature %d important %v, want %v", j, f.Important, j < 2)
		}
	}
}
