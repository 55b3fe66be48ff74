package synth

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/tempora-dev/tempora"
)

// standardTol bounds the rounding error of a mean or variance of standardised
// values computed over a few thousand instances (relative precision 1e-16
// times the number of terms and the size of the raw values, far below 1e-9).
const standardTol = 1e-9

func testConfigs() []Config {
	return []Config{
		{Instances: 800, Features: 12, Timesteps: 20, Noise: AutoNoise},
		{Instances: 801, Features: 12, Timesteps: 20, Task: tempora.Classification, Noise: AutoNoise},
		{Instances: 500, Features: 8, Timesteps: 35, WindowIndependent: true, Noise: Noise{Beta: 0.5}},
		{Instances: 600, Features: 6, Timesteps: 3, Task: tempora.Classification, FractionRelevant: 1, Noise: AutoNoise},
	}
}

func TestStandardisedFeatures(t *testing.T) {
	for ci, cfg := range testConfigs() {
		for _, seed := range []uint64{1, 2, 3} {
			p, err := Generate(cfg, seed)
			if err != nil {
				t.Fatal(err)
			}
			g := make([]float64, p.Data.X.M)
			for j := range p.Model.NumFeatures() {
				if err := p.Model.FeatureValues(g, p.Data.X, j); err != nil {
					t.Fatal(err)
				}
				mean, sd := meanSD(g)
				if math.Abs(mean) > standardTol || math.Abs(sd*sd-1) > standardTol {
					t.Errorf("config %d seed %d feature %d: standardised mean %g, variance %g; want 0 and 1",
						ci, seed, j, mean, sd*sd)
				}
			}
		}
	}
}

func TestAggregatorOrdering(t *testing.T) {
	// A cyclic shift inside the window changes the weighted sums (distinct
	// weights, continuous data) but leaves Max and Average unchanged (up to
	// the rounding of a reordered sum).
	const m, l = 50, 10
	w := tempora.Window{Start: 2, End: 7}
	rng := tempora.NewRand(9, "test", "ordering")
	x := tempora.NewTensor(m, 1, l)
	for k := range x.Data {
		x.Data[k] = rng.NormFloat64()
	}
	order := []int{1, 2, 3, 4, 5, 0}
	y := x.Clone()
	tempora.PermuteTimesteps(y, x, []int{0}, w.Start, w.End, order)
	random := linspace12(w.Len())
	rng.Shuffle(len(random), func(a, b int) { random[a], random[b] = random[b], random[a] })
	for _, f := range []FeatureFunction{
		{Aggregator: Max},
		{Aggregator: Average},
		{Aggregator: MonotonicWeightedSum, Weights: linspace12(w.Len())},
		{Aggregator: RandomWeightedSum, Weights: random},
	} {
		for _, nl := range []Nonlinearity{Identity, Abs, Square} {
			f.Window, f.Nonlinearity, f.SD, f.Coefficient = w, nl, 1, 1
			mod, err := NewModel(tempora.Regression, 1, l, 0, 0, []FeatureFunction{f})
			if err != nil {
				t.Fatal(err)
			}
			a, b := make([]float64, m), make([]float64, m)
			mod.FeatureValues(a, x, 0)
			mod.FeatureValues(b, y, 0)
			changed := 0
			for i := range a {
				if math.Abs(a[i]-b[i]) > 1e-12*(1+math.Abs(a[i])) {
					changed++
				}
			}
			if f.Aggregator.OrderingSensitive() && changed < m*9/10 {
				t.Errorf("%v/%v: only %d of %d instances changed under a window permutation", f.Aggregator, nl, changed, m)
			}
			if !f.Aggregator.OrderingSensitive() && changed > 0 {
				t.Errorf("%v/%v: %d instances changed under a window permutation", f.Aggregator, nl, changed)
			}
		}
	}
	// On a generated problem, permuting each feature's window changes its
	// function exactly when the aggregator is a weighted sum.
	p, err := Generate(Config{Instances: 300, Features: 20, Timesteps: 20}, 4)
	if err != nil {
		t.Fatal(err)
	}
	x = p.Data.X
	a, b := make([]float64, x.M), make([]float64, x.M)
	for j := range x.D {
		f := p.Model.Feature(j)
		order := make([]int, f.Window.Len())
		for k := range order {
			order[k] = (k + 1) % len(order)
		}
		y := x.Clone()
		tempora.PermuteTimesteps(y, x, []int{j}, f.Window.Start, f.Window.End, order)
		p.Model.FeatureValues(a, x, j)
		p.Model.FeatureValues(b, y, j)
		changed := false
		for i := range a {
			changed = changed || math.Abs(a[i]-b[i]) > 1e-9*(1+math.Abs(a[i]))
		}
		if changed != f.Aggregator.OrderingSensitive() {
			t.Errorf("feature %d (%v, %v): changed under window permutation = %v", j, p.Generators[j].Type, f.Aggregator, changed)
		}
	}
}

