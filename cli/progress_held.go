package cli

import (
	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// held returns h, a model's held data capability of k outputs per
// instance, counting the rows of its block calls (their predictions over
// k) into p as model (progress.go) counts the model's instances; nil for
// a nil h.
func (p *progressReporter) held(h resident.Model, k int) resident.Model {
	if h == nil {
		return nil
	}
	return &countedHeld{p: p, Model: h, k: int64(k)}
}

// countedHeld is a held data capability counted by a progressReporter.
type countedHeld struct {
	resident.Model
	p *progressReporter
	k int64 // predictions per row
}

func (c *countedHeld) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	err := c.Model.PredictBlocks(dst, x, blocks)
	c.p.evals.Add(int64(len(dst)) / c.k)
	return err
}

func (c *countedHeld) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	err := c.Model.PredictBlocksFilled(dst, x, blocks, scratch, fill)
	c.p.evals.Add(int64(len(dst)) / c.k)
	return err
}
