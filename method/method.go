package method

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tempora-dev/tempora"
)

// Method is an explanation method: its name, its parameters and how to
// build its explainer. See the package documentation.
type Method struct {
	// Name is the canonical name, used in records, tables and help texts;
	// commands match it case-insensitively. It starts with a letter and
	// holds letters, digits, '-', '_' and '.'.
	Name string
	// Doc is a one-line description for help texts.
	Doc string
	// Params are the method's parameters, in the order help texts list
	// them. Their names are flags of "tempora explain" and axes of the grid
	// suite. A method made From another has no parameters of its own: it
	// takes those of From.
	Params []Param
	// New returns the explainer for one explanation. It must return an
	// error, not panic, for parameter values it cannot use. The explainer
	// must give the same explanation for any c.Workers. A method made From
	// another has no New.
	New func(c Config) (tempora.Explainer, error)
	// Mode is how the benchmark selects features and cells from the
	// explanation's cell scores (docs/decisions.md, decision 14); the zero
	// value is TopN, the rule of every baseline.
	Mode Mode
	// Tests reports that the method's explanations carry per-feature test
	// outcomes: Important, p-values, windows and ordering flags, as TIME's
	// do. "tempora explain" then prints those columns and compares the
	// important features with the ground truth, and the benchmark adds the
	// ordering, window-ordering and average-window metrics. A method that
	// only scores (Tests false) is compared by its top-scoring features.
	Tests bool
	// Local reports that the method gives per-instance attributions: New
	// returns a LocalExplainer (Explainer checks it). "tempora explain
	// -attributions" writes them and the benchmark scores them against
	// each instance's truth; a method without Local has only its global
	// cell scores. A method made From another is never Local.
	Local bool
	// From, if non-nil, is the method whose explainer this one reuses: the
	// benchmark runs From once and records both (with the same runtime),
	// and "tempora explain" runs From. From must not itself be made From
	// another method.
	From *Method
	// Derive, if non-nil, turns From's explanation into this method's; ex
	// is the explainer From.New returned (which may hold more of the run's
	// results than the explanation). It must not modify e. Nil means this
	// method's explanation is From's, scored with its own Mode.
	Derive func(ex tempora.Explainer, e *tempora.Explanation) (*tempora.Explanation, error)
}

// Config is what a method's constructor receives.
type Config struct {
	// Seed is the seed of every random stream of the explanation, derived
	// by the caller (the benchmark derives one per problem and method).
	Seed uint64
	// Workers is the number of goroutines the explainer may use; zero means
	// GOMAXPROCS (see Workers). Results must not depend on it.
	Workers int
	// Data is the dataset the explainer will be given, for parameters that
	// depend on it (TIME's hierarchy file names features). The constructor
	// must not modify it.
	Data *tempora.Dataset
	// Values holds the value of every parameter of the method.
	Values Values
	// Estimates, if not nil, receives the run's estimates of its cost
	// from a method that makes them during the run (TIME; see
	// tempora.RunEstimate); others ignore it.
	Estimates func(tempora.RunEstimate)
}

// Source returns the method whose explainer runs for m: m.From, or m
// itself.
func (m *Method) Source() *Method {
	if m.From != nil {
		return m.From
	}
	return m
}

// Values returns the values of m's parameters (those of m.Source()): for
// each parameter, the text in given under its name, parsed and checked
// against its type and range, or else its default at the chosen scale.
// A name in given that is not a parameter of m is an error.
func (m *Method) Values(given map[string]string, quick bool) (Values, error) {
	return newValues(m.Name, m.Source().Params, given, quick)
}

// Explainer returns the explainer of one explanation by m with c: New's
// explainer, or for a method made From another, From's explainer followed
// by Derive, its explanation named m.Name.
func (m *Method) Explainer(c Config) (tempora.Explainer, error) {
	src := m.Source()
	if src.New == nil {
		return nil, fmt.Errorf("method: %s has no constructor", src.Name)
	}
	ex, err := src.New(c)
	if err != nil {
		return nil, fmt.Errorf("method: %s: %w", m.Name, err)
	}
	if ex == nil {
		return nil, fmt.Errorf("method: %s: the constructor returned no explainer", m.Name)
	}
	if m.From == nil {
		return ex, m.checkLocal(ex)
	}
	return derived{m: m, ex: ex}, nil
}

// derived runs a method's From explainer and derives its explanation.
type derived struct {
	m  *Method
	ex tempora.Explainer
}

func (d derived) Explain(ctx context.Context, model tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	e, err := d.ex.Explain(ctx, model, data)
	if err != nil {
		return nil, err
	}
	return d.m.derive(d.ex, e)
}

// derive returns m's explanation from its source's explanation e (made by
// ex), named m.Name, with e's accounting, alignment and data summary:
// Derive may build a fresh explanation (PERM-f's does), and all are facts
// of the one run.
func (m *Method) derive(ex tempora.Explainer, e *tempora.Explanation) (*tempora.Explanation, error) {
	out := e
	if m.Derive != nil {
		var err error
		if out, err = m.Derive(ex, e); err != nil {
			return nil, fmt.Errorf("method: %s: %w", m.Name, err)
		}
		if out == nil {
			return nil, fmt.Errorf("method: %s: Derive returned no explanation", m.Name)
		}
	}
	c := *out
	c.Method = m.Name
	c.Accounting = e.Accounting
	c.Alignment, c.Data = e.Alignment, e.Data
	return &c, nil
}

