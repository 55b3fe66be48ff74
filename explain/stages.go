package explain

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/fdr"
)

// The stages of TIME.Explain after the start: each runs one kind of test
// for a set of nodes through the Engine, records the results in the nodes'
// FeatureResults, applies Benjamini–Hochberg in every family, and returns
// the nodes that go on to the next stage. The window search between the
// first and second stage is in window.go.

// testFamilies runs the overall (across-instance, whole-sequence) tests
// family by family, top-down: the top family first, then the members of
// every rejected group. All families of one level run in one batch, each
// with its own cap. It returns the important nodes, level by level and in
// family order.
func (r *timeRun) testFamilies(ctx context.Context, top []*node) ([]*node, error) {
	var important []*node
	markTree(top, stepOverall)
	for families := [][]*node{top}; len(families) > 0; {
		fams := make([]Family, len(families))
		for f, fam := range families {
			p := r.cfg.maxDraws(len(fam))
			fams[f].Alpha = r.cfg.Alpha
			for _, n := range fam {
				fams[f].Tests = append(fams[f].Tests, n.test("overall", r.whole, r.cfg.across(), p, r.cfg.familyStop(p)))
			}
		}
		res, err := r.eng.RunFamilies(ctx, fams)
		if err != nil {
			return nil, err
		}
		var next [][]*node
		if r.topRes == nil {
			r.topRes = res[0]
		}
		for f, fam := range families {
			addDraws(r.counts, drawOverall, res[f]...)
			for _, n := range r.decideFamily(fam, res[f]) {
				important = append(important, n)
				if len(n.children) > 0 {
					next = append(next, n.children)
				}
			}
		}
		families = next
	}
	return important, nil
}

// decideFamily records the overall results of one family, applies BH at
// level α and returns the rejected nodes in family order.
func (r *timeRun) decideFamily(fam []*node, res []TestResult) []*node {
	p := make([]float64, len(fam))
	for i, n := range fam {
		n.res.Tested = true
		n.res.Score = res[i].Score
		n.res.PValue = res[i].PValue
		p[i] = res[i].PValue
	}
	rej, adj := bh(p, r.cfg.Alpha)
	var rejected []*node
	for i, n := range fam {
		n.res.PAdjusted = adj[i]
		n.res.Important = rej[i]
		n.res.Undecided = ""
		if rej[i] {
			rejected = append(rejected, n)
		} else {
			markTree(n.children, "") // never tested: decided
		}
	}
	return rejected
}

// testOrderingWindow tests, for every important node with k windows, the
// family {whole-sequence ordering, window 1, …, window k}: a within-window
// test over the whole sequence and an across-instance test over each
// window, under BH at level α, every test capped for power (pairDraws;
// the ordering enumerated exactly when short enough) and
// stopping as the tests' mode stops such tests (pairStop: Besag and
// Clifford's rule by default; docs/decisions.md, decision 25). It records the windows and the results and returns
// the nodes with at least one significant window. With one window the
// keys are "ordering" and "window", the paper's pair; with several,
// "window/<start>-<end>".
//
// The whole-sequence ordering test answers whether the model depends on
// when the feature's values occur: shuffling the whole sequence also moves
// values into and out of the window, so a model that only averages the
// feature over its window fails it too. It is reported as such
// (OrderingImportant); TIME's claim that the order matters is the
// within-window test (testWindowOrderings).
func (r *timeRun) testOrderingWindow(ctx context.Context, important []unit, windows [][]located) ([]unit, error) {
	fams := make([]Family, len(important))
	for i, n := range important {
		k := len(windows[i])
		famMax := r.cfg.pairDraws(k + 1)
		ordMax := r.cfg.orderingDraws(famMax, k+1, r.whole.Len())
		fams[i].Alpha = r.cfg.Alpha
		fams[i].Tests = append(fams[i].Tests, n.test("ordering", r.whole, WithinWindow{}, ordMax, r.cfg.pairStop(ordMax)))
		for _, w := range windows[i] {
			fams[i].Tests = append(fams[i].Tests, n.test(n.windowKey("window", w.window, k), w.window, r.cfg.across(), famMax, r.cfg.pairStop(famMax)))
		}
	}
	res, err := r.eng.RunFamilies(ctx, fams)
	if err != nil {
		return nil, err
	}
	var significant []unit
	for i, n := range important {
		if r.decideWindows(n, windows[i], res[i]) {
			significant = append(significant, n)
		}
	}
	return significant, nil
}

