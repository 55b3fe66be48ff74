package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora/record"
)

// z95 is the standard normal quantile of 0.975: the 95% confidence interval
// of a mean is mean ± z95·SD/√n (docs/decisions.md, decision 14).
const z95 = 1.96

// Summary describes a sample of values, one per model.
//
// The zero value is the summary of an empty sample: N is 0 and the
// statistics are meaningless (use N before reading them).
type Summary struct {
	// N is the number of values.
	N int
	// Mean is the arithmetic mean; NaN when N is 0.
	Mean float64
	// SD is the sample standard deviation (divisor N−1); NaN when N < 2.
	SD float64
	// Median is the middle value (the mean of the two middle values when N
	// is even); NaN when N is 0.
	Median float64
	// Min and Max are the extremes; NaN when N is 0.
	Min, Max float64
}

// Summarize returns the summary of xs. It does not modify xs.
func Summarize(xs []float64) Summary {
	nan := math.NaN()
	s := Summary{N: len(xs), Mean: nan, SD: nan, Median: nan, Min: nan, Max: nan}
	if len(xs) == 0 {
		return s
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	if n := len(sorted); n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	s.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		// Two-pass variance: the deviations are summed about the mean,
		// which is accurate for values far from zero (runtimes).
		var ss float64
		for _, x := range xs {
			d := x - s.Mean
			ss += d * d
		}
		s.SD = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}

// CI95 returns the normal-approximation 95% confidence interval of the mean,
// mean ± 1.96·SD/√N. Both bounds are NaN when N < 2.
func (s Summary) CI95() (lo, hi float64) {
	if s.N < 2 {
		return math.NaN(), math.NaN()
	}
	h := z95 * s.SD / math.Sqrt(float64(s.N))
	return s.Mean - h, s.Mean + h
}

// MetricSummary is the summary of one named metric.
type MetricSummary struct {
	Name string
	Summary
}

// Group aggregates the records of one method in one experimental setting
// (suite and params) over models.
type Group struct {
	// Suite, Params and Method identify the group.
	Suite  string
	Params []record.Param
	Method string
	// Models lists the model indices whose records were aggregated, in
	// increasing order.
	Models []int
	// Incomplete lists the model indices whose records were excluded because
	// the method stopped on its budget (record.Record.Incomplete), in
	// increasing order.
	Incomplete []int
	// Refused lists the model indices whose records are refusals (the
	// method refused the problem, record.Record.Refusal; they are among
	// Incomplete), and Refusal is the first one's message.
	Refused []int
	Refusal string
	// Metrics summarises every metric found in the aggregated records, in
	// the order in which the records list them. A metric missing from some
	// records has a smaller N.
	Metrics []MetricSummary
	// Runtime summarises the wall time in seconds; ModelCalls and
	// InstanceEvals the cost counters.
	Runtime, ModelCalls, InstanceEvals Summary
	// Warned counts the aggregated records that carry warnings.
	Warned int
}

// Metric returns the summary of the named metric.
func (g *Group) Metric(name string) (Summary, bool) {
	for _, m := range g.Metrics {
		if m.Name == name {
			return m.Summary, true
		}
	}
	return Summary{}, false
}

// Param returns the value of the named parameter of the group's setting.
func (g *Group) Param(key string) (string, bool) {
	for _, p := range g.Params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// Setting returns the group's params as "k=v,k=v", or "" when there are
// none.
func (g *Group) Setting() string { return settingString(g.Params) }

func settingString(ps []record.Param) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Key + "=" + p.Value
	}
	return strings.Join(parts, ",")
}

func compareMethods(a, b string) int {
	ia, ib := slices.Index(MethodOrder, a), slices.Index(MethodOrder, b)
	switch {
	case ia >= 0 && ib >= 0:
		return cmp.Compare(ia, ib)
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	}
	return strings.Compare(a, b)
}

