//go:build amd64 && !purego

package baselines

// gramTileAVX adds kb samples' products to a 4 × 8 tile (gram_amd64.s).
//
//go:noescape
func gramTileAVX(acc *[32]float64, a, b *float64, ld, kb int)

// hasAVX reports AVX with the operating system's support (gram_amd64.s).
func hasAVX() bool

// gramTiles is gramTileAVX where the processor has AVX, else nil.
var gramTiles = func() func(acc *[32]float64, a, b *float64, ld, kb int) {
	if hasAVX() {
		return gramTileAVX
	}
	return nil
}()