// decideWindows records the results of node n's family {ordering, window
// 1, …, window k} (res, in that order), applies BH at level α and reports
// whether a window is significant.
func (r *timeRun) decideWindows(n unit, windows []located, res []TestResult) bool {
	k := len(windows)
	ord, wins := res[0], res[1:k+1]
	addDraws(r.counts, drawOrdering, ord)
	addDraws(r.counts, drawWindow, wins...)
	p := []float64{ord.PValue}
	for _, w := range wins {
		p = append(p, w.PValue)
	}
	rej, adj := bh(p, r.cfg.Alpha)
	n.res.OrderingPValue, n.res.OrderingPAdjusted, n.res.OrderingImportant = ord.PValue, adj[0], rej[0]
	n.res.Windows = make([]tempora.WindowResult, k)
	nan := math.NaN()
	lead, any := 0, false
	for j, w := range windows {
		n.res.Windows[j] = tempora.WindowResult{
			Window: w.window, StartRange: w.startRange, EndRange: w.endRange,
			Score: wins[j].Score, PValue: wins[j].PValue, PAdjusted: adj[j+1], Significant: rej[j+1],
			OrderingPValue: nan, OrderingPAdjusted: nan, Lag: r.lag(n, w.window),
		}
		any = any || rej[j+1]
		if adj[j+1] < adj[lead+1] {
			lead = j
		}
	}
	r.setLead(n, lead)
	return any
}

// setLead copies window lead of n into the single-window fields of its
// result: the lead window is the one with the smallest adjusted p-value
// (the earliest on ties), the only one when there is one.
func (r *timeRun) setLead(n unit, lead int) {
	w := n.res.Windows[lead]
	win := w.Window
	n.res.Window = &win
	n.res.WindowScore, n.res.WindowPValue, n.res.WindowPAdjusted, n.res.WindowSignificant = w.Score, w.PValue, w.PAdjusted, w.Significant
	n.res.WindowOrderingPValue, n.res.WindowOrderingImportant = w.OrderingPValue, w.OrderingImportant
}

// windowKey returns the stream key of a test of kind over window w of a
// unit with k windows: kind alone for one window of the whole model, as in
// the paper; with the window's coordinates otherwise, so that the units of
// one node on several outputs share the draws of a window they share, and
// only those.
func (u unit) windowKey(kind string, w tempora.Window, k int) string {
	if k == 1 && u.out == WholeModel {
		return kind
	}
	return kind + "/" + strconv.Itoa(w.Start) + "-" + strconv.Itoa(w.End)
}

// testWindowOrderings tests the ordering within every significant window
// of every node: the m significant windows of a node form a family, under
// BH at α, each test with cap windowOrderingDraws(m) (or the exact
// enumeration of a short window) and the rule orderingStop. A single window is a family of one: BH rejects iff p ≤
// α. It warns about a window too short for its ordering ever to be
// significant.
func (r *timeRun) testWindowOrderings(ctx context.Context, significant []unit) error {
	var tests []Test
	var fams [][]int // the indices into n.res.Windows of each node's family
	for _, n := range significant {
		var fam []int
		for j, w := range n.res.Windows {
			if w.Significant {
				fam = append(fam, j)
			}
		}
		fams = append(fams, fam)
		m := len(fam)
		for _, j := range fam {
			w := n.res.Windows[j].Window
			p := r.cfg.orderingDraws(r.cfg.windowOrderingDraws(m), m, w.Len())
			tests = append(tests, n.test(n.windowKey("window-ordering", w, len(n.res.Windows)), w, WithinWindow{}, p, r.cfg.orderingStop(p)))
		}
	}
	res, err := r.eng.Run(ctx, tests)
	if err != nil {
		return err
	}
	addDraws(r.counts, drawWindowOrdering, res...)
	for i, n := range significant {
		fam := fams[i]
		mine, perms := res[:len(fam)], tests[:len(fam)]
		res, tests = res[len(fam):], tests[len(fam):]
		p := make([]float64, len(fam))
		for k := range fam {
			p[k] = mine[k].PValue
		}
		rej, adj := bh(p, r.cfg.Alpha)
		lead := 0
		for k, j := range fam {
			w := &n.res.Windows[j]
			w.OrderingPValue, w.OrderingPAdjusted, w.OrderingImportant = p[k], adj[k], rej[k]
			if w.Window == *n.res.Window {
				lead = j
			}
			l := w.Window.Len()
			if f, ok := factorial(l, perms[k].Permutations+1); ok && 1/float64(f) > r.cfg.Alpha {
				r.ex.Warnings = append(r.ex.Warnings, fmt.Sprintf("%s: window %v has %d timesteps, so its ordering p-value is at least 1/%d > alpha %.3g", r.label(n), w.Window, l, f, r.cfg.Alpha))
			}
		}
		r.setLead(n, lead)
		windowOrderingClaim(n.res)
	}
	return nil
}

