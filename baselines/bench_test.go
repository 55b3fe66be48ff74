package baselines

import (
	"context"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// benchProblem is a Table-1-shaped regression problem (10 features × 20
// timesteps) with a cheap linear model, so that the micro-benchmarks
// measure the methods' own overhead rather than the model's.
func benchProblem(b *testing.B, m int) (*tempora.Dataset, linear) {
	const d, l = 10, 20
	a := make([]float64, d*l)
	sd := make([]float64, d*l)
	for c := range a {
		sd[c] = 1
		if c%3 == 0 {
			a[c] = 1
		}
	}
	x := gaussian(m, d, l, nil, sd, 1)
	f := linear{a}
	y := make([]float64, m)
	if err := f.Predict(y, x); err != nil {
		b.Fatal(err)
	}
	return &tempora.Dataset{X: x, Y: y}, f
}

// BenchmarkLIMEInstance measures LIME per explained instance (5000
// samples, 200 columns) on one worker: sampling, one model call and the
// 200×200 weighted ridge fit.
func BenchmarkLIMEInstance(b *testing.B) {
	data, f := benchProblem(b, 200)
	cfg := LIME{Instances: 4, Workers: 1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cfg.Explain(context.Background(), f, data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/4, "sec/instance")
}

// BenchmarkSAGEBatch measures one SAGE batch of 512 permutations over 200
// columns (201 imputed evaluations per permutation) for the default
// imputers, and 64 permutations with the marginal imputer (× 128
// background rows).
func BenchmarkSAGEBatch(b *testing.B) {
	data, f := benchProblem(b, 1000)
	for _, tc := range []struct {
		cfg   SAGE
		perms int
	}{
		{SAGE{Imputer: Marginal, MaxPermutations: 64}, 64},
		{SAGE{Imputer: Mean, MaxPermutations: 512}, 512},
		{SAGE{Imputer: Zero, MaxPermutations: 512}, 512},
	} {
		b.Run("method="+tc.cfg.Imputer.String(), func(b *testing.B) {
			b.ReportAllocs()
			var evals int64
			for b.Loop() {
				r, err := tc.cfg.Estimate(context.Background(), f, data)
				if err != nil {
					b.Fatal(err)
				}
				evals += r.Accounting.InstanceEvals
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(evals), "ns/instance-eval")
		})
	}
}

// BenchmarkPERM measures PERM on 200 cells × 50 permutations of 200
// instances.
func BenchmarkPERM(b *testing.B) {
	data, f := benchProblem(b, 200)
	b.ReportAllocs()
	var evals int64
	for b.Loop() {
		e, err := PERM{Tests: explain.FixedTests}.Explain(context.Background(), f, data)
		if err != nil {
			b.Fatal(err)
		}
		evals += e.Accounting.InstanceEvals
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(evals), "ns/instance-eval")
}