func TestLinspace(t *testing.T) {
	c := linspace12(5)
	want := []float64{1, 1.25, 1.5, 1.75, 2}
	for k := range c {
		if c[k] != want[k] {
			t.Fatalf("linspace(1, 2, 5) = %v, want %v", c, want)
		}
	}
}

func TestPredictErrors(t *testing.T) {
	p, err := Generate(Config{Instances: 20, Features: 4, Timesteps: 6}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, x := p.Model, p.Data.X
	dst := make([]float64, x.M)
	for _, c := range []struct {
		name string
		dst  []float64
		x    *tempora.Tensor
		want string
	}{
		{"nil tensor", dst, nil, "nil data tensor"},
		{"short dst", dst[:5], x, "5 predictions requested for 20 instances"},
		{"wrong D", make([]float64, 2), tempora.NewTensor(2, 5, 6), "data has 5 features × 6 timesteps, model expects 4 × 6"},
		{"wrong L", make([]float64, 2), tempora.NewTensor(2, 4, 7), "model expects 4 × 6"},
		{"bad storage", make([]float64, 2), &tempora.Tensor{M: 2, D: 4, L: 6, Data: make([]float64, 10)}, "holds 10 values"},
	} {
		for name, f := range map[string]func() error{
			"Predict":    func() error { return m.Predict(c.dst, c.x) },
			"Polynomial": func() error { return m.Polynomial(c.dst, c.x, 1) },
			"Targets":    func() error { return m.Targets(c.dst, c.x) },
		} {
			err := f()
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "synth: ") {
				t.Errorf("%s with %s: error %v, want one containing %q", name, c.name, err, c.want)
			}
		}
	}
	if err := m.FeatureValues(dst, x, 4); err == nil {
		t.Error("FeatureValues accepted feature 4 of 4")
	}
	// An empty batch is fine.
	if err := m.Predict(nil, tempora.NewTensor(0, 4, 6)); err != nil {
		t.Errorf("empty batch: %v", err)
	}
}

func TestPredictNoAllocConcurrent(t *testing.T) {
	p, err := Generate(Config{Instances: 500, Task: tempora.Classification, Noise: AutoNoise}, 2)
	if err != nil {
		t.Fatal(err)
	}
	m, x := p.Model, p.Data.X
	want := make([]float64, x.M)
	if err := m.Predict(want, x); err != nil {
		t.Fatal(err)
	}
	for i, v := range want {
		if !(v > 0 && v < 1) {
			t.Fatalf("prediction %d = %v, not a probability", i, v)
		}
	}
	dst := make([]float64, x.M)
	if a := testing.AllocsPerRun(20, func() { m.Predict(dst, x) }); a != 0 {
		t.Errorf("Predict allocates %v times per call", a)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got := make([]float64, x.M)
			for range 20 {
				m.Predict(got, x)
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("concurrent prediction %d = %v, want %v", i, got[i], want[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestNewModelErrors(t *testing.T) {
	ok := FeatureFunction{Window: tempora.Window{Start: 1, End: 3}, Aggregator: Average, SD: 1, Coefficient: 0.5, Relevant: true}
	mod := func(change func(*FeatureFunction)) []FeatureFunction {
		f := ok
		change(&f)
		return []FeatureFunction{f}
	}
	for _, c := range []struct {
		name  string
		task  tempora.Task
		d, l  int
		beta  float64
		funcs []FeatureFunction
		want  string
	}{
		{"task", 5, 1, 5, 0, mod(func(*FeatureFunction) {}), "unknown task 5"},
		{"count", 0, 2, 5, 0, mod(func(*FeatureFunction) {}), "1 feature functions for 2 features"},
		{"beta", 0, 1, 5, -1, mod(func(*FeatureFunction) {}), "noise multiplier -1"},
		{"window", 0, 1, 5, 0, mod(func(f *FeatureFunction) { f.Window.End = 5 }), "window [1, 5] outside 0..4"},
		{"weights", 0, 1, 5, 0, mod(func(f *FeatureFunction) { f.Aggregator = RandomWeightedSum; f.Weights = []float64{1, 2} }), "2 weights for a window of 3"},
		{"stray weights", 0, 1, 5, 0, mod(func(f *FeatureFunction) { f.Weights = []float64{1, 2, 3} }), "takes no weights"},
		{"sd", 0, 1, 5, 0, mod(func(f *FeatureFunction) { f.SD = 0 }), "standardisation SD 0"},
		{"mean", 0, 1, 5, 0, mod(func(f *FeatureFunction) { f.Mean = math.NaN() }), "mean NaN"},
		{"aggregator", 0, 1, 5, 0, mod(func(f *FeatureFunction) { f.Aggregator = 9 }), "invalid aggregator 9"},
		{"nonlinearity", 0, 1, 5, 0, mod(func(f *FeatureFunction) { f.Nonlinearity = -1 }), "invalid nonlinearity -1"},
	} {
		_, err := NewModel(c.task, c.d, c.l, c.beta, 0, c.funcs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
