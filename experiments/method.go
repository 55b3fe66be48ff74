package experiments

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tempora-dev/tempora"
)

// Method is an explanation method the runner can benchmark: how to build
// its explainer for one problem, and the records made from one explanation.
//
// One explainer run can yield several records: TIME is evaluated as TIME
// (all non-zero cells) and TIME-n (top n), and PERM-f filters PERM's
// explanation, so these pairs share one run and its runtime.
type Method struct {
	// Name names the run; it keys the explainer's random stream, so two
	// methods must not share a name.
	Name string
	// New returns the explainer for one problem of setting s, with the
	// derived seed and the worker count of the run. The explainer must give
	// the same explanation for any worker count.
	New func(seed uint64, workers int, s *Setting) tempora.Explainer
	// Outputs are the records made from each explanation, in order; nil
	// means one output named Name, scored in TopN mode.
	Outputs []Output
}

// Output is one record made from a method's explanation.
type Output struct {
	// Name is the method name of the record, e.g. "TIME-n".
	Name string
	// Mode is the evaluation mode of the feature-power, feature-fdr,
	// timestep-power and timestep-fdr metrics (the "-all" variants always
	// use AllNonZero).
	Mode Mode
	// TIMEMetrics adds the per-feature metrics of TIMEMetrics (ordering,
	// window ordering, Average_Window).
	TIMEMetrics bool
	// Derive, if non-nil, turns the method's explanation into the one this
	// output scores (e.g. PERM-f keeps PERM's BH-significant cells); ex is
	// the explainer New returned, which may hold more of the run's results.
	// It must not modify e.
	Derive func(ex tempora.Explainer, e *tempora.Explanation) (*tempora.Explanation, error)
}

func (m *Method) outputs() []Output {
	if len(m.Outputs) == 0 {
		return []Output{{Name: m.Name, Mode: TopN}}
	}
	return m.Outputs
}

// run is a method restricted to the outputs a run asked for.
type run struct {
	method  *Method
	outputs []Output
}

// resolveMethods maps requested output names to runs: extra methods take
// precedence over built-in ones with the same output name; runs are ordered
// by their first requested output, and outputs keep the method's order.
func resolveMethods(names []string, extra []Method) ([]run, error) {
	all := append(slices.Clone(extra), builtinMethods()...)
	seenName := map[string]bool{}
	for _, m := range extra {
		if m.Name == "" || m.New == nil {
			return nil, fmt.Errorf("experiments: extra method %q needs a Name and New", m.Name)
		}
		if seenName[m.Name] {
			return nil, fmt.Errorf("experiments: two extra methods named %q", m.Name)
		}
		seenName[m.Name] = true
		for _, o := range m.outputs() {
			if o.Name == "" || strings.ContainsAny(o.Name, " \t\n/=,") {
				return nil, fmt.Errorf("experiments: bad output name %q of method %s", o.Name, m.Name)
			}
		}
	}
	var runs []run
	requested := map[string]bool{}
	for _, n := range names {
		if requested[n] {
			return nil, fmt.Errorf("experiments: method %q requested twice", n)
		}
		requested[n] = true
	}
	for _, n := range names {
		mi := slices.IndexFunc(all, func(m Method) bool {
			return slices.ContainsFunc(m.outputs(), func(o Output) bool { return o.Name == n })
		})
		if mi < 0 {
			return nil, fmt.Errorf("experiments: unknown method %q (built-in: %s)", n, strings.Join(AllMethods, ", "))
		}
		if slices.ContainsFunc(runs, func(r run) bool { return r.method.Name == all[mi].Name }) {
			continue
		}
		m := &all[mi]
		r := run{method: m}
		for _, o := range m.outputs() {
			if requested[o.Name] {
				r.outputs = append(r.outputs, o)
			}
		}
		runs = append(runs, r)
	}
	return runs, nil
}
