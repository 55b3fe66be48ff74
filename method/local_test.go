package method_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// localCells is countCells with per-instance attributions: rows rows of
// the data's cells, each instance's cells its index plus the cell's
// global score, or the tensor bad when set.
type localCells struct {
	countCells
	rows int
	bad  *tempora.Tensor
}

func (c localCells) ExplainLocal(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, *tempora.Tensor, error) {
	e, err := c.Explain(ctx, m, data)
	if err != nil {
		return nil, nil, err
	}
	if c.bad != nil {
		return e, c.bad, nil
	}
	local := tempora.NewTensor(c.rows, data.X.D, data.X.L)
	p := data.X.D * data.X.L
	for i := range c.rows {
		for k := range p {
			local.Data[i*p+k] = float64(i) + e.Cells[k]
		}
	}
	return e, local, nil
}

// TestLocal checks the Local capability: Check refuses it on a method made
// From another, Explainer refuses a method whose Local and explainer
// disagree either way, the table names its local methods, and
// MeasureLocal returns the explanation (as Measure would) with its
// attributions, refusing attributions of the wrong shape or not finite.
func TestLocal(t *testing.T) {
	plain := method.Method{Name: "cc", New: func(method.Config) (tempora.Explainer, error) { return countCells{"cc"}, nil }}
	local := method.Method{Name: "lc", Local: true, New: func(method.Config) (tempora.Explainer, error) {
		return localCells{countCells: countCells{"lc"}, rows: 3}, nil
	}}
	derived := method.Method{Name: "lc-d", From: &local, Local: true}
	if err := derived.Check(); err == nil || !strings.Contains(err.Error(), "cannot be Local") {
		t.Errorf("Check of a Local method made From another: %v", err)
	}
	data, model := testData()
	c := method.Config{Data: data}
	if _, err := local.Explainer(c); err != nil {
		t.Errorf("a Local method with a LocalExplainer: %v", err)
	}
	liar := plain
	liar.Local = true
	if _, err := liar.Explainer(c); err == nil || !strings.Contains(err.Error(), "declares Local") {
		t.Errorf("Local without a LocalExplainer: %v", err)
	}
	silent := local
	silent.Local = false
	if _, err := silent.Explainer(c); err == nil || !strings.Contains(err.Error(), "does not declare it (set Method.Local)") {
		t.Errorf("a LocalExplainer without Local: %v", err)
	}
	table, err := method.NewTable(plain, local)
	if err != nil {
		t.Fatal(err)
	}
	if got := table.LocalNames(); len(got) != 1 || got[0] != "lc" {
		t.Errorf("LocalNames = %v, want [lc]", got)
	}

	ex := localCells{countCells: countCells{"lc"}, rows: 3}
	e, attr, err := method.MeasureLocal(context.Background(), ex, model, data)
	if err != nil {
		t.Fatal(err)
	}
	plainE, err := method.Measure(context.Background(), ex, model, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Accounting.ModelCalls != 3 || e.Accounting.ModelCalls != plainE.Accounting.ModelCalls || len(e.Cells) != len(plainE.Cells) {
		t.Errorf("MeasureLocal: %d model calls (Measure: %d), want 3, the same", e.Accounting.ModelCalls, plainE.Accounting.ModelCalls)
	}
	if attr.M != 3 || attr.At(2, 1, 1) != 2+e.Cells[3] {
		t.Errorf("MeasureLocal: attributions %d × %d × %d, (2, 1, 1) = %v", attr.M, attr.D, attr.L, attr.At(2, 1, 1))
	}
	if method.ExplainedOutputs(e, data) != 1 {
		t.Errorf("ExplainedOutputs of one output = %d", method.ExplainedOutputs(e, data))
	}

	nan := tempora.NewTensor(2, 3, 2)
	nan.Data[5] = math.NaN()
	for _, bad := range []struct {
		name string
		x    *tempora.Tensor
		want string
	}{
		{"too many instances", tempora.NewTensor(5, 3, 2), "5 × 3 × 2 attributions of 1 outputs for 4 × 3 × 2 data"},
		{"other cells", tempora.NewTensor(2, 2, 3), "2 × 2 × 3 attributions"},
		{"none", &tempora.Tensor{D: 3, L: 2}, "0 × 3 × 2 attributions"},
		{"NaN", nan, "attribution 5 is NaN"},
	} {
		_, _, err := method.MeasureLocal(context.Background(), localCells{countCells: countCells{"lc"}, bad: bad.x}, model, data)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error saying %q", bad.name, err, bad.want)
		}
	}
}
