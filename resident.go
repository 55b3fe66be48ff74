package tempora

import (
	"errors"
	"fmt"
)

// ErrNotResident is wrapped by BlockModel.Hold when the model cannot hold
// data resident after all (for instance a model process that speaks
// version 1 of the model protocol, docs/protocol.md). A caller that gets it
// uses Predict instead; any other error from Hold is a failure of the model.
var ErrNotResident = errors.New("tempora: model cannot hold data resident")

// Block is one perturbed evaluation of resident data: rows [Lo, Hi) of the
// resident tensor with the cells of Features over timesteps [Start, End]
// replaced by Values. Values is instance-major: value (i, f, t) of the
// block, for row Lo+i, the f-th entry of Features and timestep Start+t,
// is at index (i·len(Features) + f)·(End−Start+1) + t.
type Block struct {
	Lo, Hi     int
	Features   []int
	Start, End int
	Values     []float64
}

// Rows returns the number of instances the block predicts, Hi − Lo.
func (b *Block) Rows() int { return b.Hi - b.Lo }

// Check reports whether b is a well-formed block of data of shape
// m × d × l: 0 ≤ Lo < Hi ≤ m, at least one feature, each in [0, d) and
// listed once, 0 ≤ Start ≤ End < l, and exactly
// (Hi−Lo)·len(Features)·(End−Start+1) values.
func (b *Block) Check(m, d, l int) error {
	if b.Lo < 0 || b.Hi > m || b.Lo >= b.Hi {
		return fmt.Errorf("tempora: block rows [%d, %d) outside the %d instances", b.Lo, b.Hi, m)
	}
	if len(b.Features) == 0 || len(b.Features) > d {
		return fmt.Errorf("tempora: block has %d features, data has %d", len(b.Features), d)
	}
	for k, j := range b.Features {
		if j < 0 || j >= d {
			return fmt.Errorf("tempora: block feature %d outside 0..%d", j, d-1)
		}
		for _, j2 := range b.Features[:k] {
			if j2 == j {
				return fmt.Errorf("tempora: block lists feature %d twice", j)
			}
		}
	}
	if b.Start < 0 || b.End >= l || b.Start > b.End {
		return fmt.Errorf("tempora: block window [%d, %d] outside 0..%d", b.Start, b.End, l-1)
	}
	if want := (b.Hi - b.Lo) * len(b.Features) * (b.End - b.Start + 1); len(b.Values) != want {
		return fmt.Errorf("tempora: block holds %d values, rows [%d, %d) × %d features × timesteps [%d, %d] need %d",
			len(b.Values), b.Lo, b.Hi, len(b.Features), b.Start, b.End, want)
	}
	return nil
}

// Apply writes the block's values into x (rows Lo to Hi of the tensor the
// block refers to). It assumes b.Check(x.M, x.D, x.L) holds.
func (b *Block) Apply(x *Tensor) {
	w := b.End - b.Start + 1
	k := 0
	for i := b.Lo; i < b.Hi; i++ {
		for _, j := range b.Features {
			o := (i*x.D+j)*x.L + b.Start
			copy(x.Data[o:o+w], b.Values[k:k+w])
			k += w
		}
	}
}

// BlockModel is a Model that can keep a data tensor resident (in its own
// process, for a model served over the model protocol) and predict
// perturbed copies of it from the perturbed blocks alone, so that a caller
// does not send the cells a perturbation leaves unchanged. Explainers use
// it when a model implements it (explain.Engine); tempora.ModelFunc does
// not, and a model that implements only Predict is served as always.
type BlockModel interface {
	Model
	// Hold makes x the resident data of the model, ahead of the
	// PredictBlocks calls on x (which hold it themselves otherwise). It
	// returns an error wrapping ErrNotResident when the model cannot hold
	// data after all. x must not be modified while the model holds it.
	Hold(x *Tensor) error
	// PredictBlocks writes, for each block in order, the predictions of
	// rows [Lo, Hi) of x with the block applied (the other cells being
	// x's), into consecutive ranges of dst, whose length is the sum of
	// the blocks' rows. The blocks are independent: each applies to x
	// itself, not to x with the previous blocks applied. The predictions
	// must equal Predict's on the same perturbed rows. Like Predict,
	// PredictBlocks may be called concurrently and must not retain dst or
	// the blocks.
	PredictBlocks(dst []float64, x *Tensor, blocks []Block) error
	// BatchLimit returns the largest number of instances the model takes
	// in one call (the sum of the blocks' rows for PredictBlocks), or 0
	// for no limit.
	BatchLimit() int
}

