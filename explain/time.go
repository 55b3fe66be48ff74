package explain

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/fdr"
)

// Defaults of the TIME configuration, used for zero fields.
const (
	// DefaultPermutations is the number of permutations per test in fixed
	// mode, the paper's P = 50.
	DefaultPermutations = 50
	DefaultAlpha        = 0.1
	DefaultGamma        = 0.99
	// StopHits is the largest h of a sequential test (SequentialStop).
	StopHits = 10
)

// MinPermutations returns the smallest number of permutations P at which a
// single test of a family of m tests can pass Benjamini–Hochberg at level
// alpha: the smallest p-value of a permutation test, 1/(P+1), must be at
// most alpha/m, so P = ⌈m/alpha⌉ − 1 (99 for 10 tests at 0.1). With fewer,
// BH rejects nothing unless several tests reach the smallest p-value
// together. It returns at least 1 for m ≥ 1 and alpha in (0, 1).
func MinPermutations(m int, alpha float64) int {
	// The slack keeps ⌈10/0.1⌉ at 100 despite 0.1's rounding.
	return max(1, int(math.Ceil(float64(m)/alpha-1e-9))-1)
}

// SequentialStop returns the stopping rule of a sequential test of at most
// p draws whose p-value will be compared with thresholds of at most alpha
// (every Benjamini–Hochberg threshold of a family at level alpha is at most
// alpha): Stop{Hits: h} with
//
//	h = min(StopHits, ⌊alpha·p⌋ + 1).
//
// h = 10 is Besag and Clifford's suggestion: the p-value h/k of a test
// stopped at draw k is then known to about 1/√h ≈ 30% relative error,
// plenty for comparisons with BH thresholds, and a null test stops after
// about h/p draws. The bound ⌊alpha·p⌋ + 1 stops a test as soon as it can
// no longer reach p ≤ alpha: a test stopped at draw k ≤ p has p-value h/k >
// alpha, and the fixed test with the same p draws would have had at least
// h + 1 hits out of p + 1, also a p-value above alpha. Whenever
// ⌊alpha·p⌋ + 1 ≤ StopHits (p ≤ 99 at alpha = 0.1) the sequential test
// therefore rejects exactly when the fixed test with the same draws does:
// it only saves draws.
func SequentialStop(alpha float64, p int) Stop {
	return Stop{Hits: min(StopHits, int(math.Floor(alpha*float64(p)+1e-9))+1)}
}

// TIME is the Temporal Importance Model Explanation method of Sood and
// Craven (see the package documentation). The zero value runs sequential
// permutation tests (Besag and Clifford) with the smallest permutation cap
// that lets each family make a single discovery, FDR level 0.1, window
// localisation 0.99, the task's default loss, seed 0, one worker per
// available CPU and a flat hierarchy. With Fixed set it is the paper's
// configuration: 50 permutations per test.
type TIME struct {
	// Permutations bounds the draws per test. In sequential mode (the
	// default) it is P_max, the most draws of any test; 0 means, for each
	// family of m tests, MinPermutations(m, Alpha) (99 for 10 features at
	// α = 0.1, 19 for the {ordering, window} pair, 9 for the window
	// ordering), and DefaultPermutations for the window-search probes. In
	// fixed mode it is the number of draws P of every test; 0 means
	// DefaultPermutations. Negative values are an error.
	Permutations int
	// Fixed selects the paper's fixed-P tests: every test makes exactly
	// Permutations draws, and p = (1 + #not worse)/(1 + P). The zero value
	// (false) selects sequential tests: a test stops as soon as its
	// SequentialStop rule says so, and a window-search probe as soon as
	// its score is clearly above or below the search threshold (see
	// FullProbes).
	Fixed bool
	// FullProbes runs every window-search probe to its cap in sequential
	// mode, instead of stopping it once the interval score ± 3 SE (after at
	// least 5 draws) settles the comparison with the threshold. Fixed
	// implies it.
	FullProbes bool
	// Alpha is the FDR level α of every Benjamini–Hochberg family, in
	// (0, 1); 0 means DefaultAlpha.
	Alpha float64
	// Gamma is the window localisation parameter γ in (0, 1); 0 means
	// DefaultGamma. The window leaves out a prefix and a suffix whose
	// importance is each at most (1−γ)/2 of the whole sequence's.
	Gamma float64
	// Loss is the per-instance loss; nil means tempora.LossFor(data.Task).
	Loss tempora.Loss
	// Seed is the run seed of every permutation stream.
	Seed uint64
	// Workers is the number of goroutines evaluating the model; 0 means
	// runtime.GOMAXPROCS(0). The result does not depend on it.
	Workers int
	// Hierarchy is an optional tree of feature groups; nil means every
	// feature is tested alone in one family.
	Hierarchy *Hierarchy
}

