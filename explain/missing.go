package explain

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tempora-dev/tempora"
)

// Missing values (docs/decisions.md, decision 19).
//
// A dataset whose tensor holds NaN has missing values: cells never
// observed, and sequences shorter than L, whose cells outside their
// instance's support are padding (tempora.Observation). The Engine keeps
// the Observation; when it is complete every draw runs the dense code
// paths, unchanged. Otherwise:
//
//   - an across-instance draw follows the length rule (LengthRule): by
//     default (Strata) instances are permuted only among instances whose
//     supports cover the test's window alike, a feature's values moving
//     with their missingness (tempora.PermuteInstancesWithin);
//   - a within-window draw permutes each series' values among its observed
//     positions only (tempora.PermuteTimestepsObserved), so a missing cell
//     stays missing and padding stays padding;
//   - a test whose block holds no observed value in any instance (a window
//     outside the span of its features) makes no draw: every permutation
//     leaves the data unchanged, so its score is 0 and its p-value 1;
//   - conditional tests are refused (their per-timestep regressions need
//     every cell).
//
// tempora never imputes: the model receives the missing cells as NaN.

// LengthRule says how an across-instance permutation moves a feature's
// values between instances whose supports (lengths) differ. It matters only
// for data with missing values (docs/decisions.md, decision 19).
type LengthRule int

const (
	// Strata, the default: instances are permuted only among instances
	// that cover the test's window alike (the same intersection of their
	// support with the window; for a whole-sequence test, the same
	// support). The draw's uniform permutation of all instances induces,
	// within each stratum, the permutation in which the stratum's members
	// appear in it. Donor and receiver then have the same cells inside
	// their supports and the same padding, so the draw keeps the data's
	// joint law whenever instances are exchangeable given their supports.
	// A window covered by every instance is one stratum: the draw is the
	// dense one. An instance alone in its stratum keeps its own block.
	Strata LengthRule = iota
	// Receiver: a sequence's length stays with its instance. Each
	// receiving instance takes the donor's cells (values and NaNs) inside
	// its own support; its padding stays padding, and a donor's value that
	// would land on it is dropped. Where the donor is shorter, the
	// receiver gets missing cells it did not have, which biases the test
	// (docs/decisions.md, decision 19); kept for comparison.
	Receiver
	// Donor moves the donor's whole block, padding included, as on dense
	// data: the receiver's feature takes the donor's length. Invalid for a
	// model whose output depends on the sequence length (docs/decisions.md, decision 19);
	// kept for comparison.
	Donor
)

// String returns "strata", "receiver" or "donor".
func (r LengthRule) String() string {
	switch r {
	case Receiver:
		return "receiver"
	case Donor:
		return "donor"
	case Strata:
		return "strata"
	}
	return "LengthRule(" + strconv.Itoa(int(r)) + ")"
}