// Derived returns the explanation of m made from the explanation e that
// m.Source()'s explainer ex returned: e itself for m.Source(), otherwise
// Derive's result (or e when Derive is nil), with e's accounting, alignment
// and data summary; either way named m.Name (a copy is renamed, e is not
// modified).
// The benchmark calls it for each method sharing a run.
func (m *Method) Derived(ex tempora.Explainer, e *tempora.Explanation) (*tempora.Explanation, error) {
	if m.From == nil {
		if e.Method == m.Name {
			return e, nil
		}
		c := *e
		c.Method = m.Name
		return &c, nil
	}
	return m.derive(ex, e)
}

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]*$`)

// CheckName returns an error unless name is a valid method name: a letter,
// then letters, digits, '-', '_' and '.'.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("method: bad method name %q (want a letter, then letters, digits, '-', '_' or '.')", name)
	}
	return nil
}

// Check returns an error if m is not a usable method: a bad or missing
// name, a missing constructor, bad parameters, or a From that is itself
// derived.
func (m *Method) Check() error {
	if err := CheckName(m.Name); err != nil {
		return err
	}
	if strings.ContainsAny(m.Doc, "\n") {
		return fmt.Errorf("method: %s: Doc must be one line", m.Name)
	}
	if m.Mode != TopN && m.Mode != AllNonZero {
		return fmt.Errorf("method: %s: invalid Mode %d", m.Name, int(m.Mode))
	}
	if m.From != nil {
		if m.From.From != nil {
			return fmt.Errorf("method: %s is made from %s, which is itself made from %s", m.Name, m.From.Name, m.From.From.Name)
		}
		if m.New != nil || len(m.Params) > 0 {
			return fmt.Errorf("method: %s is made from %s, so it takes %s's constructor and parameters", m.Name, m.From.Name, m.From.Name)
		}
		if m.Local {
			return fmt.Errorf("method: %s is made from %s and cannot be Local (its explanation is derived; the attributions would be %s's)", m.Name, m.From.Name, m.From.Name)
		}
		return nil
	}
	if m.Derive != nil {
		return fmt.Errorf("method: %s has Derive but no From", m.Name)
	}
	if m.New == nil {
		return fmt.Errorf("method: %s has no constructor (New)", m.Name)
	}
	seen := map[string]bool{}
	for _, p := range m.Params {
		if err := p.check(); err != nil {
			return fmt.Errorf("method: %s: %w", m.Name, err)
		}
		if seen[p.Name] {
			return fmt.Errorf("method: %s: two parameters named %q", m.Name, p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

// Table is a validated list of methods with distinct names (compared
// case-insensitively). The zero value is an empty table.
type Table struct {
	methods []*Method
}

// NewTable returns the table of ms, in order. It returns an error if a
// method fails Check, if two names differ only in case, if a method is
// made From a method that is not in the table, or if two methods declare
// parameters of the same name with different types (a parameter name is
// one flag of "tempora explain" and one grid axis).
func NewTable(ms ...Method) (*Table, error) {
	t := &Table{}
	for i := range ms {
		m := ms[i]
		if err := m.Check(); err != nil {
			return nil, err
		}
		if o, err := t.Lookup(m.Name); err == nil {
			return nil, fmt.Errorf("method: two methods named %q and %q (names are compared without case)", o.Name, m.Name)
		}
		t.methods = append(t.methods, &m)
	}
	for _, m := range t.methods {
		if m.From == nil {
			continue
		}
		f, err := t.Lookup(m.From.Name)
		if err != nil || f.Name != m.From.Name {
			return nil, fmt.Errorf("method: %s is made from %s, which is not in the table", m.Name, m.From.Name)
		}
		m.From = f
	}
	kinds := map[string]*Method{}
	for _, m := range t.methods {
		for _, p := range m.Params {
			if o, ok := kinds[p.Name]; ok {
				op := o.Param(p.Name)
				if op.Kind() != p.Kind() {
					return nil, fmt.Errorf("method: parameter %s is %s in %s but %s in %s", p.Name, op.Kind(), o.Name, p.Kind(), m.Name)
				}
				continue
			}
			kinds[p.Name] = m
		}
	}
	return t, nil
}

// Methods returns the table's methods in order. The pointers are the
// table's own; callers must not modify the methods.
func (t *Table) Methods() []*Method { return slices.Clone(t.methods) }

// Names returns the canonical names in order.
func (t *Table) Names() []string {
	names := make([]string, len(t.methods))
	for i, m := range t.methods {
		names[i] = m.Name
	}
	return names
}

// LocalNames returns the names of the methods with per-instance
// attributions (Method.Local), in order.
func (t *Table) LocalNames() []string {
	var names []string
	for _, m := range t.methods {
		if m.Local {
			names = append(names, m.Name)
		}
	}
	return names
}

// Lookup returns the method whose name equals name without regard to case.
func (t *Table) Lookup(name string) (*Method, error) {
	for _, m := range t.methods {
		if strings.EqualFold(m.Name, name) {
			return m, nil
		}
	}
	return nil, fmt.Errorf("method: unknown method %q (have %s)", name, strings.Join(t.Names(), ", "))
}

// Params returns every parameter of the table, each name once (the first
// declaration), in order of first appearance, with the methods that take
// it (directly or through From) in table order.
func (t *Table) Params() []TableParam {
	var out []TableParam
	for _, m := range t.methods {
		for _, p := range m.Source().Params {
			i := slices.IndexFunc(out, func(tp TableParam) bool { return tp.Name == p.Name })
			if i < 0 {
				out = append(out, TableParam{Param: p})
				i = len(out) - 1
			}
			out[i].Methods = append(out[i].Methods, m.Name)
		}
	}
	return out
}

// TableParam is a parameter name of a table and the methods that take it.
type TableParam struct {
	Param
	Methods []string
}

// Param returns m's parameter (of m.Source()) of the given name, or nil.
func (m *Method) Param(name string) *Param {
	ps := m.Source().Params
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}
