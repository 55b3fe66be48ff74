package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// toy scores cell (j, t) by weight·(j+1) when on, 0 otherwise; it calls
// the model once.
type toy struct {
	on     bool
	weight float64
}

func (c toy) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	if err := m.Predict(make([]float64, data.X.M), data.X); err != nil {
		return nil, err
	}
	e := tempora.NewExplanation("toy", data)
	for k := range e.Cells {
		if c.on {
			e.Cells[k] = c.weight * float64(k/data.X.L+1)
		}
	}
	method.FeatureScores(e)
	return e, nil
}

var toyMethod = method.Method{
	Name: "toy", Doc: "a toy",
	Params: []method.Param{
		{Name: "on", Doc: "score at all", Default: true},
		{Name: "weight", Doc: "weight of the scores", Default: 1.0, Range: "(0, 10]"},
	},
	New: func(c method.Config) (tempora.Explainer, error) {
		return toy{on: c.Values.Bool("on"), weight: c.Values.Float("weight")}, nil
	},
}

// TestExtraMethod runs the command line with an extra method, as cli.Main
// does: its parameters are flags of explain (a bool flag with or without a
// value), grid axes of run, and the help lists it.
func TestExtraMethod(t *testing.T) {
	p, err := newProgram([]method.Method{toyMethod})
	if err != nil {
		t.Fatal(err)
	}
	dir := smallProblem(t)
	runP := func(args ...string) (string, error) {
		var out, errOut strings.Builder
		err := p.runContext(context.Background(), args, &out, &errOut)
		return out.String(), err
	}
	out, err := runP("explain", "-problem", dir, "-method", "TOY", "-weight", "2")
	if err != nil || !strings.Contains(out, "settings: on=true, weight=2, seed 0") || !strings.Contains(out, "1     3        8") {
		t.Errorf("explain -method TOY -weight 2: %v\n%s", err, out)
	}
	out, err = runP("explain", "-problem", dir, "-method", "toy", "-on=false")
	if err != nil || !strings.Contains(out, "settings: on=false, weight=1") {
		t.Errorf("explain -on=false: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "-problem", dir, "-method", "toy", "-weight", "11"}, "-weight 11: want a float in (0, 10]"},
		{[]string{"explain", "-problem", dir, "-method", "time", "-on"}, "-on does not apply to -method TIME (only to toy)"},
		{[]string{"run", "-suite", "grid", "-grid", "weight=0", "-methods", "toy", "-out", t.TempDir()}, "weight"},
		{[]string{"run", "-suite", "grid", "-grid", "on=maybe", "-methods", "toy", "-out", t.TempDir()}, "on"},
	} {
		_, err := runP(c.args...)
		if exitStatus(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a usage error containing %q", c.args, err, c.want)
		}
	}
	out, err = runP("run", "-suite", "grid", "-grid", "instances=30;features=3;timesteps=4;on=true,false", "-models", "1", "-methods", "toy", "-out", t.TempDir())
	if err != nil || !strings.Contains(out, "bench.txt") {
		t.Errorf("grid over a bool parameter: %v (%q)", err, out)
	}
	help, _ := runP("explain", "-h")
	if !strings.Contains(help, "toy       a toy") {
		t.Errorf("explain -h does not list toy:\n%s", help)
	}
	help, _ = runP("methods", "TOY")
	if !strings.Contains(help, "  -on bool (default true)\n        score at all\n") {
		t.Errorf("methods TOY does not describe -on:\n%s", help)
	}
	// Bad extra methods are refused when the program is made.
	for _, bad := range []method.Method{
		{Name: "sage", New: toyMethod.New},
		{Name: "x", New: toyMethod.New, Params: []method.Param{{Name: "workers", Default: 1}}},
		{Name: "y", New: toyMethod.New, Params: []method.Param{{Name: "timesteps", Default: 1}}},
	} {
		if _, err := newProgram([]method.Method{bad}); err == nil {
			t.Errorf("extra method %s: no error", bad.Name)
		}
	}
}
