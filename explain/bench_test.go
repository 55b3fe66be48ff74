package explain_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

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
				if _, err := (explain.TIME{Seed: 1, Tests: testsOf(fixed)}).Explain(context.Background(), f, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDrawCost measures tempora's own cost per instance evaluation
// against the model's, at the shapes of issue 22: Table 1 (1000 × 10 ×
// 20), 1000 × 40 × 20, 6400 × 30 × 50 and 500 × 100 × 200. The model is
// the mean of features 0–4 over the second quarter of the sequence (as
// cheap as a NumPy model per instance). Each op runs one fixed test of 4
// draws per feature, over the whole sequence (the overall tests), on one
// worker. Reported per op: draws; ns per instance evaluation (ns/eval);
// the model's own ns per instance, timed around each of its calls
// (model-ns/eval); their difference, tempora's own cost (own-ns/eval);
// and that cost per perturbed cell (own-ns/cell: a draw perturbs the
// feature's M × L cells). own-ns/cell stays flat as D and L grow: a draw
// costs, outside the model, the cells it perturbs plus the losses.
// drawCostProblem is the problem of the draw-cost benchmarks: Gaussian
// data and a cheap model, the mean of features 0–4 over timesteps
// [L/4, L/2−1], whose predictions are the targets.
func drawCostProblem(m, d, l int) (*tempora.Dataset, tempora.ModelFunc) {
	x := gaussianData(m, d, l, 1)
	lo, hi := l/4, l/2-1
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			var v float64
			for j := range 5 {
				for _, s := range x.Window(i, j, lo, hi) {
					v += s
				}
			}
			dst[i] = v / float64(5*(hi-lo+1))
		}
		return nil
	})
	y := make([]float64, m)
	_ = model(y, x)
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}, model
}

func BenchmarkDrawCost(b *testing.B) {
	for _, sh := range []struct{ m, d, l int }{{1000, 10, 20}, {1000, 40, 20}, {6400, 30, 50}, {500, 100, 200}} {
		b.Run(fmt.Sprintf("%dx%dx%d", sh.m, sh.d, sh.l), func(b *testing.B) {
			data, model := drawCostProblem(sh.m, sh.d, sh.l)
			const draws = 4
			tests := make([]explain.Test, sh.d)
			for j := range tests {
				tests[j] = explain.Test{Features: []int{j}, Window: tempora.Window{Start: 0, End: sh.l - 1}, Permutations: draws, Key: strconv.Itoa(j)}
			}
			// The time spent inside the model, timed around each call.
			var inside time.Duration
			timed := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
				began := time.Now()
				err := model(dst, x)
				inside += time.Since(began)
				return err
			})
			eng, err := explain.NewEngine(timed, data, nil, 1, 1)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := eng.Run(context.Background(), tests); err != nil { // the working copy
				b.Fatal(err)
			}
			inside = 0
			b.ResetTimer()
			for b.Loop() {
				if _, err := eng.Run(context.Background(), tests); err != nil {
					b.Fatal(err)
				}
			}
			nd := float64(sh.d * draws)
			evals := nd * float64(sh.m) * float64(b.N)
			perEval := float64(b.Elapsed().Nanoseconds()) / evals
			modelNs := float64(inside.Nanoseconds()) / evals
			b.ReportMetric(nd, "draws")
			b.ReportMetric(perEval, "ns/eval")
			b.ReportMetric(modelNs, "model-ns/eval")
			b.ReportMetric(perEval-modelNs, "own-ns/eval")
			b.ReportMetric((perEval-modelNs)/float64(sh.l), "own-ns/cell")
		})
	}
}

// BenchmarkMaskCost measures what the masked code paths (data with
// missing values, docs/decisions.md, decision 19) cost on complete data, against the dense
// paths, in one run: at Table 1's shape (1000 × 10 × 20) and at 6400 × 30
// × 50, two Engines on the same all-observed data, one forced onto the
// masked paths (explain.ForceMasked), run the same tests alternately:
// per feature, one across-instance test (the overall test) and one
// within-window test (the ordering test) over the whole sequence, 4 draws
// each, on one worker, with the cheap model of BenchmarkDrawCost (so that
// tempora's own cost shows). Reported: the median over iterations of the
// ratio of the masked time to the dense time (mask-ratio, the issue's
// target is at most 1.10) and each path's ns per instance evaluation.
func BenchmarkMaskCost(b *testing.B) {
	for _, sh := range []struct{ m, d, l int }{{1000, 10, 20}, {6400, 30, 50}} {
		b.Run(fmt.Sprintf("%dx%dx%d", sh.m, sh.d, sh.l), func(b *testing.B) {
			data, model := drawCostProblem(sh.m, sh.d, sh.l)
			const draws = 4
			var tests []explain.Test
			for j := range sh.d {
				w := tempora.Window{Start: 0, End: sh.l - 1}
				tests = append(tests,
					explain.Test{Features: []int{j}, Window: w, Permutations: draws, Key: "across/" + strconv.Itoa(j)},
					explain.Test{Features: []int{j}, Window: w, Kind: explain.WithinWindow{}, Permutations: draws, Key: "within/" + strconv.Itoa(j)})
			}
			engine := func(masked bool) *explain.Engine {
				defer func(f bool) { *explain.ForceMasked = f }(*explain.ForceMasked)
				*explain.ForceMasked = masked
				eng, err := explain.NewEngine(model, data, nil, 1, 1)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := eng.Run(context.Background(), tests); err != nil { // the working copy
					b.Fatal(err)
				}
				return eng
			}
			dense, masked := engine(false), engine(true)
			var td, tm time.Duration
			var ratios []float64
			b.ResetTimer()
			type path struct {
				eng *explain.Engine
				t   *time.Duration
			}
			order := []path{{dense, &td}, {masked, &tm}}
			for b.Loop() {
				// Alternate which path runs first, so that neither always
				// finds the caches warm.
				order[0], order[1] = order[1], order[0]
				d0, m0 := td, tm
				for _, e := range order {
					began := time.Now()
					if _, err := e.eng.Run(context.Background(), tests); err != nil {
						b.Fatal(err)
					}
					*e.t += time.Since(began)
				}
				ratios = append(ratios, float64(tm-m0)/float64(td-d0))
			}
			// The median of the iterations' ratios: on a shared machine a
			// burst of load hits one iteration, not the ratio of the sums.
			slices.Sort(ratios)
			evals := float64(len(tests)*draws*sh.m) * float64(b.N)
			b.ReportMetric(ratios[len(ratios)/2], "mask-ratio")
			b.ReportMetric(float64(td.Nanoseconds())/evals, "dense-ns/eval")
			b.ReportMetric(float64(tm.Nanoseconds())/evals, "masked-ns/eval")
		})
	}
}
