package explainertest_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explainertest"
	"github.com/tempora-dev/tempora/method"
)

// flaw is one way to break the contract.
type flaw int

const (
	none flaw = iota
	byWorkers
	wrongShape
	nanCell
	noFeatureScores
	ignoresCancel
	noValidation
	swallowsModelError
	miscounts
	wrongName
	leaks
	panics
)

// occlusion is a correct explainer (mean |prediction change| when a cell
// is set to 0, one model call per cell on parallel workers) with one
// optional flaw.
type occlusion struct {
	flaw    flaw
	workers int
}

func (o occlusion) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	if o.flaw != noValidation && o.flaw != panics {
		// A method for complete data refuses missing values with the
		// one refusal (method.RequireComplete).
		if err := method.RequireComplete("OCC", data, 2, "it occludes every cell"); err != nil {
			return nil, err
		}
	}
	if o.flaw == panics {
		for _, v := range data.X.Data {
			if math.IsNaN(v) {
				panic("NaN")
			}
		}
	}
	x := data.X
	base := make([]float64, x.M)
	if err := m.Predict(base, x); err != nil && o.flaw != swallowsModelError {
		return nil, err
	}
	name := "occ"
	if o.flaw == wrongName {
		name = "Occ"
	}
	e := tempora.NewExplanation(name, data)
	pctx := ctx
	if o.flaw == ignoresCancel {
		pctx = context.Background()
	}
	w := o.workers
	if o.flaw == leaks {
		// Keeps calling the model after Explain returns (once it has
		// returned, so that a loaded machine cannot run every call
		// before).
		returned := make(chan struct{})
		defer close(returned)
		go func() {
			<-returned
			for range 50 {
				m.Predict(make([]float64, x.M), x)
			}
		}()
	}
	err := method.Parallel(pctx, w, x.D*x.L, func(_, k int) error {
		c := x.Clone()
		j, t := k/x.L, k%x.L
		for i := range x.M {
			c.Set(i, j, t, 0)
		}
		pred := make([]float64, x.M)
		if err := m.Predict(pred, c); err != nil {
			if o.flaw == swallowsModelError {
				return nil
			}
			return err
		}
		var s float64
		for i := range pred {
			s += math.Abs(pred[i] - base[i])
		}
		e.Cells[k] = s / float64(x.M)
		if o.flaw == byWorkers {
			e.Cells[k] += float64(w) * 1e-9
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.flaw != noFeatureScores {
		method.FeatureScores(e)
	}
	switch o.flaw {
	case wrongShape:
		e.Cells = e.Cells[1:]
	case nanCell:
		e.Cells[0] = math.NaN()
	case miscounts:
		e.Accounting.ModelCalls = 1
	}
	return e, nil
}

func occMethod(f flaw) *method.Method {
	return &method.Method{
		Name: "occ",
		Params: []method.Param{
			{Name: "scale", Doc: "unused", Default: 1.0, Quick: 0.5, Range: "(0, inf)"},
		},
		New: func(c method.Config) (tempora.Explainer, error) {
			if c.Values.Float("scale") != 0.5 {
				panic("explainertest did not pass the quick-scale default")
			}
			return occlusion{flaw: f, workers: c.Workers}, nil
		},
	}
}

func TestCorrect(t *testing.T) {
	if err := explainertest.Test(occMethod(none), explainertest.Options{}); err != nil {
		t.Fatal(err)
	}
}

// TestFlaws checks that every flaw is reported, with a message naming it.
func TestFlaws(t *testing.T) {
	for _, c := range []struct {
		flaw flaw
		want string
	}{
		{byWorkers, "with 2 workers differs from the one with 1"},
		{wrongShape, "want 3 features × 5 timesteps"},
		{nanCell, "cell (0, 0) is NaN"},
		{noFeatureScores, "its cells give"},
		{ignoresCancel, "want an error wrapping context.Canceled"},
		{noValidation, "one target too few: no error"},
		{swallowsModelError, "a failing model: no error"},
		{miscounts, "reports 1 model calls"},
		{wrongName, `named "Occ", want the method's canonical name "occ"`},
		{leaks, "model calls after Explain returned"},
		{panics, "data with a missing value: panic: NaN"},
	} {
		err := explainertest.Test(occMethod(c.flaw), explainertest.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("flaw %d: error %v, want one containing %q", c.flaw, err, c.want)
		}
	}
}

func TestOptions(t *testing.T) {
	// Parameter values are given as text and checked.
	if err := explainertest.Test(occMethod(none), explainertest.Options{Params: map[string]string{"scale": "2"}}); err == nil ||
		!strings.Contains(err.Error(), "quick-scale default") {
		t.Errorf("scale 2: error %v, want the constructor's panic reported", err)
	}
	if err := explainertest.Test(occMethod(none), explainertest.Options{Params: map[string]string{"scale": "-1"}}); err == nil {
		t.Error("scale -1: no error")
	}
	if err := explainertest.Test(occMethod(none), explainertest.Options{Features: 1}); err == nil {
		t.Error("one feature: no error")
	}
}

func TestProblem(t *testing.T) {
	for _, task := range []tempora.Task{tempora.Regression, tempora.Classification} {
		data, model := explainertest.Problem(50, 4, 6, task, 3)
		if err := data.Validate(2); err != nil {
			t.Fatal(err)
		}
		pred := make([]float64, 50)
		if err := model.Predict(pred, data.X); err != nil {
			t.Fatal(err)
		}
		if err := tempora.CheckPredictions(task, pred); err != nil {
			t.Error(err)
		}
		// Feature 2 is irrelevant: changing it changes no prediction.
		x := data.X.Clone()
		for i := range x.M {
			for tt := range x.L {
				x.Set(i, 2, tt, 7)
			}
		}
		again := make([]float64, 50)
		model.Predict(again, x)
		for i := range pred {
			if again[i] != pred[i] {
				t.Fatalf("%v: feature 2 changes prediction %d", task, i)
			}
		}
	}
}