// windowOrderingClaim sets the feature-level window-ordering claim of f
// from all its windows, not only the lead one: the ordering matters when
// it matters in some window (WindowOrderingImportant), with the smallest
// p-value of the windows whose ordering was tested (WindowOrderingPValue);
// every window's own test stays in f.Windows.
func windowOrderingClaim(f *tempora.FeatureResult) {
	for _, w := range f.Windows {
		if math.IsNaN(w.OrderingPValue) {
			continue
		}
		if math.IsNaN(f.WindowOrderingPValue) || w.OrderingPValue < f.WindowOrderingPValue {
			f.WindowOrderingPValue = w.OrderingPValue
		}
		f.WindowOrderingImportant = f.WindowOrderingImportant || w.OrderingImportant
	}
}

// fillCells sets the cells of the explanation and of each of its outputs.
func (r *timeRun) fillCells() {
	fillCells(r.ex.Cells, r.ex.Features, r.ex.L, r.cfg.WindowRule)
	if outs := r.ex.Outputs; outs != nil {
		for k := range outs.Outputs {
			o := &outs.Outputs[k]
			fillCells(o.Cells, o.Features, r.ex.L, r.cfg.WindowRule)
		}
	}
}

// fillCells sets D × L cells from the features' results: an important
// feature's window score over each of its significant windows. An
// important feature without a significant window gets no cells under
// Verified (TIME does not know where it acts) and its overall score at
// every timestep under PaperRule. Cells are 0 elsewhere, and for a feature
// whose windows a budget left undecided.
func fillCells(cells []float64, features []tempora.FeatureResult, l int, rule WindowRule) {
	for j := range features {
		f := &features[j]
		if !f.Important || f.Undecided == stepWindow {
			continue
		}
		row := cells[j*l : (j+1)*l]
		any := false
		for _, w := range f.Windows {
			if !w.Significant {
				continue
			}
			any = true
			for t := w.Window.Start; t <= w.Window.End; t++ {
				row[t] = w.Score
			}
		}
		if !any && rule == PaperRule {
			for t := range row {
				row[t] = f.Score
			}
		}
	}
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

// The kinds of test a model with several outputs adds to Accounting.Draws,
// after the others: the output families and the causal checks.
const (
	drawOutputs = drawKinds + iota
	drawFuture
	drawOutputKinds
)

var drawOutputNames = [...]string{"outputs", "future"}

// addDraws adds the draws of results to the count of kind k: the draws
// each test evaluated for itself (TestResult.New; tests of one key share
// their draws), and the caps of the first test of each key.
func addDraws(counts []tempora.DrawCount, k int, res ...TestResult) {
	for _, r := range res {
		counts[k].Tests++
		counts[k].Draws += int64(r.New)
		if r.Owner {
			counts[k].MaxDraws += int64(r.Max)
		}
	}
}

// bh applies fdr.BH to p at level alpha.
func bh(p []float64, alpha float64) ([]bool, []float64) {
	rej := make([]bool, len(p))
	adj := make([]float64, len(p))
	fdr.BH(rej, adj, p, alpha)
	return rej, adj
}