// ParseLengthRule returns the rule named s ("strata", "receiver" or
// "donor").
func ParseLengthRule(s string) (LengthRule, error) {
	for _, r := range []LengthRule{Strata, Receiver, Donor} {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("explain: unknown length rule %q (want strata, receiver or donor)", s)
}

// forceMasked makes an Engine run the masked code paths on complete data
// (benchmarks and tests of their equivalence only).
var forceMasked = false

// maxLocate bounds the instances predicted one at a time to find the one a
// failing model fails on.
const maxLocate = 64

// neverImputes is the reminder added to a model's failure on data with
// missing values.
const neverImputes = "tempora passes missing values to the model as NaN and never imputes them"

// setObservation records the data's observation summary and the length
// rule.
func (e *Engine) setObservation(obs *tempora.Observation, rule LengthRule) error {
	if rule != Receiver && rule != Donor && rule != Strata {
		return fmt.Errorf("explain: unknown length rule %d", int(rule))
	}
	e.obs, e.rule = obs, rule
	e.masked = forceMasked || !obs.Complete()
	if e.masked {
		x := e.data.X
		e.complete = make([]bool, x.M*x.D)
		for k := range e.complete {
			e.complete[k] = true
			for _, v := range x.Data[k*x.L : (k+1)*x.L] {
				if v != v {
					e.complete[k] = false
					break
				}
			}
		}
	}
	return nil
}

// strata are the strata of the Strata rule for one window: the stratum of
// every instance (numbered in order of first appearance) and the members
// of every stratum in instance order.
type strata struct {
	of      []int
	members [][]int
}

// windowStrata returns the strata of the instances for window w: instances
// share a stratum when their supports meet w in the same span (all those
// that do not meet it share one). It returns nil when there is one
// stratum, where Strata's draw is the unstratified one.
func windowStrata(sup []tempora.Window, w tempora.Window) *strata {
	none := tempora.Window{Start: 1, End: 0}
	index := map[tempora.Window]int{}
	st := &strata{of: make([]int, len(sup))}
	for i, s := range sup {
		k := tempora.Window{Start: max(s.Start, w.Start), End: min(s.End, w.End)}
		if k.Start > k.End {
			k = none
		}
		c, ok := index[k]
		if !ok {
			c = len(st.members)
			index[k] = c
			st.members = append(st.members, nil)
		}
		st.of[i] = c
		st.members[c] = append(st.members[c], i)
	}
	if len(st.members) == 1 {
		return nil
	}
	return st
}

// strataOf returns the strata of window w (windowStrata), computed once
// per window.
func (e *Engine) strataOf(w tempora.Window) *strata {
	e.strataMu.Lock()
	defer e.strataMu.Unlock()
	if st, ok := e.strataCache[w]; ok {
		return st
	}
	if e.strataCache == nil {
		e.strataCache = map[tempora.Window]*strata{}
	}
	st := windowStrata(e.obs.Support, w)
	e.strataCache[w] = st
	return st
}

// stratify rewrites perm, a permutation of the instances, into the
// permutation it induces within the strata: the r-th member (in instance
// order) of a stratum receives the r-th member of that stratum in perm's
// sequence. A uniform perm gives independent uniform permutations of every
// stratum. buf and cnt are scratch of length M and at least the number of
// strata.
func (st *strata) stratify(perm, buf, cnt []int) {
	cnt = cnt[:len(st.members)]
	clear(cnt)
	for _, v := range perm {
		s := st.of[v]
		buf[st.members[s][cnt[s]]] = v
		cnt[s]++
	}
	copy(perm, buf)
}

// singletons returns the number of instances alone in their stratum.
func (st *strata) singletons() int {
	if st == nil {
		return 0
	}
	n := 0
	for _, m := range st.members {
		if len(m) == 1 {
			n++
		}
	}
	return n
}

// blockObserved reports whether some feature of feats is observed somewhere
// in window w (its span meets w).
func (e *Engine) blockObserved(feats []int, w tempora.Window) bool {
	for _, j := range feats {
		sp := e.obs.Span[j]
		if max(sp.Start, w.Start) <= min(sp.End, w.End) {
			return true
		}
	}
	return false
}

// permuteRow perturbs row r of dst (instance i of the data) as the masked
// draws of test p with permutation perm perturb instance i in a full copy,
// where dst's row already holds the data's own values or a previous draw
// of the same test (its missing cells are then the data's). It serves the
// chunked draws, and the in-place within-window draws: a series observed
// everywhere takes the dense gather, which is what
// tempora.PermuteTimestepsObserved computes for it.
func (e *Engine) permuteRow(data []float64, r, i int, p *plan, perm []int) {
	src := e.data.X
	d, l := src.D, src.L
	start, end := p.Window.Start, p.Window.End
	for _, j := range p.Features {
		dst := data[(r*d+j)*l+start : (r*d+j)*l+end+1]
		switch p.Kind {
		case AcrossInstances:
			if e.rule == Donor {
				copy(dst, src.Data[(perm[i]*d+j)*l+start:])
				continue
			}
			sup := e.obs.Support[i]
			s, t := max(start, sup.Start), min(end, sup.End)
			if s <= t {
				copy(dst[s-start:t-start+1], src.Data[(perm[i]*d+j)*l+s:])
			}
		case WithinWindow:
			s := src.Data[(i*d+j)*l+start : (i*d+j)*l+end+1]
			if e.complete[i*d+j] {
				for k, o := range perm {
					dst[k] = s[o]
				}
				continue
			}
			tempora.PermuteObserved(dst, s, perm)
		}
	}
}

// hasMissing reports whether instance i has a missing cell (NaN) anywhere,
// padding included.
func hasMissing(x *tempora.Tensor, i int) bool {
	n := x.D * x.L
	for _, v := range x.Data[i*n : (i+1)*n] {
		if v != v {
			return true
		}
	}
	return false
}

// locateFailure is called when the model failed (err) or predicted NaN on
// the baseline of data with missing values. It predicts the instances with
// missing values one at a time, at most maxLocate of them, and returns a
// clause naming the first that fails alone (an error or a NaN prediction);
// the error it completes already says that tempora never imputes.
func (e *Engine) locateFailure() string {
	x := e.data.X
	dst := make([]float64, 1)
	tried := 0
	for i := 0; i < x.M && tried < maxLocate; i++ {
		if !hasMissing(x, i) {
			continue
		}
		tried++
		dst[0] = math.NaN()
		err := e.model.Predict(dst, x.Rows(i, i+1))
		switch {
		case err != nil:
			return fmt.Sprintf("; predicted alone (a batch of one, where it is instance 0), instance %d, which has missing values, fails: %v", i, err)
		case math.IsNaN(dst[0]):
			return fmt.Sprintf("; predicted alone, instance %d, which has missing values, is predicted NaN", i)
		}
	}
	return fmt.Sprintf("; none of the first %d instances with missing values fails when predicted alone", tried)
}

// missingWarnings returns the warnings about the length rule on data with
// missing values: instances alone in their stratum under Strata, and the
// Donor rule on sequences of different lengths.
func (e *Engine) missingWarnings() []string {
	if !e.masked || e.obs.Complete() {
		return nil
	}
	var out []string
	switch {
	case e.rule == Strata:
		whole := tempora.Window{Start: 0, End: e.obs.L - 1}
		if n := windowStrata(e.obs.Support, whole).singletons(); n > 0 {
			out = append(out, fmt.Sprintf("length rule strata: %d of %d instances are alone in their stratum (no other instance has the same support) and keep their own values in every whole-sequence draw, which costs power", n, e.obs.M))
		}
	case e.rule == Donor && e.obs.VariableLength():
		out = append(out, "length rule donor: a donor's length moves with its values, so the across-instance tests are not valid for a model whose output depends on the sequence length (docs/decisions.md, decision 19)")
	}
	return out
}

// clipToSpans moves the windows found for nodes into the span where some
// member of the node is observed, on data with missing values. The window
// search never reaches padding when the node is important (a probe of a
// region with no observed value makes no draw and scores 0), but a search
// whose every probe was unimportant ends at the last timestep; clamping
// both ends into the span keeps every window, and the ranges of its ends,
// in the feature's aligned time. Complete data is left as it is.
func (r *timeRun) clipToSpans(nodes []*node, found []located) {
	if !r.eng.masked {
		return
	}
	for i, n := range nodes {
		sp := tempora.Window{Start: r.whole.End, End: r.whole.Start}
		for _, j := range n.members {
			s := r.eng.obs.Span[j]
			sp.Start, sp.End = min(sp.Start, s.Start), max(sp.End, s.End)
		}
		clamp := func(w tempora.Window) tempora.Window {
			c := func(t int) int { return min(max(t, sp.Start), sp.End) }
			return tempora.Window{Start: c(w.Start), End: c(w.End)}
		}
		f := &found[i]
		f.window, f.startRange, f.endRange = clamp(f.window), clamp(f.startRange), clamp(f.endRange)
	}
}
