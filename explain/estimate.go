package explain

import (
	"math"
	"math/bits"

	"github.com/tempora-dev/tempora"
)

// EstimateEvals returns an upper bound on the instance evaluations of
// Explain on data (it satisfies method.Estimator), and false: the bound
// runs every test to its cap, while sequential tests stop as soon as
// their outcome is clear (unimportant features after a few draws). Each
// draw predicts the M instances. The bound counts the baseline pass, the
// overall test of every node of the hierarchy (every feature and group),
// and for every node the window search (at most ⌈log₂ L⌉ + 1 probes for
// each end, each capped at the probe cap), the whole-sequence ordering and
// window tests and the window-ordering test of a window as long as the
// sequence. It returns 0 for a configuration Explain rejects.
func (c TIME) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	cfg, err := c.config()
	if err != nil || data == nil || data.X == nil || data.X.L < 1 {
		return 0, false
	}
	ex := tempora.NewExplanation("TIME", data)
	top, err := cfg.buildNodes(ex, data)
	if err != nil {
		return 0, false
	}
	l := data.X.L
	probes := 2 * (bits.Len(uint(l)) + 1)
	perNode := float64(probes*cfg.probeCap() + cfg.orderingDraws(2, l) + cfg.maxDraws(2) + cfg.orderingDraws(1, l))
	draws := 0.0
	var walk func(fam []*node)
	walk = func(fam []*node) {
		p := float64(cfg.maxDraws(len(fam)))
		for _, n := range fam {
			draws += p + perNode
			if len(n.children) > 0 {
				walk(n.children)
			}
		}
	}
	walk(top)
	total := float64(data.X.M) * (1 + draws)
	if total >= math.MaxInt64 {
		return math.MaxInt64, false
	}
	return int64(total), false
}
