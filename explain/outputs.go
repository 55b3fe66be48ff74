package explain

import (
	"context"

	"github.com/tempora-dev/tempora"
)

// Models with several outputs (tempora.Outputs; docs/decisions.md,
// decision 24). TIME's hierarchy gains a level under every important
// node: the family of its K outputs, each tested on its own loss (the
// "overall" test of the node on that output: the same key, hence the
// same draws, as the node's test on the whole model, so the draws the
// feature family made are not made again), under Benjamini–Hochberg at
// α. The window stages then run for the node on the whole model's loss,
// as with one output, and for every output of the node that its family
// rejects; the probes of one region of one node are shared by all its
// units (one draw gives every output's loss). For outputs with an anchor
// inside the sequence (steps), the causal check tests every important
// node on every such output, over the timesteps after the output's
// anchor, all in one family.

// units returns the units the window stages explain: every important node
// on the whole model's loss and, for a model with several outputs, on the
// loss of every output its output family rejects.
func (r *timeRun) units(ctx context.Context, important []*node) ([]unit, error) {
	units := wholeUnits(important)
	outs := r.ex.Outputs
	if outs == nil || len(important) == 0 {
		return units, nil
	}
	k := len(outs.Outputs)
	p := r.cfg.maxDraws(k)
	fams := make([]Family, len(important))
	for i, n := range important {
		fams[i].Alpha = r.cfg.Alpha
		for c := range k {
			r.outputRes(n, c).Undecided = stepOverall
			u := unit{node: n, out: OutputOf(c)}
			fams[i].Tests = append(fams[i].Tests, u.test("overall", r.whole, r.cfg.across(), p, r.cfg.familyStop(p)))
		}
	}
	res, err := r.eng.RunFamilies(ctx, fams)
	if err != nil {
		return nil, err
	}
	for i, n := range important {
		addDraws(r.counts, drawOutputs, res[i]...)
		p := make([]float64, k)
		for c, t := range res[i] {
			p[c] = t.PValue
		}
		rej, adj := bh(p, r.cfg.Alpha)
		for c, t := range res[i] {
			fr := r.outputRes(n, c)
			fr.Tested, fr.Score, fr.PValue, fr.PAdjusted, fr.Important = true, t.Score, t.PValue, adj[c], rej[c]
			fr.Undecided = ""
			if rej[c] {
				units = append(units, unit{node: n, out: OutputOf(c), res: fr})
			}
		}
	}
	return units, nil
}

// outputRes returns node n's result on output c.
func (r *timeRun) outputRes(n *node, c int) *tempora.FeatureResult {
	o := &r.ex.Outputs.Outputs[c]
	if n.index >= 0 {
		return &o.Features[n.index]
	}
	if o.Groups == nil {
		o.Groups = make([]tempora.FeatureResult, len(r.ex.Groups))
		for g, res := range r.ex.Groups {
			o.Groups[g] = tempora.NewFeatureResult(-1, res.Name)
			o.Groups[g].Members = res.Members
		}
	}
	return &o.Groups[-1-n.index]
}

// anchor returns the anchor of unit u's output on the time axis, and
// false for the whole model and outputs without one.
func (r *timeRun) anchor(u unit) (int, bool) {
	if u.out == WholeModel {
		return 0, false
	}
	return r.eng.data.Outputs.Anchor(int(u.out)-1, r.whole.Len())
}

// lag returns window w of unit u in lag coordinates, or nil.
func (r *timeRun) lag(u unit, w tempora.Window) *tempora.Window {
	if u.out == WholeModel {
		return nil
	}
	lag, ok := r.eng.data.Outputs.Lag(w, int(u.out)-1, r.whole.Len())
	if !ok {
		return nil
	}
	return &lag
}

// checkCausal tests, for every important node on every output whose
// anchor a lies before the last timestep, whether the output reads the
// node's inputs after its own step: an across-instance test of the node
// over [a+1, L−1] on the output's loss. The tests form one family under
// Benjamini–Hochberg at α, so that the explanation's verdict that some
// output reads the future (OutputResults.ReadsFuture, a rejection of the
// family's global null) is wrong with probability about α at most when no
// output does. Every output of an important node is tested, not only
// those its output family selected: a pair selected on the same data
// because its permutation over the whole sequence raised that output's
// loss is likely to raise it over the future too, which made the verdict
// wrong far more often than α (docs/decisions.md, decision 24). It records the tests in the nodes' results per output
// and, in the explanation's outputs, that the check ran and whether some
// output reads the future.
func (r *timeRun) checkCausal(ctx context.Context, nodes []*node) error {
	outs := r.ex.Outputs
	if outs == nil {
		return nil
	}
	var members []unit
	for _, n := range nodes {
		for c := range outs.Outputs {
			u := unit{node: n, out: OutputOf(c), res: r.outputRes(n, c)}
			if a, ok := r.anchor(u); ok && a < r.whole.End {
				members = append(members, u)
			}
		}
	}
	if len(members) == 0 {
		return nil
	}
	p := r.cfg.maxDraws(len(members))
	fam := Family{Alpha: r.cfg.Alpha}
	for _, u := range members {
		a, _ := r.anchor(u)
		future := tempora.Window{Start: max(a+1, 0), End: r.whole.End}
		fam.Tests = append(fam.Tests, u.test(regionKey("future", future), future, r.cfg.across(), p, r.cfg.familyStop(p)))
	}
	res, err := r.eng.RunFamilies(ctx, []Family{fam})
	if err != nil {
		return err
	}
	addDraws(r.counts, drawFuture, res[0]...)
	pv := make([]float64, len(members))
	for i, t := range res[0] {
		pv[i] = t.PValue
	}
	rej, adj := bh(pv, r.cfg.Alpha)
	outs.CausalChecked = true
	for i, u := range members {
		u.res.FuturePValue, u.res.FuturePAdjusted, u.res.ReadsFuture = pv[i], adj[i], rej[i]
		u.res.Undecided = ""
		outs.ReadsFuture = outs.ReadsFuture || rej[i]
	}
	return nil
}

// label names unit u in messages: its node, and on a model with several
// outputs the output it is tested on.
func (r *timeRun) label(u unit) string {
	if u.out == WholeModel {
		return u.name
	}
	return u.name + " on output " + r.eng.data.Outputs.Name(int(u.out)-1)
}
