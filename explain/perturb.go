package explain

import (
	"github.com/tempora-dev/tempora"
)

// A Perturbation is how a Test perturbs its block (its features over its
// window) in each draw: AcrossInstances (perturb_across.go), WithinWindow
// (perturb_within.go) and Conditional (conditional.go), each one file
// that owns its draws on complete data and on data with missing values.
// A new perturbation is one new type implementing this interface; the
// Engine schedules and counts draws and knows none by name.
type Perturbation interface {
	// String returns the perturbation's name, as in explanations and
	// messages.
	String() string
	// prepare checks test t against the Engine's data and returns how its
	// draws are written, or an error to follow the test's name.
	prepare(e *Engine, t *Test) (drawer, error)
}

// drawer writes the draws of one test. A draw is a uniform random
// permutation of size() elements (or, for an exact test, one of rank
// d + 1), which arrange may turn into the permutation the draw applies;
// rows and block then write the perturbed block.
type drawer interface {
	// size returns the number of elements a draw permutes: the instances
	// for an across-instance test, the window's timesteps for a
	// within-window one. It decides whether the test is exact.
	size() int
	// arrange returns the permutation the draw applies, given the draw's
	// uniform permutation perm (which it may rewrite), with ws's scratch.
	arrange(perm []int, ws *workspace) []int
	// rows writes the draw into rows [i0, i0+dst.M) of the perturbed data
	// (row r of dst is instance i0+r). dst's rows hold the data's values
	// outside the block and, in the block, either the data's values or an
	// earlier draw of the same test.
	rows(dst *tempora.Tensor, i0 int, perm []int)
}

// blockDrawer is a drawer that can write a draw's block of every instance
// straight from the data into vals, in the layout of a held model's block
// (value (i, f, t) at (i·len(Features) + f)·(End−Start+1) + t). The draws
// of other drawers are drawn on a working copy and gathered from it.
type blockDrawer interface {
	drawer
	block(vals []float64, perm []int)
}

// asDrawn is the arrange of a drawer whose draw applies the uniform
// permutation itself.
type asDrawn struct{}

func (asDrawn) arrange(perm []int, _ *workspace) []int { return perm }
