package explain

import (
	"fmt"
	"math"

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
//   - an across-instance draw follows its length rule (LengthRule,
//     lengths.go): by default (Strata) instances are permuted only among
//     instances whose supports cover the test's window alike, a feature's
//     values moving with their missingness (tempora.PermuteInstancesWithin);
//   - a within-window draw permutes each series' values among its observed
//     positions only (tempora.PermuteObserved), so a missing cell stays
//     missing and padding stays padding;
//   - a test whose block holds no observed value in any instance (a window
//     outside the span of its features) makes no draw: every permutation
//     leaves the data unchanged, so its score is 0 and its p-value 1;
//   - conditional tests are refused (their per-timestep regressions need
//     every cell).
//
// tempora never imputes: the model receives the missing cells as NaN.

// forceMasked makes an Engine run the masked code paths on complete data
// (benchmarks and tests of their equivalence only).
var forceMasked = false

// maxLocate bounds the instances predicted one at a time to find the one a
// failing model fails on.
const maxLocate = 64

// neverImputes is the reminder added to a model's failure on data with
// missing values.
const neverImputes = "tempora passes missing values to the model as NaN and never imputes them"

// setObservation records the data's observation summary.
func (e *Engine) setObservation(obs *tempora.Observation) {
	e.obs = obs
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
	st, _ := e.memo(strataKey(w), func() (any, error) { return windowStrata(e.obs.Support, w), nil })
	return st.(*strata)
}

// strataKey is the Engine's memo key of a window's strata.
type strataKey tempora.Window

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

// clipToSpans moves the windows found for nodes into the span where some
// member of the node is observed, on data with missing values. The window
// search never reaches padding when the node is important (a probe of a
// region with no observed value makes no draw and scores 0), but a search
// whose every probe was unimportant ends at the last timestep; clamping
// both ends into the span keeps every window, and the ranges of its ends,
// in the feature's aligned time. Complete data is left as it is.
func (r *timeRun) clipToSpans(nodes []unit, found []located) {
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