// WithBlocks returns wrapper, a Model that passes its calls to inner
// (counting them, reporting progress, checking predictions), extended with
// inner's resident path when inner is a BlockModel, so that wrapping a model
// does not hide it: Hold and BatchLimit pass to inner, and PredictBlocks
// calls inner's PredictBlocks, then after with the predictions and its
// error, and returns after's result (after may be nil: the error is
// returned as is); likewise PredictBlocksFilled when inner is a
// BlockFiller. When inner is not a BlockModel, WithBlocks returns wrapper.
func WithBlocks(wrapper, inner Model, after func(dst []float64, err error) error) Model {
	bm, ok := inner.(BlockModel)
	if !ok {
		return wrapper
	}
	w := &blockWrapper{Model: wrapper, inner: bm, after: after}
	if f, ok := inner.(BlockFiller); ok {
		return &fillWrapper{blockWrapper: w, filler: f}
	}
	return w
}

type blockWrapper struct {
	Model
	inner BlockModel
	after func(dst []float64, err error) error
}

func (w *blockWrapper) Hold(x *Tensor) error { return w.inner.Hold(x) }
func (w *blockWrapper) BatchLimit() int      { return w.inner.BatchLimit() }
func (w *blockWrapper) PredictBlocks(dst []float64, x *Tensor, blocks []Block) error {
	err := w.inner.PredictBlocks(dst, x, blocks)
	if w.after == nil {
		return err
	}
	return w.after(dst, err)
}

// BlockFiller is a BlockModel into whose own memory (the shared buffer of
// a model process) a caller can write the blocks' values directly, saving
// the copy PredictBlocks makes of them.
type BlockFiller interface {
	BlockModel
	// PredictBlocksFilled is PredictBlocks for blocks whose Values are
	// ignored: it calls fill once with a slice of the blocks' total
	// number of values, into which fill writes every block's values, block
	// after block, each in Block's layout, then predicts. The slice is
	// either the model's own memory or scratch (which must hold at least
	// that many values; it is grown otherwise), and is valid only during
	// fill. An error from fill is returned as it is, and nothing is
	// predicted.
	PredictBlocksFilled(dst []float64, x *Tensor, blocks []Block, scratch []float64, fill func(vals []float64) error) error
}

// FilledBlocks returns a copy of blocks whose Values are consecutive
// ranges of scratch (grown when shorter than the blocks' values), and the
// values they take: what a BlockFiller that does not use its own memory
// fills and passes to PredictBlocks.
func FilledBlocks(blocks []Block, scratch []float64) ([]Block, []float64) {
	n := 0
	for k := range blocks {
		n += blockLen(&blocks[k])
	}
	if len(scratch) < n {
		scratch = make([]float64, n)
	}
	out := make([]Block, len(blocks))
	at := 0
	for k, b := range blocks {
		v := blockLen(&b)
		b.Values = scratch[at : at+v : at+v]
		out[k] = b
		at += v
	}
	return out, scratch[:n]
}

// blockLen returns the number of values block b takes (0 if its rows or
// timesteps are out of order).
func blockLen(b *Block) int {
	if b.Hi <= b.Lo || b.End < b.Start {
		return 0
	}
	return (b.Hi - b.Lo) * len(b.Features) * (b.End - b.Start + 1)
}

type fillWrapper struct {
	*blockWrapper
	filler BlockFiller
}

func (w *fillWrapper) PredictBlocksFilled(dst []float64, x *Tensor, blocks []Block, scratch []float64, fill func([]float64) error) error {
	err := w.filler.PredictBlocksFilled(dst, x, blocks, scratch, fill)
	if w.after == nil {
		return err
	}
	return w.after(dst, err)
}