// compareValues orders parameter values numerically when both are numbers
// (so that instances=200 comes before instances=1600) and lexically
// otherwise, numbers first.
func compareValues(a, b string) int {
	x, errx := strconv.ParseFloat(a, 64)
	y, erry := strconv.ParseFloat(b, 64)
	switch {
	case errx == nil && erry == nil:
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	case errx == nil:
		return -1
	case erry == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func compareParams(a, b []record.Param) int {
	for i := range min(len(a), len(b)) {
		if c := strings.Compare(a[i].Key, b[i].Key); c != 0 {
			return c
		}
		if c := compareValues(a[i].Value, b[i].Value); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// compareSettings orders (suite, params). It returns 0 only for identical
// settings.
func compareSettings(suiteA string, a []record.Param, suiteB string, b []record.Param) int {
	if c := strings.Compare(suiteA, suiteB); c != 0 {
		return c
	}
	return compareParams(a, b)
}

func compareGroupKeys(a, b *record.Record) int {
	if c := compareSettings(a.Suite, a.Params, b.Suite, b.Params); c != 0 {
		return c
	}
	return compareMethods(a.Method, b.Method)
}

// Aggregate groups records by (suite, params, method) and summarises each
// group over models. Groups are ordered by suite, then params (numeric
// values numerically), then method in MethodOrder; the result does not
// depend on the order of recs. Records marked Incomplete are left out of
// their group's statistics and listed in Group.Incomplete.
//
// Aggregate returns an error for a nil record, for two records of the same
// (suite, params, model, method), and for records of the same (suite,
// params, model) with different problem seeds: they were made on different
// problems (runs with different -seed), so their rows would not compare
// methods on the same problems.
func Aggregate(recs []*record.Record) ([]Group, error) {
	sorted := make([]*record.Record, 0, len(recs))
	for i, r := range recs {
		if r == nil {
			return nil, fmt.Errorf("results: record %d is nil", i)
		}
		sorted = append(sorted, r)
	}
	slices.SortStableFunc(sorted, func(a, b *record.Record) int {
		if c := compareGroupKeys(a, b); c != 0 {
			return c
		}
		return cmp.Compare(a.Model, b.Model)
	})
	for i := 1; i < len(sorted); i++ {
		if compareGroupKeys(sorted[i-1], sorted[i]) == 0 && sorted[i-1].Model == sorted[i].Model {
			return nil, fmt.Errorf("results: duplicate record %s", sorted[i].Key())
		}
	}
	type problem struct {
		setting string
		model   int
	}
	seeds := map[problem]*record.Record{} // lookup only; never iterated
	for _, r := range sorted {
		k := problem{r.Suite + "/" + settingString(r.Params), r.Model}
		if o, ok := seeds[k]; ok && o.Seed != r.Seed {
			return nil, fmt.Errorf("results: %s and %s were made on different problems (seeds %d and %d): are they from runs with different -seed?", o.Key(), r.Key(), o.Seed, r.Seed)
		}
		seeds[k] = r
	}
	var groups []Group
	for lo := 0; lo < len(sorted); {
		hi := lo + 1
		for hi < len(sorted) && compareGroupKeys(sorted[lo], sorted[hi]) == 0 {
			hi++
		}
		groups = append(groups, summarizeGroup(sorted[lo:hi]))
		lo = hi
	}
	return groups, nil
}

// summarizeGroup summarises records of one group sorted by model.
func summarizeGroup(recs []*record.Record) Group {
	first := recs[0]
	g := Group{Suite: first.Suite, Params: slices.Clone(first.Params), Method: first.Method}
	var names []string
	values := make(map[string][]float64)
	var runtime, calls, evals []float64
	for _, r := range recs {
		if r.Incomplete {
			g.Incomplete = append(g.Incomplete, r.Model)
			if msg, ok := r.Refusal(); ok {
				if g.Refused == nil {
					g.Refusal = msg
				}
				g.Refused = append(g.Refused, r.Model)
			}
			continue
		}
		g.Models = append(g.Models, r.Model)
		for _, m := range r.Metrics {
			if _, ok := values[m.Name]; !ok {
				names = append(names, m.Name)
			}
			values[m.Name] = append(values[m.Name], m.Value)
		}
		runtime = append(runtime, r.RuntimeSeconds)
		calls = append(calls, float64(r.ModelCalls))
		evals = append(evals, float64(r.InstanceEvals))
		if len(r.Warnings) > 0 {
			g.Warned++
		}
	}
	for _, name := range names {
		g.Metrics = append(g.Metrics, MetricSummary{Name: name, Summary: Summarize(values[name])})
	}
	g.Runtime = Summarize(runtime)
	g.ModelCalls = Summarize(calls)
	g.InstanceEvals = Summarize(evals)
	return g
}

// settings returns the distinct (suite, params) settings of groups, in the
// order of groups, as the first group of each setting.
func settings(groups []Group) []Group {
	var out []Group
	for _, g := range groups {
		if len(out) > 0 {
			last := out[len(out)-1]
			if last.Suite == g.Suite && slices.Equal(last.Params, g.Params) {
				continue
			}
		}
		out = append(out, g)
	}
	return out
}

// selectGroups returns the groups of one setting.
func selectGroups(groups []Group, suite string, params []record.Param) []Group {
	var out []Group
	for _, g := range groups {
		if g.Suite == suite && slices.Equal(g.Params, params) {
			out = append(out, g)
		}
	}
	return out
}

func findMethod(groups []Group, method string) *Group {
	for i := range groups {
		if groups[i].Method == method {
			return &groups[i]
		}
	}
	return nil
}
