package explain

import (
	"fmt"
	"math"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/pool"
)

// Cost is the worst case of a TIME run, before the model is called: the
// draws, model calls and instance evaluations it makes if every test runs
// to its cap and every feature and group is important (so every window
// search, ordering and window test runs, each window the whole sequence).
// The counts are float64 because an absurd configuration (α = 1e−300)
// exceeds any integer.
type Cost struct {
	// Draws is the worst-case number of draws.
	Draws float64
	// ModelCalls is the worst-case number of model calls, the baseline's
	// included.
	ModelCalls float64
	// InstanceEvals is the worst-case number of instance evaluations.
	InstanceEvals float64
	// MaxCap is the largest cap of any test.
	MaxCap float64
}

// maxCountable bounds any cap: a cap above 2⁵³ draws could not even be
// counted exactly, whatever MaxDraws says.
const maxCountable = 1 << 53

// Estimate returns the worst case of c on data (see Cost). It returns an
// error for an invalid configuration, invalid data or hierarchy.
func (c TIME) Estimate(data *tempora.Dataset) (Cost, error) {
	cfg, err := c.config()
	if err != nil {
		return Cost{}, err
	}
	if data == nil {
		return Cost{}, fmt.Errorf("explain: nil dataset")
	}
	if _, err := data.Observe(2); err != nil {
		return Cost{}, fmt.Errorf("explain: %w", err)
	}
	top, err := cfg.buildNodes(tempora.NewExplanation("TIME", data), data)
	if err != nil {
		return Cost{}, err
	}
	return cfg.cost(top, data), nil
}

// EstimateEvals returns the worst-case number of instance evaluations of c
// on data (Cost.InstanceEvals, saturated at math.MaxInt64), or 0 when it
// cannot be estimated (invalid configuration or data), and false: the
// estimate is an upper bound, not exact (it implements method.Estimator,
// which the command line's progress reports use).
func (c TIME) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	cost, err := c.Estimate(data)
	switch {
	case err != nil:
		return 0, false
	case !(cost.InstanceEvals < math.MaxInt64):
		return math.MaxInt64, false
	}
	return int64(cost.InstanceEvals), false
}

// capOf returns the cap of a test in a family of m tests, as maxDraws, in
// float64 (no overflow).
func (c TIME) capOf(m int) float64 {
	p := float64(c.Permutations)
	if c.Permutations == 0 {
		p = minPermutations(float64(m), c.Alpha)
	}
	return c.mode().capOf(p)
}

// orderingCapOf returns the most draws of a within-window test of w
// timesteps with cap p in a family of m tests (orderingDraws, or w! − 1
// when the test is exact), in float64.
func (c TIME) orderingCapOf(p float64, m, w int) float64 {
	f := 1.0
	for k := 2; k <= w && f-1 <= math.Max(p, maxCountable); k++ {
		f *= float64(k)
	}
	exact := f - 1
	switch {
	case exact <= p:
		return exact
	case c.Permutations > 0:
		return p
	}
	w0 := 1
	for f := 1.0; f < float64(m)/c.Alpha*(1-1e-12) && w0 < 20; f *= float64(w0) {
		w0++
	}
	if w <= w0 {
		return math.Max(p, exact)
	}
	return p
}

// powerCapOf returns the cap of a test in a family of m tests whose cap is
// chosen for power with hits exceedances, as pairDraws and
// windowOrderingDraws, in float64
// (these tests stop by Besag and Clifford's rule, so no anytime cap
// applies).
func (c TIME) powerCapOf(hits, m int) float64 {
	if c.Permutations > 0 {
		return float64(c.Permutations)
	}
	return minPermutations(float64(hits*m), c.Alpha)
}

// cost returns the worst case of c (defaults filled in) for the top family.
func (c TIME) cost(top []*node, data *tempora.Dataset) Cost {
	x := data.X
	l := x.L
	probeCap := float64(DefaultPermutations)
	if c.Permutations > 0 {
		probeCap = float64(c.Permutations)
	}
	// The bisection of a prefix and of a suffix, each over at most L
	// timesteps.
	probes := 2 * (math.Ceil(math.Log2(float64(l))) + 1)
	// With several windows, splitWindows probes every timestep of the
	// window alone but an end at the sequence's end (at most L − 2), then
	// each run of surely unimportant interior timesteps (at most one run
	// per two interior timesteps) and the two trims as a whole, then each of
	// at most k pieces.
	k := max(1, c.Windows)
	if k > 1 && l > 2 {
		probes += float64(l-2) + math.Ceil(float64(l-2)/2) + 2 + float64(k)
	}
	// The family {whole-sequence ordering, window 1, …, window k}, then the
	// orderings of the k windows (a family of k), both capped for power.
	pairHits, orderingHits := c.mode().powerHits()
	famCap := c.mode().capOf(c.powerCapOf(pairHits, k+1))
	ordCap := c.orderingCapOf(famCap, k+1, l)
	winOrdCap := c.orderingCapOf(c.powerCapOf(orderingHits, k), k, l)
	perNode := probes*probeCap + ordCap + float64(k)*famCap + float64(k)*winOrdCap
	var cost Cost
	cost.MaxCap = math.Max(famCap, math.Max(ordCap, winOrdCap))
	var walk func(fam []*node)
	walk = func(fam []*node) {
		p := c.capOf(len(fam))
		cost.MaxCap = math.Max(cost.MaxCap, p)
		cost.Draws += float64(len(fam)) * (p + perNode)
		for _, n := range fam {
			if len(n.children) > 0 {
				walk(n.children)
			}
		}
	}
	walk(top)
	rows := capRows(chunkRows(x, pool.Workers(c.Workers), c.MemoryBudget), c.Batch)
	callsPerDraw := math.Ceil(float64(x.M) / float64(rows))
	cost.ModelCalls = math.Ceil(float64(x.M)/float64(capRows(x.M, c.Batch))) + cost.Draws*callsPerDraw
	cost.InstanceEvals = float64(x.M) * (1 + cost.Draws)
	return cost
}

// guard refuses a configuration whose worst case exceeds MaxDraws, or whose
// caps cannot be counted, with an error that states the estimate.
func (c TIME) guard(top []*node, data *tempora.Dataset) error {
	cost := c.cost(top, data)
	est := fmt.Sprintf("%.3g draws, %.3g model calls and %.3g instance evaluations, up to %.3g draws per test",
		cost.Draws, cost.ModelCalls, cost.InstanceEvals, cost.MaxCap)
	why := fmt.Sprintf("alpha %v", c.Alpha)
	if c.Permutations > 0 {
		why = fmt.Sprintf("%d permutations per test", c.Permutations)
	}
	if cost.MaxCap > maxCountable {
		return fmt.Errorf("explain: TIME with %s on %d features × %d timesteps needs in the worst case %s: more than can be counted; raise alpha",
			why, data.X.D, data.X.L, est)
	}
	if c.MaxDraws > 0 && cost.Draws > float64(c.MaxDraws) {
		return fmt.Errorf("explain: TIME with %s on %d features × %d timesteps needs in the worst case %s, above the limit of %d draws (raise the draw-limit parameter to run it anyway)",
			why, data.X.D, data.X.L, est, c.MaxDraws)
	}
	return nil
}