var _ tempora.Explainer = TIME{}

// config returns c with defaults filled in (a zero Permutations stays 0 in
// sequential mode: the cap is chosen per family), or an error naming the
// offending field.
func (c TIME) config() (TIME, error) {
	if c.Permutations < 0 {
		return c, fmt.Errorf("explain: TIME permutations %d is negative (0 chooses the caps per family of tests)", c.Permutations)
	}
	if c.Permutations == 0 && c.Fixed {
		c.Permutations = DefaultPermutations
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if !(c.Alpha > 0 && c.Alpha < 1) {
		return c, fmt.Errorf("explain: TIME alpha %v outside (0, 1)", c.Alpha)
	}
	if c.Gamma == 0 {
		c.Gamma = DefaultGamma
	}
	if !(c.Gamma > 0 && c.Gamma < 1) {
		return c, fmt.Errorf("explain: TIME gamma %v outside (0, 1)", c.Gamma)
	}
	if c.Workers < 0 {
		return c, fmt.Errorf("explain: TIME workers %d is negative", c.Workers)
	}
	return c, nil
}

// maxDraws returns the draws cap of a test in a family of m tests.
func (c TIME) maxDraws(m int) int {
	if c.Permutations > 0 {
		return c.Permutations
	}
	return MinPermutations(m, c.Alpha)
}

// orderingDraws returns the draws cap of a within-window test of w
// timesteps in a family of m tests. With the default caps, a window short
// enough that its ordering could just reach α/m (w ≤ w₀, the smallest w
// with 1/w! ≤ α/m: 4 for α/m in [1/24, 1/6)) is enumerated exactly, w! − 1
// draws, even above MinPermutations: a sampled test of a short window
// would draw the identity ordering, a sure hit, too often (probability
// 1/24 per draw for w = 4, so a 4-timestep window capped at 9 draws would
// lose a third of its power).
func (c TIME) orderingDraws(m, w int) int {
	p := c.maxDraws(m)
	if c.Permutations > 0 {
		return p
	}
	w0 := 1
	for f := 1; float64(f) < float64(m)/c.Alpha*(1-1e-12) && w0 < 20; f *= w0 {
		w0++
	}
	if e, ok := exactDraws(w, exactDrawsOf(w0)); ok {
		return max(p, e)
	}
	return p
}

// exactDrawsOf returns w! − 1 (w ≤ 20).
func exactDrawsOf(w int) int {
	f, _ := factorial(w, math.MaxInt)
	return f - 1
}

// stop returns the stopping rule of a p-value test with the given cap.
func (c TIME) stop(pmax int) Stop {
	if c.Fixed {
		return Stop{}
	}
	return SequentialStop(c.Alpha, pmax)
}

// probeCap returns the draws cap of a window-search probe.
func (c TIME) probeCap() int {
	if c.Permutations > 0 {
		return c.Permutations
	}
	return DefaultPermutations
}

// node is a feature or a group in the test hierarchy.
type node struct {
	key      string // stream key prefix
	name     string
	members  []int
	children []*node // the family tested when this node is rejected
	res      *tempora.FeatureResult
}

func (n *node) test(kind string, w tempora.Window, k Perturbation, p int, stop Stop) Test {
	return Test{Features: n.members, Window: w, Kind: k, Permutations: p, Key: n.key + "/" + kind, Stop: stop}
}

// The kinds of test in Accounting.Draws, in this order.
const (
	drawOverall = iota
	drawSearch
	drawOrdering
	drawWindow
	drawWindowOrdering
	drawKinds
)

var drawNames = [drawKinds]string{"overall", "window search", "ordering", "window", "window ordering"}

// tally adds the draws of results to the count of kind k.
func tally(counts []tempora.DrawCount, k int, res ...TestResult) {
	for _, r := range res {
		counts[k].Tests++
		counts[k].Draws += int64(r.Evaluated)
		counts[k].MaxDraws += int64(r.Max)
	}
}

// Explain runs TIME on model m and data. It returns an error, never a
// panic, for an invalid configuration, invalid data (shape, non-finite
// values, non-binary classification labels, fewer than 2 instances), an
// invalid hierarchy, a failing model or one that predicts non-finite
// values, or when ctx is cancelled.
func (c TIME) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	began := time.Now()
	cfg, err := c.config()
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("explain: nil model")
	}
	if data == nil {
		return nil, fmt.Errorf("explain: nil dataset")
	}
	if err := data.Validate(2); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	// Check the hierarchy before the model is called.
	x := data.X
	ex := tempora.NewExplanation("TIME", data)
	top, err := cfg.buildNodes(ex, data)
	if err != nil {
		return nil, err
	}
	eng, err := NewEngine(m, data, cfg.Loss, cfg.Seed, cfg.Workers)
	if err != nil {
		return nil, err
	}
	if eng.BaselineLoss() == 0 {
		ex.Warnings = append(ex.Warnings, "baseline loss is zero: the model fits the targets exactly")
	}
	ex.Warnings = append(ex.Warnings, cfg.floorWarnings(top)...)
	whole := tempora.Window{Start: 0, End: x.L - 1}
	counts := make([]tempora.DrawCount, drawKinds)
	for k := range counts {
		counts[k].Test = drawNames[k]
	}

	// Stage A: overall importance, family by family, top-down. All families
	// of one level run in one batch.
	var important []*node
	for families := [][]*node{top}; len(families) > 0; {
		var tests []Test
		for _, fam := range families {
			p := cfg.maxDraws(len(fam))
			for _, n := range fam {
				tests = append(tests, n.test("overall", whole, AcrossInstances, p, cfg.stop(p)))
			}
		}
		res, err := eng.Run(ctx, tests)
		if err != nil {
			return nil, err
		}
		tally(counts, drawOverall, res...)
		var next [][]*node
		k := 0
		for _, fam := range families {
			p := make([]float64, len(fam))
			for i, n := range fam {
				r := res[k]
				k++
				n.res.Tested = true
				n.res.Score = r.Score
				n.res.PValue = r.PValue
				p[i] = r.PValue
			}
			rej, adj := bh(p, cfg.Alpha)
			for i, n := range fam {
				n.res.PAdjusted = adj[i]
				n.res.Important = rej[i]
				if rej[i] {
					important = append(important, n)
					if len(n.children) > 0 {
						next = append(next, n.children)
					}
				}
			}
		}
		families = next
	}

	// Stage B: for each important node, window search, then the family
	// {whole-sequence ordering, window} under BH, then the window ordering
	// if the window is significant.
	probe := !cfg.Fixed && !cfg.FullProbes
	windows, probes, err := searchWindows(ctx, eng, important, x.L, (1-cfg.Gamma)/2, cfg.probeCap(), probe, &counts[drawSearch])
	if err != nil {
		return nil, err
	}
	pairMax, ordMax := cfg.maxDraws(2), cfg.orderingDraws(2, x.L)
	var tests []Test
	for i, n := range important {
		tests = append(tests,
			n.test("ordering", whole, WithinWindow, ordMax, cfg.stop(ordMax)),
			n.test("window", windows[i], AcrossInstances, pairMax, cfg.stop(pairMax)))
	}
	res, err := eng.Run(ctx, tests)
	if err != nil {
		return nil, err
	}
	var sig []*node
	for i, n := range important {
		ord, win := res[2*i], res[2*i+1]
		tally(counts, drawOrdering, ord)
		tally(counts, drawWindow, win)
		w := windows[i]
		n.res.Window = &w
		n.res.OrderingPValue = ord.PValue
		n.res.WindowScore = win.Score
		n.res.WindowPValue = win.PValue
		rej, adj := bh([]float64{ord.PValue, win.PValue}, cfg.Alpha)
		n.res.OrderingPAdjusted, n.res.OrderingImportant = adj[0], rej[0]
		n.res.WindowPAdjusted, n.res.WindowSignificant = adj[1], rej[1]
		if rej[1] {
			sig = append(sig, n)
		}
	}
	tests = tests[:0]
	for _, n := range sig {
		p := cfg.orderingDraws(1, n.res.Window.Len())
		tests = append(tests, n.test("window-ordering", *n.res.Window, WithinWindow, p, cfg.stop(p)))
	}
	res, err = eng.Run(ctx, tests)
	if err != nil {
		return nil, err
	}
	tally(counts, drawWindowOrdering, res...)
	for i, n := range sig {
		// A family of one: BH at α rejects iff p ≤ α, and the adjusted
		// p-value is the raw one.
		n.res.WindowOrderingPValue = res[i].PValue
		n.res.WindowOrderingImportant = res[i].PValue <= cfg.Alpha
		w := n.res.Window.Len()
		if f, ok := factorial(w, tests[i].Permutations+1); ok && 1/float64(f) > cfg.Alpha {
			ex.Warnings = append(ex.Warnings, fmt.Sprintf("%s: window %v has %d timesteps, so its ordering p-value is at least 1/%d > alpha %v", n.name, *n.res.Window, w, f, cfg.Alpha))
		}
	}

	// Cells: an important feature's window score over its window if the
	// window is significant, else its overall score over all timesteps.
	for j := range ex.Features {
		f := &ex.Features[j]
		if !f.Important {
			continue
		}
		row := ex.Cells[j*x.L : (j+1)*x.L]
		if f.WindowSignificant {
			for t := f.Window.Start; t <= f.Window.End; t++ {
				row[t] = f.WindowScore
			}
		} else {
			for t := range row {
				row[t] = f.Score
			}
		}
	}
	acc := eng.Accounting()
	acc.WindowProbes = probes
	acc.Draws = counts
	acc.Runtime = time.Since(began)
	ex.Accounting = acc
	return ex, nil
}

