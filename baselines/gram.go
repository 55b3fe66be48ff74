package baselines

// The Gram matrix of LIME's weighted surrogate, ZᵀZ over the samples × p
// design Z, is the surrogate fit's dominant cost: samples·p²/2
// multiply-adds per explained instance. gonum's Dsyrk computes it in
// pure Go as one two-wide AXPY per (sample, row), about 8 GFlop/s of CPU
// on the development machine. gramAdd computes the same sums with 4 × 8
// tiles held in AVX registers (gram_amd64.s) across a block of samples,
// and adds each element's products in Dsyrk's order (sample 0, 1, 2, …),
// each product rounded before its sum, never fused: the result is bit for
// bit Dsyrk's (TestGramAddMatchesSyrk), only faster (BenchmarkGram). Where
// the kernel is missing (another architecture, the purego build tag, a
// processor without AVX) every element takes the scalar loop, the same
// operations in the same order.

// gramAdd adds the products of rows lo … hi−1 of the row-major z (stride
// ldz, p columns) to the upper triangle of the p × p row-major g (stride
// ldg): g[i][j] += Σ_l z[l][i]·z[l][j] for j ≥ i, the terms added one at a
// time in l order. The strict lower triangle is left as it was.
func gramAdd(g []float64, ldg int, z []float64, ldz, lo, hi, p int) {
	if hi <= lo {
		return
	}
	tiles := gramTiles
	var acc [32]float64
	for i0 := 0; i0 < p; i0 += 4 {
		j0 := i0
		if tiles != nil && i0+4 <= p {
			for ; j0+8 <= p; j0 += 8 {
				for r := range 4 {
					copy(acc[8*r:8*r+8], g[(i0+r)*ldg+j0:(i0+r)*ldg+j0+8])
				}
				tiles(&acc, &z[lo*ldz+i0], &z[lo*ldz+j0], ldz, hi-lo)
				for r := range 4 {
					i := i0 + r
					// Only the tile's elements on or above the diagonal.
					for q := max(0, i-j0); q < 8; q++ {
						g[i*ldg+j0+q] = acc[8*r+q]
					}
				}
			}
		}
		// The columns the tiles left, or every column without them.
		for r := range min(4, p-i0) {
			i := i0 + r
			gramAddScalar(g, ldg, z, ldz, lo, hi, i, max(i, j0), p)
		}
	}
}

// gramAddScalar adds the products of rows lo … hi−1 to g[i][j] for j in
// [from, to), in l order, each product rounded before its sum (the
// float64 conversion forbids a fused multiply-add).
func gramAddScalar(g []float64, ldg int, z []float64, ldz, lo, hi, i, from, to int) {
	if from >= to {
		return
	}
	row := g[i*ldg+from : i*ldg+to]
	for l := lo; l < hi; l++ {
		zl := z[l*ldz : l*ldz+to]
		a := zl[i]
		for q := range row {
			row[q] += float64(a * zl[from+q])
		}
	}
}
