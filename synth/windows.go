package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/tempora-dev/tempora"
)

// WindowsConfig configures the windows world: regression problems whose
// relevant features are each read over several disjoint windows, with
// weights of either sign, and with small noise weights outside them (as a
// trained network picks up). It is the ground truth of TIME's several
// windows (docs/decisions.md, decision 18).
type WindowsConfig struct {
	// Instances, Features and Timesteps are M, D and L.
	Instances, Features, Timesteps int
	// Relevant is the number of relevant features (the first ones).
	Relevant int
	// Windows is the number of true windows of each relevant feature, 1 to
	// 3; each is 3 to 5 timesteps long and at least 3 timesteps from the
	// next.
	Windows int
	// NoiseScale is the SD of the noise weights ε ~ N(0, NoiseScale²) of a
	// relevant feature's timesteps outside its windows (0: none). Inside a
	// window the weights are ±U(1, 2).
	NoiseScale float64
	// Noise is the SD of the targets' Gaussian noise.
	Noise float64
	// Slope makes each relevant feature's model its least-squares slope
	// over one window of 8 to 12 timesteps (Windows must be 1): weights
	// c·(t − t̄)/h inside it, c = ±U(1, 2) and h the window's half-width,
	// so that the timesteps near the window's centre carry almost no
	// weight while the window's ordering matters (issue 31: TIME must keep
	// such a window whole).
	Slope bool
}

// WindowsProblem is a problem of the windows world.
type WindowsProblem struct {
	// Data holds standard normal values and the targets F(x) + noise.
	Data *tempora.Dataset
	// Model is the noise-free linear model F: feature j contributes
	// Σ_t w_jt·x_jt.
	Model *Model
	// Windows lists the true windows of each feature in time order (none
	// for an irrelevant feature).
	Windows [][]tempora.Window
}

// GenerateWindows draws a problem of the windows world. Random streams:
// ("synth", "windows", "layout") for the windows and weights (a
// RandomWeightedSum over the whole sequence, whose Weights the model uses
// as given), ("synth",
// "windows", "data") for the values and the targets' noise.
func GenerateWindows(cfg WindowsConfig, seed uint64) (*WindowsProblem, error) {
	m, d, l, k := cfg.Instances, cfg.Features, cfg.Timesteps, cfg.Windows
	switch {
	case m < 2 || d < 1:
		return nil, fmt.Errorf("synth: windows world needs at least 2 instances and 1 feature, got %d and %d", m, d)
	case cfg.Relevant < 0 || cfg.Relevant > d:
		return nil, fmt.Errorf("synth: windows world: %d relevant features of %d", cfg.Relevant, d)
	case k < 1 || k > 3:
		return nil, fmt.Errorf("synth: windows world: %d windows per feature, want 1 to 3", k)
	case l < 5*k+3*(k-1):
		return nil, fmt.Errorf("synth: windows world: %d timesteps cannot hold %d windows of up to 5 timesteps 3 apart (need %d)", l, k, 5*k+3*(k-1))
	case cfg.Slope && (k != 1 || l < 12):
		return nil, fmt.Errorf("synth: windows world: a slope needs one window per feature and at least 12 timesteps, got %d and %d", k, l)
	case !(cfg.NoiseScale >= 0) || !(cfg.Noise >= 0) || !finite(cfg.NoiseScale) || !finite(cfg.Noise):
		return nil, fmt.Errorf("synth: windows world: noise scale %v and noise %v, want finite values ≥ 0", cfg.NoiseScale, cfg.Noise)
	}
	rng := tempora.NewRand(seed, "synth", "windows", "layout")
	windows := make([][]tempora.Window, d)
	funcs := make([]FeatureFunction, d)
	for j := range d {
		w := make([]float64, l)
		switch {
		case j < cfg.Relevant && cfg.Slope:
			windows[j] = drawSlope(rng, w, cfg.NoiseScale)
		case j < cfg.Relevant:
			windows[j] = drawWindows(rng, l, k)
			for t := range w {
				w[t] = cfg.NoiseScale * rng.NormFloat64()
			}
			for _, win := range windows[j] {
				for t := win.Start; t <= win.End; t++ {
					w[t] = uniform(rng, 1, 2)
					if rng.IntN(2) == 0 {
						w[t] = -w[t]
					}
				}
			}
		}
		funcs[j] = FeatureFunction{Window: tempora.Window{Start: 0, End: l - 1}, Aggregator: RandomWeightedSum, Weights: w,
			Nonlinearity: Identity, SD: 1, Coefficient: 1, Relevant: j < cfg.Relevant}
	}
	model, err := NewModel(tempora.Regression, d, l, 0, 0, funcs)
	if err != nil {
		return nil, err
	}
	dr := tempora.NewRand(seed, "synth", "windows", "data")
	x := tempora.NewTensor(m, d, l)
	for i := range x.Data {
		x.Data[i] = dr.NormFloat64()
	}
	y := make([]float64, m)
	if err := model.Predict(y, x); err != nil {
		return nil, err
	}
	for i := range y {
		y[i] += cfg.Noise * dr.NormFloat64()
	}
	names := make([]string, d)
	for j := range names {
		names[j] = fmt.Sprint(j)
	}
	return &WindowsProblem{Data: &tempora.Dataset{X: x, Y: y, Task: tempora.Regression, FeatureNames: names}, Model: model, Windows: windows}, nil
}

// drawWindows draws k disjoint windows of 3 to 5 timesteps, at least 3
// apart, in time order: the lengths first, then the slack L − Σlengths −
// 3(k−1) split uniformly among the k + 1 spaces around them.
func drawWindows(rng interface {
	IntN(int) int
}, l, k int) []tempora.Window {
	lens := make([]int, k)
	total := 3 * (k - 1)
	for i := range lens {
		lens[i] = 3 + rng.IntN(3)
		total += lens[i]
	}
	slack := l - total
	cuts := make([]int, k)
	for i := range cuts {
		cuts[i] = rng.IntN(slack + 1)
	}
	slices.Sort(cuts)
	out := make([]tempora.Window, k)
	t := 0
	prev := 0
	for i := range k {
		t += cuts[i] - prev
		prev = cuts[i]
		out[i] = tempora.Window{Start: t, End: t + lens[i] - 1}
		t += lens[i] + 3
	}
	return out
}

// drawSlope draws a slope window of 8 to 12 timesteps anywhere in the
// sequence of len(w) and writes the feature's weights into w: noise weights
// of scale noise outside it, c·(t − t̄)/h inside it (c = ±U(1, 2), t̄ the
// window's centre, h its half-width), the least-squares slope's profile.
func drawSlope(rng *rand.Rand, w []float64, noise float64) []tempora.Window {
	l := len(w)
	n := 8 + rng.IntN(5)
	a := rng.IntN(l - n + 1)
	for t := range w {
		w[t] = noise * rng.NormFloat64()
	}
	c := uniform(rng, 1, 2)
	if rng.IntN(2) == 0 {
		c = -c
	}
	centre, h := float64(a)+float64(n-1)/2, float64(n-1)/2
	for t := a; t < a+n; t++ {
		w[t] = c * (float64(t) - centre) / h
	}
	return []tempora.Window{{Start: a, End: a + n - 1}}
}