// floorWarnings checks every family of the hierarchy: the top family, the
// members of each group, the {ordering, window} pairs and the window
// orderings. A family of m tests whose cap P has 1/(P+1) > α/m cannot make a
// single discovery; BH then rejects nothing unless ⌈m/(α(P+1))⌉ tests reach
// the smallest p-value together. With the default caps
// (MinPermutations) this never happens.
func (c TIME) floorWarnings(top []*node) []string {
	var out []string
	check := func(family string, m int) {
		p := c.maxDraws(m)
		floor := 1 / float64(p+1)
		if floor <= c.Alpha/float64(m)*(1+1e-12) {
			return
		}
		need := int(math.Ceil(float64(m)/(c.Alpha*float64(p+1)) - 1e-9))
		consequence := fmt.Sprintf("BH rejects none of them unless at least %d reach it", need)
		if need > m {
			consequence = "none of them can be significant"
		}
		out = append(out, fmt.Sprintf("%s: with %d permutations the smallest p-value 1/%d = %.3g exceeds alpha/m = %.3g, so %s; a single discovery needs at least %d permutations",
			family, p, p+1, floor, c.Alpha/float64(m), consequence, MinPermutations(m, c.Alpha)))
	}
	if c.Hierarchy == nil {
		check(fmt.Sprintf("the family of %d features", len(top)), len(top))
	} else {
		check(fmt.Sprintf("the top family of %d groups", len(top)), len(top))
		var walk func(n *node)
		walk = func(n *node) {
			if len(n.children) == 0 {
				return
			}
			check(fmt.Sprintf("the family of the %d members of %s", len(n.children), n.name), len(n.children))
			for _, ch := range n.children {
				walk(ch)
			}
		}
		for _, n := range top {
			walk(n)
		}
	}
	check("each {ordering, window} pair (2 tests)", 2)
	check("each window-ordering test (a family of 1)", 1)
	return out
}

