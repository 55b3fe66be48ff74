package explain

import (
	"github.com/tempora-dev/tempora"
)

// AcrossInstances replaces the block of every instance i by the block of
// instance π(i), for one uniform random permutation π of the M instances
// per draw, shared by every feature and timestep of the block, so the
// joint law within the block is kept and only its link with the rest of
// the instance and with the target is broken. π may have fixed points,
// as in the usual permutation test.
//
// On data with missing values, Lengths says how values move between
// instances whose supports (lengths) differ (missing.go; docs/decisions.md,
// decision 19); nil is Strata. On complete data it has no effect.
type AcrossInstances struct {
	Lengths LengthRule
}

// String returns "across-instances".
func (AcrossInstances) String() string { return "across-instances" }

func (a AcrossInstances) prepare(e *Engine, t *Test) (drawer, error) {
	if !e.masked {
		return denseAcross{src: e.data.X, t: t}, nil
	}
	rule := a.Lengths
	if rule == nil {
		rule = Strata{}
	}
	return rule.drawer(e, t), nil
}

// denseAcross draws an across-instance test by moving whole blocks,
// padding and missing cells included: every draw on complete data, and
// the Donor rule's.
type denseAcross struct {
	asDrawn
	src *tempora.Tensor
	t   *Test
}

func (d denseAcross) size() int { return d.src.M }

func (d denseAcross) rows(dst *tempora.Tensor, i0 int, perm []int) {
	src, t := d.src, d.t
	if dst.M == src.M {
		tempora.PermuteInstances(dst, src, t.Features, t.Window.Start, t.Window.End, perm)
		return
	}
	w := t.Window.Len()
	for r := range dst.M {
		for _, j := range t.Features {
			o := dst.Index(r, j, t.Window.Start)
			copy(dst.Data[o:o+w], src.Data[src.Index(perm[i0+r], j, t.Window.Start):])
		}
	}
}

func (d denseAcross) block(vals []float64, perm []int) {
	tempora.PermuteInstancesBlock(vals, d.src, d.t.Features, d.t.Window.Start, d.t.Window.End, perm)
}
