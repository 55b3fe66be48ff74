package resident

import (
	"context"
	"fmt"

	"github.com/tempora-dev/tempora"
)

// Block is one perturbed evaluation of held data: rows [Lo, Hi) of the
// held tensor with the cells of Features over timesteps [Start, End]
// replaced by Values. Values is instance-major: value (i, f, t) of the
// block, for row Lo+i, the f-th entry of Features and timestep Start+t,
// is at index (i·len(Features) + f)·(End−Start+1) + t.
type Block struct {
	Lo, Hi     int
	Features   []int
	Start, End int
	Values     []float64
}

// BlockError is an error about one block of a call, Block its index among
// the call's blocks (a check of its predictions, which name the held
// data's instances).
type BlockError struct {
	Block int
	Err   error
}

func (e *BlockError) Error() string { return e.Err.Error() }
func (e *BlockError) Unwrap() error { return e.Err }

// CheckBlocks checks the predictions dst of blocks (K per row, in the
// blocks' order) with tempora.CheckOutputsAt, each block's against its
// rows of the held data: an error is a *BlockError naming the block, whose
// message names the data's instance.
func CheckBlocks(task tempora.Task, o *tempora.Outputs, dst []float64, blocks []Block) error {
	k, at := o.Len(), 0
	for n := range blocks {
		r := blocks[n].Rows()
		if err := tempora.CheckOutputsAt(task, o, dst[at*k:(at+r)*k], blocks[n].Lo); err != nil {
			return &BlockError{Block: n, Err: err}
		}
		at += r
	}
	return nil
}

// Rows returns the number of instances the block predicts, Hi − Lo.
func (b *Block) Rows() int { return b.Hi - b.Lo }

// Len returns the number of values the block takes,
// (Hi−Lo)·len(Features)·(End−Start+1), or 0 if its rows or timesteps are
// out of order.
func (b *Block) Len() int {
	if b.Hi <= b.Lo || b.End < b.Start {
		return 0
	}
	return (b.Hi - b.Lo) * len(b.Features) * (b.End - b.Start + 1)
}

// Check reports whether b is a well-formed block of data of shape
// m × d × l: 0 ≤ Lo < Hi ≤ m, at least one feature, each in [0, d) and
// listed once, 0 ≤ Start ≤ End < l, and exactly
// (Hi−Lo)·len(Features)·(End−Start+1) values.
func (b *Block) Check(m, d, l int) error {
	if b.Lo < 0 || b.Hi > m || b.Lo >= b.Hi {
		return fmt.Errorf("resident: block rows [%d, %d) outside the %d instances", b.Lo, b.Hi, m)
	}
	if len(b.Features) == 0 || len(b.Features) > d {
		return fmt.Errorf("resident: block has %d features, data has %d", len(b.Features), d)
	}
	for k, j := range b.Features {
		if j < 0 || j >= d {
			return fmt.Errorf("resident: block feature %d outside 0..%d", j, d-1)
		}
		for _, j2 := range b.Features[:k] {
			if j2 == j {
				return fmt.Errorf("resident: block lists feature %d twice", j)
			}
		}
	}
	if b.Start < 0 || b.End >= l || b.Start > b.End {
		return fmt.Errorf("resident: block window [%d, %d] outside 0..%d", b.Start, b.End, l-1)
	}
	if want := b.Len(); len(b.Values) != want {
		return fmt.Errorf("resident: block holds %d values, rows [%d, %d) × %d features × timesteps [%d, %d] need %d",
			len(b.Values), b.Lo, b.Hi, len(b.Features), b.Start, b.End, want)
	}
	return nil
}

// Apply writes the block's values into x (rows Lo to Hi of the tensor the
// block refers to). It assumes b.Check(x.M, x.D, x.L) holds.
func (b *Block) Apply(x *tempora.Tensor) {
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

// Model is the capability of a model that can hold a data tensor (in its
// own process, for a model served over the model protocol) and predict
// perturbed copies of it from the perturbed blocks alone. It is passed
// beside the tempora.Model that answers plain calls (Explainer), never
// discovered from it; the predictions of both must be the same function.
type Model interface {
	// Hold makes x the held data of the model, ahead of the
	// PredictBlocks calls on x (which hold it themselves otherwise). An
	// error is a failure of the model. x must not be modified while the
	// model holds it.
	Hold(x *tempora.Tensor) error
	// PredictBlocks writes, for each block in order, the predictions of
	// rows [Lo, Hi) of x with the block applied (the other cells being
	// x's), into consecutive ranges of dst, whose length is the sum of
	// the blocks' rows times the model's outputs per instance (K of
	// tempora.Outputs, instance-major; 1 for a model of one output). The
	// blocks are independent: each applies to x itself, not to x with the
	// previous blocks applied, and each is one call of the model on its
	// rows (the accounting counts a block as one model call: the model
	// sides of package procmodel and of the Python package predict block
	// by block). The predictions must equal Predict's on the same
	// perturbed rows. PredictBlocks may be called concurrently and must
	// not retain dst or the blocks.
	PredictBlocks(dst []float64, x *tempora.Tensor, blocks []Block) error
	// PredictBlocksFilled is PredictBlocks for blocks whose Values are
	// ignored: it calls fill once with a slice of the blocks' total
	// number of values, into which fill writes every block's values,
	// block after block, each in Block's layout, then predicts. The
	// slice is the model's own memory (a connection's shared buffer,
	// which saves a copy) or scratch (which must hold at least that many
	// values; it is grown otherwise: FillScratch), and is valid only
	// during fill. An error from fill is returned as it is, and nothing
	// is predicted.
	PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []Block, scratch []float64, fill func(vals []float64) error) error
	// BatchLimit returns the largest number of instances the model takes
	// in one call (the sum of the blocks' rows for PredictBlocks), or 0
	// for no limit.
	BatchLimit() int
}

// Explainer is a tempora.Explainer that can use a model's held data:
// ExplainHeld(ctx, m, nil, data) is Explain(ctx, m, data), and with a
// non-nil held its draws go to held as blocks, with the same result (only
// the model calls differ). m answers every plain call (the baseline
// predictions, and the draws when held cannot take them, for instance when
// the workers' copies of the data do not fit the memory budget).
type Explainer interface {
	tempora.Explainer
	ExplainHeld(ctx context.Context, m tempora.Model, held Model, data *tempora.Dataset) (*tempora.Explanation, error)
}

// Filled returns a copy of blocks whose Values are consecutive ranges of
// scratch (grown when shorter than the blocks' values), and the values
// they take: what PredictBlocksFilled hands fill when it does not use
// memory of its own.
func Filled(blocks []Block, scratch []float64) ([]Block, []float64) {
	n := 0
	for k := range blocks {
		n += blocks[k].Len()
	}
	if len(scratch) < n {
		scratch = make([]float64, n)
	}
	out := make([]Block, len(blocks))
	at := 0
	for k, b := range blocks {
		v := b.Len()
		b.Values = scratch[at : at+v : at+v]
		out[k] = b
		at += v
	}
	return out, scratch[:n]
}

// FillScratch is PredictBlocksFilled for a model without memory of its
// own: fill writes the values into scratch (Filled), then predict (the
// model's PredictBlocks) predicts the blocks with them.
func FillScratch(dst []float64, x *tempora.Tensor, blocks []Block, scratch []float64, fill func(vals []float64) error,
	predict func(dst []float64, x *tempora.Tensor, blocks []Block) error) error {
	filled, vals := Filled(blocks, scratch)
	if err := fill(vals); err != nil {
		return err
	}
	return predict(dst, x, filled)
}
