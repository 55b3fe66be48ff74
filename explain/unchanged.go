package explain

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math"
	"unsafe"

	"github.com/tempora-dev/tempora"
)

// A model must not modify the tensor it predicts (tempora.Model). One that
// does (uses its batch as scratch, normalises it in place) would change
// what every later draw sees on the native path, where a worker's copy of
// the data persists between draws and only the perturbed block is
// restored. The Engine detects it and stops with an error naming the
// write, at a cost that does not grow with the draws: the baseline
// prediction, made on the caller's data itself, is fingerprinted before and
// after (two reads of the data, once), and each worker's copy is compared
// with the data at the end of each batch, after its block is restored (one
// read of both per worker per batch). A write inside the block perturbed at
// the time is harmless (every draw writes its whole block from the data)
// and is restored with it; every other write is still there at the end of
// the batch. The chunked path copies each chunk from the data before its
// call, so writes there cannot reach a later call, and the resident path
// hands the model nothing of the worker's. Handing each call a fresh copy
// instead would cost a copy of the data per draw (2.2 ms for 2000 × 12 ×
// 48 values on the 2-core development machine, more than the cheap models
// of BenchmarkDrawCost), against the cells a draw perturbs
// (docs/decisions.md, "Model processes").

// castagnoli is the CRC-32C table (computed by the processor where it can).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fingerprint returns the CRC-32C of x's values, bit for bit (NaN payloads
// included).
func fingerprint(x []float64) uint32 { return crc32.Checksum(float64Bytes(x), castagnoli) }

// float64Bytes returns the memory of v as bytes (8 per value, in the
// machine's byte order), for a comparison or checksum of bit patterns.
func float64Bytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
}

// errWroteData is the error of a model that changed the data at the
// baseline prediction.
func errWroteData() error {
	return fmt.Errorf("explain: model: Predict wrote into its batch, the data itself (baseline): a tempora.Model must not modify x; copy x before changing it")
}

// checkUnchanged returns an error naming the first cell in which x, a
// worker's copy of the whole data restored after a batch, differs from the
// data src: a write of the model into its batch.
func checkUnchanged(x, src *tempora.Tensor) error {
	if bytes.Equal(float64Bytes(x.Data), float64Bytes(src.Data)) {
		return nil
	}
	for n, v := range x.Data {
		w := src.Data[n]
		if math.Float64bits(v) == math.Float64bits(w) {
			continue
		}
		i, j, t := n/(x.D*x.L), n/x.L%x.D, n%x.L
		return fmt.Errorf("explain: model: Predict wrote into its batch (instance %d, feature %d, timestep %d: %v became %v): a tempora.Model must not modify x; copy x before changing it", i, j, t, w, v)
	}
	return nil
}
