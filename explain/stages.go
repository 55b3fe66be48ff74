package explain

import (
	"context"
	"fmt"
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
	for families := [][]*node{top}; len(families) > 0; {
		var tests []Test
		for f, fam := range families {
			p := r.cfg.maxDraws(len(fam))
			for _, n := range fam {
				tests = append(tests, n.test("overall", r.whole, r.cfg.across(), p, r.cfg.stop(p, strconv.Itoa(f))))
			}
		}
		res, err := r.eng.Run(ctx, tests)
		if err != nil {
			return nil, err
		}
		tally(r.counts, drawOverall, res...)
		var next [][]*node
		for _, fam := range families {
			for _, n := range r.decideFamily(fam, res[:len(fam)]) {
				important = append(important, n)
				if len(n.children) > 0 {
					next = append(next, n.children)
				}
			}
			res = res[len(fam):]
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
		if rej[i] {
			rejected = append(rejected, n)
		}
	}
	return rejected
}

// testOrderingWindow tests, for every important node, the family
// {whole-sequence ordering, window}: a within-window test over the whole
// sequence and an across-instance test over the node's window, under BH at
// level α. It records the window and both results and returns the nodes
// whose window is significant.
func (r *timeRun) testOrderingWindow(ctx context.Context, important []*node, windows []tempora.Window) ([]*node, error) {
	pairMax, ordMax := r.cfg.maxDraws(2), r.cfg.orderingDraws(2, r.whole.Len())
	var tests []Test
	for i, n := range important {
		f := strconv.Itoa(i)
		tests = append(tests,
			n.test("ordering", r.whole, WithinWindow, ordMax, r.cfg.stop(ordMax, f)),
			n.test("window", windows[i], r.cfg.across(), pairMax, r.cfg.stop(pairMax, f)))
	}
	res, err := r.eng.Run(ctx, tests)
	if err != nil {
		return nil, err
	}
	var significant []*node
	for i, n := range important {
		ord, win := res[2*i], res[2*i+1]
		tally(r.counts, drawOrdering, ord)
		tally(r.counts, drawWindow, win)
		w := windows[i]
		n.res.Window = &w
		n.res.OrderingPValue = ord.PValue
		n.res.WindowScore = win.Score
		n.res.WindowPValue = win.PValue
		rej, adj := bh([]float64{ord.PValue, win.PValue}, r.cfg.Alpha)
		n.res.OrderingPAdjusted, n.res.OrderingImportant = adj[0], rej[0]
		n.res.WindowPAdjusted, n.res.WindowSignificant = adj[1], rej[1]
		if rej[1] {
			significant = append(significant, n)
		}
	}
	return significant, nil
}

// testWindowOrderings tests the ordering within the window of every node
// whose window is significant, each test a family of one: BH at α rejects
// iff p ≤ α, and the adjusted p-value is the raw one. It warns about a
// window too short for its ordering ever to be significant.
func (r *timeRun) testWindowOrderings(ctx context.Context, significant []*node) error {
	var tests []Test
	for i, n := range significant {
		p := r.cfg.orderingDraws(1, n.res.Window.Len())
		tests = append(tests, n.test("window-ordering", *n.res.Window, WithinWindow, p, r.cfg.stop(p, strconv.Itoa(i))))
	}
	res, err := r.eng.Run(ctx, tests)
	if err != nil {
		return err
	}
	tally(r.counts, drawWindowOrdering, res...)
	for i, n := range significant {
		n.res.WindowOrderingPValue = res[i].PValue
		n.res.WindowOrderingImportant = res[i].PValue <= r.cfg.Alpha
		w := n.res.Window.Len()
		if f, ok := factorial(w, tests[i].Permutations+1); ok && 1/float64(f) > r.cfg.Alpha {
			r.ex.Warnings = append(r.ex.Warnings, fmt.Sprintf("%s: window %v has %d timesteps, so its ordering p-value is at least 1/%d > alpha %v", n.name, *n.res.Window, w, f, r.cfg.Alpha))
		}
	}
	return nil
}

// fillCells sets the cells of ex: an important feature's window score over
// its window if the window is significant, else its overall score over all
// timesteps; 0 elsewhere.
func fillCells(ex *tempora.Explanation) {
	l := ex.L
	for j := range ex.Features {
		f := &ex.Features[j]
		if !f.Important {
			continue
		}
		row := ex.Cells[j*l : (j+1)*l]
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

// bh applies fdr.BH to p at level alpha.
func bh(p []float64, alpha float64) ([]bool, []float64) {
	rej := make([]bool, len(p))
	adj := make([]float64, len(p))
	fdr.BH(rej, adj, p, alpha)
	return rej, adj
}
