package explain_test

import (
	"math"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// gaussianData returns an M × D × L tensor of i.i.d. standard normal values
// from the stream (seed, "data").
func gaussianData(m, d, l int, seed uint64) *tempora.Tensor {
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(seed, "data")
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	return x
}

// weightedWindow returns the model Σ_k c[k]·x[j, start+k]: it reads only
// feature j over [start, start+len(c)-1] and, with unequal weights, is
// sensitive to the order of the values in that window.
func weightedWindow(j, start int, c []float64) tempora.ModelFunc {
	return func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			s := x.Window(i, j, start, start+len(c)-1)
			var v float64
			for k, w := range c {
				v += w * s[k]
			}
			dst[i] = v
		}
		return nil
	}
}

// maxWindow returns the model max_t x[j, t] over [start, end]: it reads
// only feature j in that window and is blind to the order of the values.
func maxWindow(j, start, end int) tempora.ModelFunc {
	return func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			v := math.Inf(-1)
			for _, s := range x.Window(i, j, start, end) {
				v = max(v, s)
			}
			dst[i] = v
		}
		return nil
	}
}

// sigmoid wraps a model's output as a probability sigmoid(scale·f).
func sigmoid(f tempora.ModelFunc, scale float64) tempora.ModelFunc {
	return func(dst []float64, x *tempora.Tensor) error {
		if err := f(dst, x); err != nil {
			return err
		}
		for i, v := range dst {
			dst[i] = 1 / (1 + math.Exp(-scale*v))
		}
		return nil
	}
}

// regressionData returns a dataset whose targets are the model's output
// plus N(0, noise²) noise from the stream (seed, "noise").
func regressionData(t *testing.T, x *tempora.Tensor, f tempora.Model, noise float64, seed uint64) *tempora.Dataset {
	t.Helper()
	y := make([]float64, x.M)
	if err := f.Predict(y, x); err != nil {
		t.Fatal(err)
	}
	rng := tempora.NewRand(seed, "noise")
	for i := range y {
		y[i] += noise * rng.NormFloat64()
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}
}

// classificationData returns a dataset whose labels are Bernoulli draws of
// the model's probabilities from the stream (seed, "labels").
func classificationData(t *testing.T, x *tempora.Tensor, f tempora.Model, seed uint64) *tempora.Dataset {
	t.Helper()
	y := make([]float64, x.M)
	if err := f.Predict(y, x); err != nil {
		t.Fatal(err)
	}
	rng := tempora.NewRand(seed, "labels")
	for i, p := range y {
		y[i] = 0
		if rng.Float64() < p {
			y[i] = 1
		}
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Classification}
}

// testsOf returns FixedTests when fixed, else the default tests.
func testsOf(fixed bool) explain.Tests {
	if fixed {
		return explain.FixedTests
	}
	return explain.AnytimeTests
}
