package builtins

import (
	"context"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explainertest"
	"github.com/tempora-dev/tempora/method"
)

// TestEstimateEvals checks every built-in method's cost estimate against
// the instance evaluations of a real run: equal when the estimate is exact,
// no less when it is a bound. The parameter settings include TIME with a
// hierarchy-free fixed run (every test at its cap) and the configurations
// whose estimates differ in form (OCC with a stride, TimeSHAP at each level).
func TestEstimateEvals(t *testing.T) {
	tab := table(t)
	// Methods with an estimate; SAGE has none (its budget is a time or a
	// convergence criterion).
	want := map[string]bool{"TIME": false, "TIME-n": false, "LIME": true, "PERM": false, "PERM-f": false, "OCC": true, "TimeSHAP": false}
	cases := []struct {
		method string
		params map[string]string
	}{
		{"TIME", nil},
		{"TIME", map[string]string{"sequential": "false", "permutations": "20"}},
		{"TIME-n", nil},
		{"LIME", map[string]string{"samples": "50", "instances-explained": "7"}},
		{"PERM", nil},
		{"PERM", map[string]string{"sequential": "false", "permutations": "10"}},
		{"PERM-f", nil},
		{"OCC", nil},
		{"OCC", map[string]string{"occlusion-width": "3", "occlusion-stride": "2"}},
		{"TimeSHAP", nil},
		{"TimeSHAP", map[string]string{"level": "event"}},
		{"TimeSHAP", map[string]string{"level": "feature", "recent": "2"}},
		{"SAGE-m", map[string]string{"max-permutations": "64"}},
	}
	for _, task := range []tempora.Task{tempora.Regression, tempora.Classification} {
		data, model := explainertest.Problem(60, 4, 6, task, 3)
		for _, tc := range cases {
			m, err := tab.Lookup(tc.method)
			if err != nil {
				t.Fatal(err)
			}
			vals, err := m.Values(tc.params, false)
			if err != nil {
				t.Fatal(err)
			}
			ex, err := m.Explainer(method.Config{Seed: 1, Workers: 2, Data: data, Values: vals})
			if err != nil {
				t.Fatal(err)
			}
			est, exact, ok := method.EstimateEvals(ex, data)
			e, err := method.Measure(context.Background(), ex, model, data)
			if err != nil {
				t.Fatalf("%s %v: %v", tc.method, tc.params, err)
			}
			got := e.Accounting.InstanceEvals
			wantExact, has := want[tc.method]
			switch {
			case !has:
				if ok {
					t.Errorf("%s: estimate %d, want none", tc.method, est)
				}
			case !ok:
				t.Errorf("%s %v: no estimate", tc.method, tc.params)
			case exact != wantExact:
				t.Errorf("%s %v: exact %v, want %v", tc.method, tc.params, exact, wantExact)
			case exact && est != got:
				t.Errorf("%s %v %v: estimate %d, the run made %d", tc.method, tc.params, task, est, got)
			case !exact && est < got:
				t.Errorf("%s %v %v: bound %d below the %d evaluations of the run", tc.method, tc.params, task, est, got)
			}
		}
	}
}
