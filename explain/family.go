package explain

import (
	"context"
	"fmt"
)

// Family is a set of tests whose p-values Benjamini–Hochberg adjusts
// together at level Alpha: the members of one family of TIME's hierarchy
// (the features, a group's members, a feature's {ordering, window}
// tests). The family's facts live here, not in its tests: a test whose
// stopping rule stops by its family's decision (Anytime) learns the level
// and the other members from its Family.
type Family struct {
	// Alpha is the family's BH level, in (0, 1].
	Alpha float64
	// Tests are the family's members.
	Tests []Test
}

// RunFamilies runs the tests of several families in the same batches, as
// Run runs independent tests, and returns each family's results in input
// order. Between batches the tests of each family whose rule stops by the
// family's decision are settled together (settle). It returns an error as
// Run does, for a family whose level is not in (0, 1], or for a test of a
// score-only rule (Probe, Looks) in a family.
func (e *Engine) RunFamilies(ctx context.Context, fams []Family) ([][]TestResult, error) {
	var tests []Test
	ranges := make([]familyRange, len(fams))
	for f, fam := range fams {
		if !(fam.Alpha > 0 && fam.Alpha <= 1) {
			return nil, fmt.Errorf("explain: family %d has level %v outside (0, 1]", f, fam.Alpha)
		}
		for i, t := range fam.Tests {
			if _, ok := t.Stop.(scoreOnly); ok {
				return nil, fmt.Errorf("explain: family %d, test %d (%q): a score-only rule (%T) gives no p-value for Benjamini–Hochberg", f, i, t.Key, t.Stop)
			}
		}
		ranges[f] = familyRange{alpha: fam.Alpha, lo: len(tests), hi: len(tests) + len(fam.Tests)}
		tests = append(tests, fam.Tests...)
	}
	res, err := e.run(ctx, tests, ranges)
	if err != nil {
		return nil, err
	}
	out := make([][]TestResult, len(fams))
	for f, r := range ranges {
		out[f] = res[r.lo:r.hi:r.hi]
	}
	return out, nil
}

// scoreOnly marks the rules that compare a score with a threshold and give
// no p-value (Probe, Looks): their tests belong to no family.
type scoreOnly interface{ scoreOnly() }

// familyRange is a family's tests [lo, hi) among the tests of one run.
type familyRange struct {
	alpha  float64
	lo, hi int
}

// familyStopper is the state of a rule whose tests stop by their
// family's decision: it bounds the p-value the test would have at its
// cap, from above (the p-value it would report now) and from below.
type familyStopper interface {
	stopper
	bounds(t *tally) (upper, lower float64)
}

// settle applies the family stopping rule (docs/decisions.md, decision
// 16) to the tests of the family whose rule is a familyStopper, between
// batches: with lo and hi the numbers of BH rejections of the upper and of
// the lower bounds of every test's p-value at its end (BH is monotone, so
// lo ≤ R* ≤ hi, R* the rejections of BH applied to the p-values at the
// ends p*), an unfinished familyStopper test is settled as rejected when
// upper ≤ α·lo/m (then p* ≤ α·R*/m) and as not rejected when lower >
// α·hi/m (then p* > α·R*/m), and is then done. A familyStopper's bounds
// are its own (at its cap); another test of the family (a Besag–Clifford
// ordering test beside anytime window tests) has bounds 0 and 1 until it
// is done, then its p-value. A finished test keeps the bounds it had when
// it finished. The decisions of BH on the reported p-values are therefore
// exactly those of BH on p*: no error is added to that of the tests run to
// their ends. An exact test is never stopped.
func (f familyRange) settle(runs []run) {
	m := f.hi - f.lo
	up := make([]float64, m)
	lo := make([]float64, m)
	stoppers := 0
	for i := range m {
		s := &runs[f.lo+i].seq
		if r, ok := s.rule.(familyStopper); ok {
			up[i], lo[i] = r.bounds(&s.tally)
			stoppers++
			continue
		}
		up[i], lo[i] = 1, 0
		if s.done {
			p := s.rule.pValue(&s.tally, s.stopped)
			up[i], lo[i] = p, p
		}
	}
	if stoppers == 0 {
		return
	}
	rLo, rHi := bhCount(up, f.alpha), bhCount(lo, f.alpha)
	for i := range m {
		s := &runs[f.lo+i].seq
		if _, ok := s.rule.(familyStopper); !ok || s.done || s.exact {
			continue
		}
		// The slack keeps rounding of the bounds (1/M, the thresholds) from
		// settling a test whose bound is at its threshold.
		if up[i] <= f.alpha*float64(rLo)/float64(m)*(1-settleSlack) || lo[i] > f.alpha*float64(rHi)/float64(m)*(1+settleSlack) {
			s.done, s.stopped = true, s.used < s.max
		}
	}
}

// settleSlack is the relative slack of settle's comparisons.
const settleSlack = 1e-9

// bhCount returns the number of rejections of Benjamini–Hochberg at level
// alpha (internal/fdr, the rule of TIME's families).
func bhCount(p []float64, alpha float64) int {
	rej, _ := bh(p, alpha)
	n := 0
	for _, r := range rej {
		if r {
			n++
		}
	}
	return n
}
