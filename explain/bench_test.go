package explain_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// benchProblem returns a regression problem of M instances, 10 features
// and 20 timesteps whose model reads features 0–2 over timesteps 5–9 (a
// cheap model, so that the engine's own work shows), with its model.
func benchProblem(m int) (*tempora.Dataset, tempora.ModelFunc) {
	x := gaussianData(m, 10, 20, 1)
	f := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			var v float64
			for j := range 3 {
				for k, s := range x.Window(i, j, 5, 9) {
					v += float64(k+1) * s
				}
			}
			dst[i] = v
		}
		return nil
	})
	y := make([]float64, m)
	_ = f(y, x)
	rng := tempora.NewRand(1, "noise")
	for i := range y {
		y[i] += rng.NormFloat64()
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}, f
}

// BenchmarkEngineRun runs one batch of 20 tests (10 fixed, 10 sequential,
// 100 draws at most each) of a cheap model on 200 instances: mostly the
// engine's own work (batching, the worker pool, permuting blocks).
func BenchmarkEngineRun(b *testing.B) {
	data, f := benchProblem(200)
	var tests []explain.Test
	for j := range 10 {
		w := tempora.Window{Start: 0, End: 19}
		tests = append(tests,
			explain.Test{Features: []int{j}, Window: w, Permutations: 100, Key: "fixed/" + strconv.Itoa(j)},
			explain.Test{Features: []int{j}, Window: w, Permutations: 100, Key: "seq/" + strconv.Itoa(j), Stop: explain.SequentialStop(0.1, 100)})
	}
	eng, err := explain.NewEngine(f, data, nil, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eng.Run(context.Background(), tests); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTIME explains the benchmark problem of 500 instances in the
// default sequential mode and in fixed mode.
func BenchmarkTIME(b *testing.B) {
	data, f := benchProblem(500)
	for _, fixed := range []bool{false, true} {
		name := "sequential"
		if fixed {
			name = "fixed"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (explain.TIME{Seed: 1, Fixed: fixed}).Explain(context.Background(), f, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
