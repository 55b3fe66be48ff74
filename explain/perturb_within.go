package explain

import (
	"github.com/tempora-dev/tempora"
)

// WithinWindow reorders the timesteps of the window by one uniform random
// permutation ρ per draw, shared by every instance and every feature of
// the block: x_{j,a+k} ← x_{j,a+ρ(k)}. On data with missing values each
// series' observed values are permuted among its observed positions only
// (tempora.PermuteObserved), so a missing cell stays missing and padding
// stays padding (docs/decisions.md, decision 19).
type WithinWindow struct{}

// String returns "within-window".
func (WithinWindow) String() string { return "within-window" }

func (WithinWindow) prepare(e *Engine, t *Test) (drawer, error) {
	if e.masked {
		return observedWithin{e: e, t: t}, nil
	}
	return denseWithin{src: e.data.X, t: t}, nil
}

// denseWithin draws a within-window test on complete data.
type denseWithin struct {
	asDrawn
	src *tempora.Tensor
	t   *Test
}

func (d denseWithin) size() int { return d.t.Window.Len() }

func (d denseWithin) rows(dst *tempora.Tensor, i0 int, perm []int) {
	src, t := d.src, d.t
	if dst.M == src.M {
		tempora.PermuteTimesteps(dst, src, t.Features, t.Window.Start, t.Window.End, perm)
		return
	}
	for r := range dst.M {
		for _, j := range t.Features {
			out := dst.Data[dst.Index(r, j, t.Window.Start):][:len(perm)]
			s := src.Data[src.Index(i0+r, j, t.Window.Start):]
			for k, o := range perm {
				out[k] = s[o]
			}
		}
	}
}

func (d denseWithin) block(vals []float64, perm []int) {
	tempora.PermuteTimestepsBlock(vals, d.src, d.t.Features, d.t.Window.Start, d.t.Window.End, perm)
}

// observedWithin draws a within-window test on data with missing values:
// a series observed everywhere takes the dense gather, which is what
// tempora.PermuteObserved computes for it.
type observedWithin struct {
	asDrawn
	e *Engine
	t *Test
}

func (d observedWithin) size() int { return d.t.Window.Len() }

func (d observedWithin) rows(dst *tempora.Tensor, i0 int, perm []int) {
	src, t := d.e.data.X, d.t
	for r := range dst.M {
		i := i0 + r
		for _, j := range t.Features {
			out := dst.Data[dst.Index(r, j, t.Window.Start):][:len(perm)]
			s := src.Data[src.Index(i, j, t.Window.Start):][:len(perm)]
			if d.e.complete[i*src.D+j] {
				for k, o := range perm {
					out[k] = s[o]
				}
				continue
			}
			tempora.PermuteObserved(out, s, perm)
		}
	}
}
