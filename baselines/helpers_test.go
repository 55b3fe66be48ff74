package baselines

import (
	"math"
	"testing"

	"github.com/tempora-dev/tempora"
)

// linear is the model f(x) = Σ_c a_c·x_c over the unrolled columns of an
// instance (column j·L+t).
type linear struct{ a []float64 }

func (l linear) Predict(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		var s float64
		for c, v := range x.Instance(i) {
			s += l.a[c] * v
		}
		dst[i] = s
	}
	return nil
}

// gaussian returns an M×D×L tensor whose unrolled column c is independent
// N(mu[c], sd[c]²) (mu nil means 0).
func gaussian(m, d, l int, mu, sd []float64, seed uint64) *tempora.Tensor {
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(seed, "test-data")
	for i := range m {
		for c := range x.Instance(i) {
			v := sd[c] * rng.NormFloat64()
			if mu != nil {
				v += mu[c]
			}
			x.Instance(i)[c] = v
		}
	}
	return x
}

// linearProblem returns the data of gaussian(...) with noise-free targets
// y = f(x) for f = linear{a}.
func linearProblem(t *testing.T, m, d, l int, a, mu, sd []float64, seed uint64) (*tempora.Dataset, linear) {
	t.Helper()
	f := linear{a}
	x := gaussian(m, d, l, mu, sd, seed)
	y := make([]float64, m)
	if err := f.Predict(y, x); err != nil {
		t.Fatal(err)
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}, f
}

// columnMoments returns the population mean and variance of unrolled column
// c over instances [0, n).
func columnMoments(x *tempora.Tensor, c, n int) (mean, variance float64) {
	for i := range n {
		mean += x.Instance(i)[c]
	}
	mean /= float64(n)
	for i := range n {
		d := x.Instance(i)[c] - mean
		variance += d * d
	}
	return mean, variance / float64(n)
}

// sameFloats reports whether a and b are bitwise equal.
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
			return false
		}
	}
	return true
}
