package explain

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/fdr"
)

// Defaults of the TIME configuration, used for zero fields.
const (
	DefaultPermutations = 50
	DefaultAlpha        = 0.1
	DefaultGamma        = 0.99
)

// TIME is the Temporal Importance Model Explanation method of Sood and
// Craven (see the package documentation). The zero value is the paper's
// configuration: 50 permutations per test, FDR level 0.1, window
// localisation 0.99, the task's default loss, seed 0, one worker per
// available CPU and a flat hierarchy.
type TIME struct {
	// Permutations is the number of permutations per test (P); 0 means
	// DefaultPermutations. Negative values are an error.
	Permutations int
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

// config returns c with defaults filled in, or an error naming the
// offending field.
func (c TIME) config() (TIME, error) {
	if c.Permutations < 0 {
		return c, fmt.Errorf("explain: TIME permutations %d, need at least 1", c.Permutations)
	}
	if c.Permutations == 0 {
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

// node is a feature or a group in the test hierarchy.
type node struct {
	key      string // stream key prefix
	name     string
	members  []int
	children []*node // the family tested when this node is rejected
	res      *tempora.FeatureResult
}

func (n *node) test(kind string, w tempora.Window, k Perturbation, p int) Test {
	return Test{Features: n.members, Window: w, Kind: k, Permutations: p, Key: n.key + "/" + kind}
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
	if floor := 1 / float64(cfg.Permutations+1); floor > cfg.Alpha {
		ex.Warnings = append(ex.Warnings, fmt.Sprintf("with %d permutations the smallest p-value is %.3g > alpha %v: no test can be significant", cfg.Permutations, floor, cfg.Alpha))
	}
	P := cfg.Permutations
	whole := tempora.Window{Start: 0, End: x.L - 1}

	// Stage A: overall importance, family by family, top-down. All families
	// of one level run in one batch.
	var important []*node
	for families := [][]*node{top}; len(families) > 0; {
		var tests []Test
		for _, fam := range families {
			for _, n := range fam {
				tests = append(tests, n.test("overall", whole, AcrossInstances, P))
			}
		}
		res, err := eng.Run(ctx, tests)
		if err != nil {
			return nil, err
		}
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
	windows, probes, err := searchWindows(ctx, eng, important, x.L, (1-cfg.Gamma)/2, P)
	if err != nil {
		return nil, err
	}
	var tests []Test
	for i, n := range important {
		tests = append(tests,
			n.test("ordering", whole, WithinWindow, P),
			n.test("window", windows[i], AcrossInstances, P))
	}
	res, err := eng.Run(ctx, tests)
	if err != nil {
		return nil, err
	}
	var sig []*node
	for i, n := range important {
		ord, win := res[2*i], res[2*i+1]
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
		tests = append(tests, n.test("window-ordering", *n.res.Window, WithinWindow, P))
	}
	res, err = eng.Run(ctx, tests)
	if err != nil {
		return nil, err
	}
	for i, n := range sig {
		// A family of one: BH at α rejects iff p ≤ α, and the adjusted
		// p-value is the raw one.
		n.res.WindowOrderingPValue = res[i].PValue
		n.res.WindowOrderingImportant = res[i].PValue <= cfg.Alpha
		w := n.res.Window.Len()
		if f, ok := factorial(w, P+1); ok && 1/float64(f) > cfg.Alpha {
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
	acc.Runtime = time.Since(began)
	ex.Accounting = acc
	return ex, nil
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
