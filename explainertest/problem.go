package explainertest

import (
	"math"
	"slices"

	"github.com/tempora-dev/tempora"
)

// Problem returns Test's problem: m instances × d features × l timesteps of
// standard normal data drawn from seed, and a model that uses features 0
// and 1 only, through windows: feature 0 over the last ⌈l/2⌉ timesteps and
// feature 1 over the first two. A regression model predicts
// f(x) = mean of feature 0's window − 0.7·(x₁,₀ + x₁,₁)/2, with targets f(x)
// plus Gaussian noise (SD 0.1); a classification model predicts
// sigmoid(2·f(x)), with labels 1{f(x) > median}. Every other feature is
// irrelevant.
func Problem(m, d, l int, task tempora.Task, seed uint64) (*tempora.Dataset, tempora.Model) {
	rng := tempora.NewRand(seed, "explainertest", "data", task.String())
	x := tempora.NewTensor(m, d, l)
	for k := range x.Data {
		x.Data[k] = rng.NormFloat64()
	}
	start := l / 2
	f := func(x *tempora.Tensor, i int) float64 {
		var s float64
		for _, v := range x.Window(i, 0, start, l-1) {
			s += v
		}
		return s/float64(l-start) - 0.7*(x.At(i, 1, 0)+x.At(i, 1, 1))/2
	}
	var model tempora.ModelFunc = func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			v := f(x, i)
			if task == tempora.Classification {
				v = 1 / (1 + math.Exp(-2*v))
			}
			dst[i] = v
		}
		return nil
	}
	y := make([]float64, m)
	for i := range y {
		y[i] = f(x, i)
	}
	if task == tempora.Classification {
		med := slices.Clone(y)
		slices.Sort(med)
		tau := med[m/2]
		for i, v := range y {
			y[i] = 0
			if v > tau {
				y[i] = 1
			}
		}
	} else {
		for i := range y {
			y[i] += 0.1 * rng.NormFloat64()
		}
	}
	return &tempora.Dataset{X: x, Y: y, Task: task}, model
}
