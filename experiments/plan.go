package experiments

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

// Item is one unit of work: one explainer run on one problem, yielding one
// record per method it serves (TIME and TIME-n share a run, as do PERM
// and PERM-f).
type Item struct {
	// Index is the item's position in the suite's enumeration.
	Index int
	// Setting and Model identify the problem.
	Setting *Setting
	Model   int
	// Method is the canonical name of the method whose explainer runs
	// (method.Method.Source) and Outputs the methods recorded from its
	// explanation, in the order requested.
	Method  string
	Outputs []string
	// ProblemSeed seeds the problem; ExplainerSeed seeds the explainer.
	ProblemSeed, ExplainerSeed uint64

	run *run
}

// run is one explainer run serving the requested methods made from it.
type run struct {
	source  *method.Method
	outputs []*method.Method
}

// keys returns the record keys of the item's outputs.
func (it *Item) keys(suite string) []string {
	keys := make([]string, len(it.Outputs))
	for i, o := range it.Outputs {
		r := record.Record{Suite: suite, Params: it.Setting.Params, Model: it.Model, Method: o}
		keys[i] = r.Key()
	}
	return keys
}

// plan is a resolved run configuration.
type plan struct {
	suite    *Suite
	settings []Setting
	models   int
	methods  []string // canonical names
	runs     []run
	seed     uint64
}

func newPlan(o *Options) (*plan, error) {
	s, err := LookupSuite(o.Suite)
	if err != nil {
		return nil, err
	}
	if o.Models < 0 {
		return nil, fmt.Errorf("experiments: Models is %d, want at least 1 (or 0 for the suite's default)", o.Models)
	}
	p := &plan{suite: s, models: o.Models, seed: o.Seed}
	if p.models == 0 {
		p.models = s.Models
		if o.Quick {
			p.models = s.QuickModels
		}
	}
	if p.seed == 0 {
		p.seed = DefaultSeed
	}
	if p.settings, err = s.Settings(o.Quick, o.Grid); err != nil {
		return nil, err
	}
	table, err := Table(o.Extra...)
	if err != nil {
		return nil, err
	}
	names := o.Methods
	if names == nil {
		names = slices.Clone(s.Methods)
		for _, m := range o.Extra {
			names = append(names, m.Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("experiments: no methods to run")
	}
	if p.runs, p.methods, err = resolveRuns(table, names); err != nil {
		return nil, err
	}
	if err := checkMethodParams(p.settings, p.runs); err != nil {
		return nil, err
	}
	return p, nil
}

// resolveRuns maps method names to the canonical names and to runs: one per
// source method, ordered by the first method requested from it, each
// serving its requested methods in request order.
func resolveRuns(t *method.Table, names []string) ([]run, []string, error) {
	var runs []run
	var canon []string
	for _, n := range names {
		m, err := t.Lookup(strings.TrimSpace(n))
		if err != nil {
			return nil, nil, fmt.Errorf("experiments: %w", err)
		}
		if slices.Contains(canon, m.Name) {
			return nil, nil, fmt.Errorf("experiments: method %s requested twice", m.Name)
		}
		canon = append(canon, m.Name)
		src := m.Source()
		i := slices.IndexFunc(runs, func(r run) bool { return r.source == src })
		if i < 0 {
			runs = append(runs, run{source: src})
			i = len(runs) - 1
		}
		runs[i].outputs = append(runs[i].outputs, m)
	}
	return runs, canon, nil
}

// checkMethodParams checks the method-parameter values of every setting:
// each must name a parameter of at least one method run, with a value that
// every such method accepts.
func checkMethodParams(settings []Setting, runs []run) error {
	for _, s := range settings {
		for _, p := range s.Method {
			found := false
			for _, r := range runs {
				mp := r.source.Param(p.Key)
				if mp == nil {
					continue
				}
				found = true
				if _, err := mp.Parse(p.Value); err != nil {
					return fmt.Errorf("experiments: grid: %s: %w", r.source.Name, err)
				}
			}
			if !found {
				var names []string
				for _, r := range runs {
					names = append(names, r.source.Name)
				}
				return fmt.Errorf("experiments: grid parameter %q is neither a problem parameter nor a parameter of the methods run (%s)", p.Key, strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// values returns the parameter values of source in setting s.
func (s *Setting) values(source *method.Method) (method.Values, error) {
	given := map[string]string{}
	for _, p := range slices.Concat(s.MethodDefaults, s.Method) {
		if source.Param(p.Key) != nil {
			given[p.Key] = p.Value
		}
	}
	return source.Values(given, s.Quick)
}

// items enumerates the plan's work in a fixed order: settings grouped by
// the problem they analyse (in order of first appearance), then models,
// then the settings of the group, then runs. Consecutive items thus share
// problems, and the order never depends on the shard or the worker count.
func (p *plan) items() []Item {
	var groups []string
	for _, s := range p.settings {
		if !slices.Contains(groups, s.problemKey) {
			groups = append(groups, s.problemKey)
		}
	}
	var items []Item
	for _, g := range groups {
		for k := range p.models {
			ks := strconv.Itoa(k)
			pseed := problemSeed(p.seed, p.suite.Name, g, k)
			for si := range p.settings {
				s := &p.settings[si]
				if s.problemKey != g {
					continue
				}
				for ri := range p.runs {
					r := &p.runs[ri]
					it := Item{
						Index: len(items), Setting: s, Model: k, Method: r.source.Name,
						ProblemSeed:   pseed,
						ExplainerSeed: tempora.DeriveSeed(p.seed, p.suite.Name, "explain", s.Key(), "model", ks, "method", r.source.Name),
						run:           r,
					}
					for _, o := range r.outputs {
						it.Outputs = append(it.Outputs, o.Name)
					}
					items = append(items, it)
				}
			}
		}
	}
	return items
}

// Items returns every item of the suite that o describes (all shards), in
// the order that defines shards.
func Items(o Options) ([]Item, error) {
	p, err := newPlan(&o)
	if err != nil {
		return nil, err
	}
	return p.items(), nil
}
