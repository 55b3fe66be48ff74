package baselines

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// TestLIMEMatchesFormer checks that LIME's surrogate weights are bit for
// bit those of its former implementation (explainFormer below, kept as it
// was: the Gram matrix by gonum's SymRankK), on fixed seeds: one output on
// a small design and on Table-1-wide ones (200 columns, sample counts
// that leave partial tiles and blocks), and every output of a model with
// several. Tolerance: none (equal bits), with the AVX tiles and with the
// scalar loop.
func TestLIMEMatchesFormer(t *testing.T) {
	wide := func() (*tempora.Dataset, tempora.Model) {
		const d, l = 10, 20
		a := make([]float64, d*l)
		sd := make([]float64, d*l)
		for c := range a {
			sd[c] = 1 + float64(c%7)/10
			if c%3 == 0 {
				a[c] = 1 - float64(c%5)/4
			}
		}
		return linearProblem(t, 30, d, l, a, nil, sd, 2)
	}
	small := func() (*tempora.Dataset, tempora.Model) {
		a := []float64{2, -1, 0.5, 0, 1.5, -3}
		return linearProblem(t, 50, 2, 3, a, []float64{1, -2, 0, 5, 0.5, 0}, []float64{1, 2, 0.5, 1, 3, 0.25}, 1)
	}
	horizons := func() (*tempora.Dataset, tempora.Model) { return horizonsProblem(40, 3) }
	saved := gramTiles
	defer func() { gramTiles = saved }()
	for _, tc := range []struct {
		name    string
		problem func() (*tempora.Dataset, tempora.Model)
		cfg     LIME
	}{
		{"small", small, LIME{Samples: 300, Seed: 7}},
		{"wide", wide, LIME{Samples: 333, Seed: 11, Instances: 6}},
		{"wide-default-samples", wide, LIME{Seed: 5, Instances: 2}},
		{"horizons", horizons, LIME{Samples: 200, Seed: 3, Instances: 5}},
		{"horizons-one-output", horizons, LIME{Samples: 129, Seed: 3, Instances: 5, Output: explain.OutputOf(1)}},
	} {
		for _, kernel := range []string{"tiles", "scalar"} {
			t.Run(tc.name+"/"+kernel, func(t *testing.T) {
				gramTiles = saved
				if kernel == "scalar" {
					gramTiles = nil
				}
				data, m := tc.problem()
				s, err := tc.cfg.setup(data)
				if err != nil {
					t.Fatal(err)
				}
				size := len(s.sel.cols) * s.p
				now, former := newLimeWork(s, data.X.D, data.X.L), newLimeWork(s, data.X.D, data.X.L)
				got, want := make([]float64, size), make([]float64, size)
				for i := range s.n {
					rng := tempora.NewRand(tc.cfg.Seed, "lime", strconv.Itoa(i))
					if err := now.explain(got, s, m, data.X.Instance(i), rng.NormFloat64); err != nil {
						t.Fatal(err)
					}
					rng = tempora.NewRand(tc.cfg.Seed, "lime", strconv.Itoa(i))
					if err := former.explainFormer(want, s, m, data.X.Instance(i), rng.NormFloat64); err != nil {
						t.Fatal(err)
					}
					for c := range want {
						if math.Float64bits(got[c]) != math.Float64bits(want[c]) {
							t.Fatalf("instance %d weight %d: %v, want the former implementation's %v bit for bit", i, c, got[c], want[c])
						}
					}
				}
			})
		}
	}
}

