package baselines

import (
	"context"
	"testing"
)

// BenchmarkOcclusion measures OCC at Table-1 scale (1000 instances × 10
// features × 20 timesteps, one-cell windows: 201 model calls of 1000
// instances) on one worker, per instance evaluation.
func BenchmarkOcclusion(b *testing.B) {
	data, f := benchProblem(b, 1000)
	b.ReportAllocs()
	var evals int64
	for b.Loop() {
		e, err := Occlusion{Workers: 1}.Explain(context.Background(), f, data)
		if err != nil {
			b.Fatal(err)
		}
		evals += e.Accounting.InstanceEvals
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(evals), "ns/instance-eval")
}

// BenchmarkTimeSHAPInstance measures TimeSHAP per explained instance at
// Table-1 shape (10 features × 20 timesteps) on one worker with its
// defaults: the pruning call (40 rows), then KernelSHAP over the cells
// kept (all 200 for the first instances of this problem, whose older
// blocks never fall within the tolerance) with 2·200 + 2048 coalitions and the 199 × 199 regression.
func BenchmarkTimeSHAPInstance(b *testing.B) {
	data, f := benchProblem(b, 1000)
	const n = 4
	cfg := TimeSHAP{Instances: n, Workers: 1}
	b.ReportAllocs()
	var evals int64
	for b.Loop() {
		e, err := cfg.Explain(context.Background(), f, data)
		if err != nil {
			b.Fatal(err)
		}
		evals += e.Accounting.InstanceEvals
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(evals), "ns/instance-eval")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/n, "sec/instance")
}

// BenchmarkOcclusionSmall measures OCC on small data (100 instances × 10
// features × 20 timesteps, one-cell windows) on one worker, where its 200
// (feature, window) units are packed 13 to a model call: 17 calls of up to
// 1300 instances instead of 201 calls of 100, which matters for a model
// with a cost per call (a process, Python). It reports the model calls.
func BenchmarkOcclusionSmall(b *testing.B) {
	data, f := benchProblem(b, 100)
	b.ReportAllocs()
	var evals, calls int64
	for b.Loop() {
		e, err := Occlusion{Workers: 1}.Explain(context.Background(), f, data)
		if err != nil {
			b.Fatal(err)
		}
		evals += e.Accounting.InstanceEvals
		calls += e.Accounting.ModelCalls
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(evals), "ns/instance-eval")
	b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
}
