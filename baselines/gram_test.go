package baselines

import (
	"math"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tempora-dev/tempora"
)

// syrkUpper is the Gram matrix as LIME computed it before gramAdd: gonum's
// SymRankK over blocks of 64 sample rows.
func syrkUpper(z *mat.Dense) *mat.SymDense {
	const block = 64
	n, p := z.Dims()
	g := mat.NewSymDense(p, nil)
	for lo := 0; lo < n; lo += block {
		g.SymRankK(g, 1, z.Slice(lo, min(lo+block, n), 0, p).T())
	}
	return g
}

// gramDesign returns an n × p design with a row stride wider than p, of
// standard normal values with every 11th zero (Dsyrk skips a zero
// multiplier) and a few of large magnitude, so that rounding differs
// between summation orders.
func gramDesign(n, p int) *mat.Dense {
	rng := tempora.NewRand(1, "gram", strconv.Itoa(n), strconv.Itoa(p))
	back := mat.NewDense(n, p+3, nil)
	raw := back.RawMatrix()
	for k := range raw.Data {
		raw.Data[k] = rng.NormFloat64()
		switch {
		case k%11 == 0:
			raw.Data[k] = 0
		case k%13 == 0:
			raw.Data[k] *= 1e6
		}
	}
	return back.Slice(0, n, 0, p).(*mat.Dense)
}

// TestGramAddMatchesSyrk checks that gramAdd's upper triangle is bit for
// bit gonum's Dsyrk's, with the AVX tiles and without them (the scalar
// loop every architecture has), for shapes that leave partial tiles, added
// in blocks of rows as LIME adds them, and that the strict lower triangle
// is left as it was. Tolerance: none.
func TestGramAddMatchesSyrk(t *testing.T) {
	kernels := map[string]func(*[32]float64, *float64, *float64, int, int){"scalar": nil}
	if gramTiles != nil {
		kernels["tiles"] = gramTiles
	} else {
		t.Log("no AVX kernel on this build or processor: the scalar loop only")
	}
	saved := gramTiles
	defer func() { gramTiles = saved }()
	for _, tc := range []struct{ n, p, block int }{
		{1, 1, 64}, {3, 2, 64}, {5, 5, 2}, {300, 7, 64}, {257, 12, 64}, {130, 13, 7}, {513, 33, 64}, {200, 40, 1000}, {1000, 200, 64}, {64, 603, 64},
	} {
		z := gramDesign(tc.n, tc.p)
		want := syrkUpper(z)
		raw := z.RawMatrix()
		for name, k := range kernels {
			t.Run(name+"/"+strconv.Itoa(tc.n)+"x"+strconv.Itoa(tc.p), func(t *testing.T) {
				gramTiles = k
				const sentinel = -7.25
				g := make([]float64, tc.p*tc.p)
				for i := range tc.p {
					for j := range i {
						g[i*tc.p+j] = sentinel
					}
				}
				for lo := 0; lo < tc.n; lo += tc.block {
					gramAdd(g, tc.p, raw.Data, raw.Stride, lo, min(lo+tc.block, tc.n), tc.p)
				}
				for i := range tc.p {
					for j := range tc.p {
						got := g[i*tc.p+j]
						if j < i {
							if got != sentinel {
								t.Fatalf("lower element (%d, %d) is %v, want it untouched", i, j, got)
							}
							continue
						}
						if w := want.At(i, j); math.Float64bits(got) != math.Float64bits(w) {
							t.Fatalf("element (%d, %d) is %v, want Dsyrk's %v bit for bit", i, j, got, w)
						}
					}
				}
			})
		}
	}
}

// threadCPU returns the CPU time of the calling thread.
func threadCPU(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGram compares gramAdd with the blocked Dsyrk it replaced on
// LIME's designs at Table-1 (200 columns) and Table S2 (600 columns)
// shape, 5000 samples, in CPU time of the benchmark's thread (the machine
// may be loaded): cpu-sec/op and GFlop/s (2 flops per multiply-add).
func BenchmarkGram(b *testing.B) {
	for _, p := range []int{200, 600} {
		const n = DefaultLIMESamples
		z := gramDesign(n, p)
		raw := z.RawMatrix()
		flops := float64(n) * float64(p) * float64(p+1)
		for _, impl := range []string{"syrk", "gramAdd"} {
			b.Run("p="+strconv.Itoa(p)+"/impl="+impl, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				g := make([]float64, p*p)
				c0 := threadCPU(b)
				for b.Loop() {
					if impl == "syrk" {
						syrkUpper(z)
						continue
					}
					clear(g)
					for lo := 0; lo < n; lo += limeGramBlock {
						gramAdd(g, p, raw.Data, raw.Stride, lo, min(lo+limeGramBlock, n), p)
					}
				}
				cpu := (threadCPU(b) - c0).Seconds() / float64(b.N)
				b.ReportMetric(cpu, "cpu-sec/op")
				b.ReportMetric(flops/cpu/1e9, "GFlop/s")
			})
		}
	}
}