// bh applies fdr.BH to p at level alpha.
func bh(p []float64, alpha float64) ([]bool, []float64) {
	rej := make([]bool, len(p))
	adj := make([]float64, len(p))
	fdr.BH(rej, adj, p, alpha)
	return rej, adj
}

// buildNodes returns the top family and fills ex.Groups (pre-order) for a
// hierarchy.
func (c TIME) buildNodes(ex *tempora.Explanation, data *tempora.Dataset) ([]*node, error) {
	d := data.X.D
	featNode := func(j int) *node {
		return &node{key: "time/feature/" + strconv.Itoa(j), name: fmt.Sprintf("feature %q", data.Name(j)), members: []int{j}, res: &ex.Features[j]}
	}
	if c.Hierarchy == nil {
		top := make([]*node, d)
		for j := range top {
			top[j] = featNode(j)
		}
		return top, nil
	}
	if err := c.Hierarchy.validate(d, data.FeatureNames); err != nil {
		return nil, err
	}
	// Count groups first so that result pointers into ex.Groups stay valid.
	var count func(g *Group) int
	count = func(g *Group) int {
		n := 1
		for _, ch := range g.Children {
			n += count(ch)
		}
		return n
	}
	total := 0
	for _, g := range c.Hierarchy.Groups {
		total += count(g)
	}
	ex.Groups = make([]tempora.FeatureResult, 0, total)
	covered := make([]bool, d)
	var build func(g *Group) *node
	build = func(g *Group) *node {
		r := tempora.NewFeatureResult(-1, g.Name)
		r.Members = g.members()
		ex.Groups = append(ex.Groups, r)
		n := &node{key: "time/group/" + strconv.Quote(g.Name), name: fmt.Sprintf("group %q", g.Name), members: r.Members, res: &ex.Groups[len(ex.Groups)-1]}
		for _, j := range g.Features {
			covered[j] = true
			n.children = append(n.children, featNode(j))
		}
		for _, ch := range g.Children {
			n.children = append(n.children, build(ch))
		}
		return n
	}
	var top []*node
	for _, g := range c.Hierarchy.Groups {
		top = append(top, build(g))
	}
	var missing []int
	for j, ok := range covered {
		if !ok {
			missing = append(missing, j)
		}
	}
	if len(missing) > 0 {
		ex.Warnings = append(ex.Warnings, fmt.Sprintf("features %v are not in the hierarchy and were not tested", missing))
	}
	return top, nil
}
