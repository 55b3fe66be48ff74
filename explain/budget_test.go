package explain_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// settledFields are the JSON fields of a feature that each step decides,
// by the step its Undecided names: what a stopped run must report as the
// full run does (all of them when nothing is undecided).
var settledFields = map[string][]string{
	"overall": nil,
	"window":  {"tested", "important", "score", "p_value", "p_adjusted"},
	"window ordering": {"tested", "important", "score", "p_value", "p_adjusted", "ordering_p_value", "ordering_p_adjusted",
		"ordering_important"},
}

// features decodes an explanation's features as JSON objects.
func features(t *testing.T, ex *tempora.Explanation) []map[string]any {
	t.Helper()
	b, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Features []map[string]any `json:"features"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Features
}

// checkSettled checks a run stopped by a budget against the full run:
// every decision it reports is the full run's, its undecided features
// claim nothing (not important, no cells), and it is marked as stopped.
// It returns the number of undecided features.
func checkSettled(t *testing.T, name string, got, full *tempora.Explanation) int {
	t.Helper()
	if got.Accounting.StoppedBy != explain.BudgetCalls || !got.Accounting.Incomplete {
		t.Fatalf("%s: accounting %+v, want stopped by %s", name, got.Accounting, explain.BudgetCalls)
	}
	if !strings.Contains(strings.Join(got.Warnings, "\n"), "undecided") {
		t.Errorf("%s: no warning of the stop in %q", name, got.Warnings)
	}
	gf, ff := features(t, got), features(t, full)
	undecided := 0
	for j := range gf {
		step, _ := gf[j]["undecided"].(string)
		g, f := gf[j], ff[j]
		row := func(e *tempora.Explanation) []float64 { return e.Cells[j*e.L : (j+1)*e.L] }
		switch step {
		case "":
			if !reflect.DeepEqual(g, f) || !reflect.DeepEqual(row(got), row(full)) {
				t.Errorf("%s: feature %d decided as\n%v\nnot as the full run\n%v", name, j, g, f)
			}
			continue
		case "overall", "window":
			if slicesAny(row(got)) {
				t.Errorf("%s: feature %d is undecided at %s but has cells %v", name, j, step, row(got))
			}
		case "window ordering":
			if !reflect.DeepEqual(row(got), row(full)) {
				t.Errorf("%s: feature %d's cells %v, the full run's %v", name, j, row(got), row(full))
			}
		default:
			t.Fatalf("%s: feature %d undecided at %q", name, j, step)
		}
		undecided++
		if step == "overall" && g["important"] == true {
			t.Errorf("%s: feature %d undecided yet important", name, j)
		}
		for _, k := range settledFields[step] {
			if !reflect.DeepEqual(g[k], f[k]) {
				t.Errorf("%s: feature %d (undecided at %s) has %s %v, the full run %v", name, j, step, k, g[k], f[k])
			}
		}
	}
	return undecided
}

func slicesAny(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return true
		}
	}
	return false
}

// TestMaxCalls runs TIME with budgets of model calls from a few calls to
// the full run's: a run the budget stops makes at most that many calls,
// says so, and every decision it reports is the full run's; a budget of
// the full run's calls changes nothing. Between them the budgets stop the
// run in every step (features, windows, window orderings).
func TestMaxCalls(t *testing.T) {
	data, f := benchProblem(80)
	cfg := explain.TIME{Seed: 3, Workers: 2}
	full, err := cfg.Explain(context.Background(), f, data)
	if err != nil {
		t.Fatal(err)
	}
	n := full.Accounting.ModelCalls
	steps := map[string]bool{}
	for _, frac := range []float64{0, 0.02, 0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99} {
		c := cfg
		c.MaxCalls = max(1, int64(frac*float64(n)))
		got, err := c.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatalf("max calls %d: %v", c.MaxCalls, err)
		}
		if got.Accounting.ModelCalls > c.MaxCalls {
			t.Errorf("max calls %d: made %d", c.MaxCalls, got.Accounting.ModelCalls)
		}
		u := checkSettled(t, "max calls "+strconv.FormatInt(c.MaxCalls, 10), got, full)
		t.Logf("max calls %d of %d: made %d, %d features undecided", c.MaxCalls, n, got.Accounting.ModelCalls, u)
		for _, fr := range got.Features {
			steps[fr.Undecided] = true
		}
	}
	for _, step := range []string{"overall", "window", "window ordering"} {
		if !steps[step] {
			t.Errorf("no budget stopped the run at step %q (steps seen %v)", step, steps)
		}
	}
	c := cfg
	c.MaxCalls = n
	got, err := c.Explain(context.Background(), f, data)
	if err != nil || got.Accounting.StoppedBy != "" || got.Accounting.Incomplete || !reflect.DeepEqual(features(t, got), features(t, full)) {
		t.Errorf("a budget of the full run's %d calls: %v, %+v", n, err, got.Accounting)
	}
}

// TestMaxTime checks the time budget: a model that takes 20 ms a call
// under a budget of 100 ms is stopped after a few calls, marked so.
func TestMaxTime(t *testing.T) {
	data, f := benchProblem(40)
	slow := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		time.Sleep(20 * time.Millisecond)
		return f(dst, x)
	})
	began := time.Now()
	got, err := explain.TIME{Seed: 3, Workers: 2, MaxTime: 100 * time.Millisecond}.Explain(context.Background(), slow, data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Accounting.StoppedBy != explain.BudgetTime || !got.Accounting.Incomplete || got.Features[0].Undecided != "overall" {
		t.Errorf("accounting %+v, feature 0 undecided %q", got.Accounting, got.Features[0].Undecided)
	}
	// Each worker starts no call after the deadline.
	if el := time.Since(began); el > 2*time.Second || got.Accounting.ModelCalls > 40 {
		t.Errorf("took %v and %d calls", el, got.Accounting.ModelCalls)
	}
	var be *explain.BudgetError
	if _, err := (explain.TIME{MaxCalls: -1}).Explain(context.Background(), f, data); err == nil || errors.As(err, &be) {
		t.Errorf("a negative budget: %v", err)
	}
}
