package baselines

import (
	"context"
	"math"
	"slices"
	"strings"
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
func linearProblem(t testing.TB, m, d, l int, a, mu, sd []float64, seed uint64) (*tempora.Dataset, linear) {
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

// badConfig is a configuration of an explainer and a text its error must
// contain.
type badConfig[C tempora.Explainer] struct {
	cfg  C
	want string
}

// checkBadConfigs checks that each configuration fails on a small valid
// problem (20 × 2 × 4) with a "baselines: " error mentioning its text, and
// that the zero configuration refuses a nil model.
func checkBadConfigs[C tempora.Explainer](t *testing.T, cases []badConfig[C]) {
	t.Helper()
	good, f := linearProblem(t, 20, 2, 4, make([]float64, 8), nil, slices.Repeat([]float64{1}, 8), 1)
	for _, tc := range cases {
		_, err := tc.cfg.Explain(context.Background(), f, good)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "baselines: ") {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.cfg, err, tc.want)
		}
	}
	var zero C
	if _, err := zero.Explain(context.Background(), nil, good); err == nil || !strings.Contains(err.Error(), "nil model") {
		t.Errorf("nil model: %v", err)
	}
}
