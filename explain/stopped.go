package explain

import (
	"context"
	"errors"
	"fmt"

	"github.com/tempora-dev/tempora"
)

// Runs stopped by a budget (budget.go). Each step of TIME marks the nodes
// it is about to decide undecided (tempora.FeatureResult.Undecided, named
// by the step's kind of test) and clears the mark once it has decided
// them: the feature and group families mark the whole tree at once and
// clear a family when its BH decision is made (and the subtree of a node
// it does not reject, which is never tested); the window steps mark the
// units entering them. A step's decisions are made from all of its tests
// at once, so a step the budget stops decides nothing, and every decision
// the explanation holds is the one a run without a budget makes: the
// draws of a test depend on the run seed, its key and the draw's number
// alone.

// The steps' names, those of their kinds of test (Accounting.Draws).
var (
	stepOverall        = drawNames[drawOverall]
	stepWindow         = drawNames[drawWindow]
	stepWindowOrdering = drawNames[drawWindowOrdering]
	stepFuture         = drawOutputNames[drawFuture-drawOutputs]
)

// enter marks the units undecided at step.
func (r *timeRun) enter(units []unit, step string) {
	for _, u := range units {
		u.res.Undecided = step
	}
}

// leave clears the marks of units whose step has decided them, leaving
// the causal check's mark on the results it has yet to decide.
func (r *timeRun) leave(units []unit) {
	for _, u := range units {
		u.res.Undecided = ""
		if r.future[u.res] {
			u.res.Undecided = stepFuture
		}
	}
}

// markTree marks every node of the families fam and below undecided at
// step.
func markTree(fam []*node, step string) {
	for _, n := range fam {
		n.res.Undecided = step
		markTree(n.children, step)
	}
}

// markFuture marks the results per output that the causal check will
// decide (checkCausal's members) and records them in r.future.
func (r *timeRun) markFuture(important []*node) {
	outs := r.ex.Outputs
	if outs == nil {
		return
	}
	r.future = map[*tempora.FeatureResult]bool{}
	for _, n := range important {
		for c := range outs.Outputs {
			u := unit{node: n, out: OutputOf(c), res: r.outputRes(n, c)}
			if a, ok := r.anchor(u); ok && a < r.whole.End {
				r.future[u.res] = true
				u.res.Undecided = stepFuture
			}
		}
	}
}

// stop records that budget stopped the run: the accounting's marker, a
// warning that counts the undecided nodes, and the results per output of
// every node whose own importance is undecided marked so too.
func (r *timeRun) stop(budget string, top []*node) {
	r.stoppedBy = budget
	undecided := 0
	var walk func(fam []*node)
	walk = func(fam []*node) {
		for _, n := range fam {
			if n.res.Undecided != "" {
				undecided++
			}
			if n.res.Undecided == stepOverall && r.ex.Outputs != nil {
				for c := range r.ex.Outputs.Outputs {
					r.outputRes(n, c).Undecided = stepOverall
				}
			}
			walk(n.children)
		}
	}
	walk(top)
	limit := fmt.Sprintf("%d model calls", r.cfg.MaxCalls)
	if budget == BudgetTime {
		limit = "a time of " + r.cfg.MaxTime.String()
	}
	r.ex.Warnings = append(r.ex.Warnings, fmt.Sprintf("stopped by the budget (%s) of %s: %d features or groups have tests that did not finish and are undecided (not unimportant); the other decisions are those of a full run", budget, limit, undecided))
}

// tune sets the batch size of the run (TIME.Batch): a given size is
// reported as it is, BatchAuto is chosen by Engine.TuneBatch. A model
// whose predictions depend on the batch keeps the default, with a
// warning.
func (r *timeRun) tune(ctx context.Context) error {
	switch {
	case r.cfg.Batch > 0:
		r.batch = &tempora.Batch{}
		return nil
	case r.cfg.Batch != BatchAuto:
		return nil
	}
	b, err := r.eng.TuneBatch(ctx)
	var dep *batchDependence
	if errors.As(err, &dep) {
		r.ex.Warnings = append(r.ex.Warnings, dep.Error()+"; the run keeps the default batch")
		return nil
	}
	r.batch = b
	return err
}
