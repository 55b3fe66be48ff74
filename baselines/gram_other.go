//go:build !amd64 || purego

package baselines

// gramTiles is nil without the amd64 kernel: gramAdd adds every element
// with gramAddScalar's loop.
var gramTiles func(acc *[32]float64, a, b *float64, ld, kb int)