// explainFormer is limeWork.explain before gramAdd (the reference of
// TestLIMEMatchesFormer), with its Gram matrix by gonum's SymRankK over
// blocks of 64 rows.
func (b *limeWork) explainFormer(dst []float64, s *limeSetup, m tempora.Model, x []float64, norm func() float64) error {
	p, n := s.p, s.samples
	raw := b.z.RawMatrix()
	// Row 0 is the instance; the others are drawn around the training mean.
	copy(b.rows.Instance(0), x)
	z0 := raw.Data[:p]
	for c, v := range x {
		z0[c] = (v - s.mu[c]) / s.sigma[c]
	}
	for r := 1; r < n; r++ {
		zr := raw.Data[r*raw.Stride : r*raw.Stride+p]
		xr := b.rows.Instance(r)
		for c := range zr {
			v := norm()
			zr[c] = v
			xr[c] = s.mu[c] + s.sigma[c]*v
		}
	}
	if err := m.Predict(b.pred, b.rows); err != nil {
		return err
	}
	// Kernel weights on standardised euclidean distances to row 0:
	// sqrt(exp(−d²/width²)) = exp(−d²/(2·width²)).
	inv := 1 / (2 * s.width * s.width)
	var wsum float64
	for r := range n {
		zr := raw.Data[r*raw.Stride : r*raw.Stride+p]
		var d2 float64
		for c, v := range zr {
			d := v - z0[c]
			d2 += d * d
		}
		b.wt[r] = math.Exp(-d2 * inv)
		wsum += b.wt[r]
	}
	// Weighted means of the design and of each explained output's
	// response (prediction column cols[o] of the K per row).
	clear(b.mean)
	clear(b.ybar)
	k, cols := s.sel.k, s.sel.cols
	for r := range n {
		w := b.wt[r] / wsum
		zr := raw.Data[r*raw.Stride : r*raw.Stride+p]
		for c, v := range zr {
			b.mean[c] += w * v
		}
		for o, col := range cols {
			b.ybar[o] += w * b.pred[r*k+col]
		}
	}
	// Centre and scale rows by √w (scikit-learn's weighted Ridge), then
	// solve (ZᵀZ + αI)β = Zᵀ(√w·(y − ȳ)) for each explained output. The
	// weights of row 0 are kept after z0 is overwritten, since they were
	// computed above.
	for _, rhs := range b.rhs {
		clear(rhs.RawVector().Data)
	}
	for r := range n {
		sw := math.Sqrt(b.wt[r])
		zr := raw.Data[r*raw.Stride : r*raw.Stride+p]
		for c, v := range zr {
			zr[c] = sw * (v - b.mean[c])
		}
		for o, col := range cols {
			rhs := b.rhs[o].RawVector().Data
			yr := sw * (b.pred[r*k+col] - b.ybar[o])
			for c, v := range zr {
				rhs[c] += v * yr
			}
		}
	}
	g := b.gram.RawSymmetric()
	clear(g.Data)
	for lo := 0; lo < n; lo += 64 {
		hi := min(lo+64, n)
		b.gram.SymRankK(b.gram, 1, b.z.Slice(lo, hi, 0, p).T())
	}
	for c := range p {
		g.Data[c*g.Stride+c] += s.ridge
	}
	if ok := b.chol.Factorize(b.gram); !ok {
		return fmt.Errorf("baselines: LIME surrogate system is not positive definite")
	}
	for o, rhs := range b.rhs {
		if err := b.chol.SolveVecTo(b.beta, rhs); err != nil {
			return fmt.Errorf("baselines: LIME surrogate solve: %w", err)
		}
		copy(dst[o*p:(o+1)*p], b.beta.RawVector().Data)
	}
	return nil
}

// BenchmarkLIMEFit measures one explained instance of LIME (5000 samples:
// drawing them, the model call, the weights and the surrogate fit) at
// Table-1 (10 features × 20 timesteps) and Table S2 (30 × 20) width, with
// the Gram matrix by gramAdd (impl=now) and by gonum's SymRankK
// (impl=former), in CPU time of the benchmark's thread (cpu-sec/op), which
// a loaded machine affects far less than wall time.
func BenchmarkLIMEFit(b *testing.B) {
	for _, d := range []int{10, 30} {
		const l = 20
		a := make([]float64, d*l)
		sd := make([]float64, d*l)
		for c := range a {
			sd[c], a[c] = 1, float64(c%3)
		}
		data, f := linearProblem(b, 50, d, l, a, nil, sd, 1)
		s, err := LIME{Seed: 1}.setup(data)
		if err != nil {
			b.Fatal(err)
		}
		for _, impl := range []string{"former", "now"} {
			b.Run(fmt.Sprintf("features=%d/impl=%s", d, impl), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				w := newLimeWork(s, d, l)
				dst := make([]float64, s.p)
				i := 0
				c0 := threadCPU(b)
				for b.Loop() {
					rng := tempora.NewRand(1, "lime", strconv.Itoa(i))
					x := data.X.Instance(i % data.X.M)
					var err error
					if impl == "former" {
						err = w.explainFormer(dst, s, f, x, rng.NormFloat64)
					} else {
						err = w.explain(dst, s, f, x, rng.NormFloat64)
					}
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric((threadCPU(b)-c0).Seconds()/float64(b.N), "cpu-sec/op")
			})
		}
	}
}
