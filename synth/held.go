package synth

import (
	"fmt"
	"math"
	"sync"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// Held returns the model's held-data capability, a resident.Model: it
// keeps every term α_j g_j of every instance of the held data, so that a
// block (a perturbation of some features over some timesteps) is
// predicted by recomputing only the terms whose windows the block
// overlaps and adding the terms up in feature order, as Predict adds them.
// Its predictions therefore equal Predict's bit for bit, at the cost of
// the cells a block changes instead of every window of every instance.
// It is passed explicitly beside the model to an explainer that takes
// held data (explain.TIME, PERM), never found by asking the model; the
// benchmark passes it only where no runtime is compared across methods
// (docs/decisions.md, decision 28).
func (m *Model) Held() resident.Model { return &heldModel{m: m} }

// heldModel is Held's capability: the held tensor and its terms.
type heldModel struct {
	m  *Model
	mu sync.Mutex
	x  *tempora.Tensor
	// terms[i·D+j] is feature j's term of instance i of x, NaN when a
	// model over observed values adds nothing for it (no observed value
	// in its window).
	terms []float64
}

var _ resident.Model = (*heldModel)(nil)

// Hold computes the terms of every instance of x.
func (h *heldModel) Hold(x *tempora.Tensor) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hold(x)
}

func (h *heldModel) hold(x *tempora.Tensor) error {
	m := h.m
	if err := m.check(x.M, x); err != nil {
		return err
	}
	terms := make([]float64, x.M*m.d)
	n := m.d * m.l
	for i := range x.M {
		row := x.Data[i*n : (i+1)*n]
		for j := range m.feats {
			terms[i*m.d+j] = m.feats[j].value(row[m.feats[j].lo:m.feats[j].hi], m.observed)
		}
	}
	h.x, h.terms = x, terms
	return nil
}

// held returns the terms of x, holding it first if it is not the held
// tensor.
func (h *heldModel) held(x *tempora.Tensor) ([]float64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.x != x {
		if err := h.hold(x); err != nil {
			return nil, err
		}
	}
	return h.terms, nil
}

// PredictBlocks predicts each block's rows of x with the block applied.
func (h *heldModel) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	terms, err := h.held(x)
	if err != nil {
		return err
	}
	rows := 0
	for k := range blocks {
		if err := blocks[k].Check(x.M, x.D, x.L); err != nil {
			return fmt.Errorf("synth: block %d: %w", k, err)
		}
		rows += blocks[k].Rows()
	}
	if len(dst) != rows {
		return fmt.Errorf("synth: %d predictions requested for blocks of %d instances", len(dst), rows)
	}
	m := h.m
	own := make([]float64, m.d)
	win := make([]float64, m.l) // one term's window, as the block leaves it
	at := 0
	for k := range blocks {
		b := &blocks[k]
		w := b.End - b.Start + 1
		for i := b.Lo; i < b.Hi; i++ {
			copy(own, terms[i*m.d:(i+1)*m.d])
			for f, j := range b.Features {
				t := &m.feats[j]
				s, e := max(t.Window.Start, b.Start), min(t.Window.End, b.End)
				if s > e {
					continue // the block leaves this term's window alone
				}
				tw := win[:t.hi-t.lo]
				copy(tw, x.Data[i*m.d*m.l+t.lo:i*m.d*m.l+t.hi])
				v := ((i-b.Lo)*len(b.Features)+f)*w - b.Start
				copy(tw[s-t.Window.Start:e-t.Window.Start+1], b.Values[v+s:v+e+1])
				own[j] = t.value(tw, m.observed)
			}
			dst[at] = m.output(own)
			at++
		}
	}
	return nil
}

// PredictBlocksFilled is PredictBlocks with the values written by fill
// into scratch (the model has no memory of its own).
func (h *heldModel) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	return resident.FillScratch(dst, x, blocks, scratch, fill, h.PredictBlocks)
}

// BatchLimit returns 0: the model takes any number of instances.
func (h *heldModel) BatchLimit() int { return 0 }

// value returns the term of the window values w: what blockParts adds for
// the feature (blockPartsObserved under observed), with the same
// operations in the same order, or NaN when a model over observed values
// adds nothing (w has no observed value).
func (f *term) value(w []float64, observed bool) float64 {
	if observed {
		v, ok := f.aggregateObserved(w)
		if !ok {
			return math.NaN()
		}
		return f.term(v)
	}
	return f.term(f.aggregate(w))
}

// output returns the prediction of an instance whose terms are terms (NaN
// under a model over observed values: none): the relevant and the irrelevant sums in feature order, as
// blockParts adds them, combined as Polynomial and Predict combine them.
func (m *Model) output(terms []float64) float64 {
	var rel, irr float64
	for j, t := range terms {
		if t != t && m.observed {
			continue
		}
		if m.feats[j].Relevant {
			rel += t
		} else {
			irr += t
		}
	}
	f := rel + m.beta*irr
	if m.task == tempora.Classification {
		return sigmoid(f - m.tau)
	}
	return f
}
