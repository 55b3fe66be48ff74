package method_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

func TestParamParse(t *testing.T) {
	for _, c := range []struct {
		p    method.Param
		in   string
		want any // nil: an error
	}{
		{method.Param{Name: "n", Default: 1, Range: "[1, inf)"}, "5", 5},
		{method.Param{Name: "n", Default: 1, Range: "[1, inf)"}, " 7 ", 7},
		{method.Param{Name: "n", Default: 1, Range: "[1, inf)"}, "0", nil},
		{method.Param{Name: "n", Default: 1, Range: "[1, inf)"}, "2.5", nil},
		{method.Param{Name: "a", Default: 0.1, Range: "(0, 1)"}, "0.5", 0.5},
		{method.Param{Name: "a", Default: 0.1, Range: "(0, 1)"}, "0", nil},
		{method.Param{Name: "a", Default: 0.1, Range: "(0, 1)"}, "1", nil},
		{method.Param{Name: "a", Default: 0.1, Range: "[0, 1]"}, "1", 1.0},
		{method.Param{Name: "a", Default: 0.1}, "NaN", nil},
		{method.Param{Name: "a", Default: 0.1}, "-1e300", -1e300},
		{method.Param{Name: "b", Default: true}, "false", false},
		{method.Param{Name: "b", Default: true}, "maybe", nil},
		{method.Param{Name: "d", Default: time.Duration(0), Range: "[0, inf)"}, "90s", 90 * time.Second},
		{method.Param{Name: "d", Default: time.Duration(0), Range: "[0, inf)"}, "-1s", nil},
		{method.Param{Name: "d", Default: time.Duration(0), Range: "[0, 60]"}, "2m", nil},
		{method.Param{Name: "s", Default: ""}, "a b", "a b"},
	} {
		got, err := c.p.Parse(c.in)
		switch {
		case c.want == nil && err == nil:
			t.Errorf("%s %q: no error (got %v)", c.p.Name, c.in, got)
		case c.want != nil && (err != nil || got != c.want):
			t.Errorf("%s %q = %v, %v; want %v", c.p.Name, c.in, got, err, c.want)
		case err != nil && !strings.Contains(err.Error(), c.p.Want()):
			t.Errorf("%s %q: error %q does not say %q", c.p.Name, c.in, err, c.p.Want())
		}
	}
	p := method.Param{Name: "n", Default: 1, Range: "[1, inf)"}
	if w := p.Want(); w != "an int in [1, inf)" {
		t.Errorf("Want = %q", w)
	}
}

var newNothing = func(method.Config) (tempora.Explainer, error) { return nil, errors.New("unused") }

func TestCheck(t *testing.T) {
	good := method.Method{Name: "ok", New: newNothing}
	for _, c := range []struct {
		m    method.Method
		want string
	}{
		{method.Method{Name: "", New: newNothing}, "bad method name"},
		{method.Method{Name: "a b", New: newNothing}, "bad method name"},
		{method.Method{Name: "1x", New: newNothing}, "bad method name"},
		{method.Method{Name: "x"}, "no constructor"},
		{method.Method{Name: "x", New: newNothing, Mode: 7}, "invalid Mode"},
		{method.Method{Name: "x", New: newNothing, Derive: func(tempora.Explainer, *tempora.Explanation) (*tempora.Explanation, error) { return nil, nil }}, "Derive but no From"},
		{method.Method{Name: "x", From: &good, New: newNothing}, "takes ok's constructor"},
		{method.Method{Name: "x", From: &method.Method{Name: "y", From: &good}}, "itself made from"},
		{method.Method{Name: "x", New: newNothing, Params: []method.Param{{Name: "Bad", Default: 1}}}, "bad parameter name"},
		{method.Method{Name: "x", New: newNothing, Params: []method.Param{{Name: "p", Default: uint(1)}}}, "is not an int"},
		{method.Method{Name: "x", New: newNothing, Params: []method.Param{{Name: "p", Default: 1, Quick: 1.5}}}, "quick default"},
		{method.Method{Name: "x", New: newNothing, Params: []method.Param{{Name: "p", Default: 0, Range: "[1, 2]"}}}, "outside [1, 2]"},
		{method.Method{Name: "x", New: newNothing, Params: []method.Param{{Name: "p", Default: 1, Range: "1..2"}}}, "not an interval"},
		{method.Method{Name: "x", New: newNothing, Params: []method.Param{{Name: "p", Default: "", Range: "[0, 1]"}}}, "has no range"},
		{method.Method{Name: "x", New: newNothing, Params: []method.Param{{Name: "p", Default: 1}, {Name: "p", Default: 2}}}, "two parameters"},
	} {
		err := c.m.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.m.Name, err, c.want)
		}
	}
	if err := good.Check(); err != nil {
		t.Error(err)
	}
}

func TestTable(t *testing.T) {
	base := method.Method{Name: "Base", New: newNothing, Params: []method.Param{{Name: "k", Default: 3, Range: "[1, inf)"}}}
	derived := method.Method{Name: "Base-n", From: &base}
	other := method.Method{Name: "other", New: newNothing, Params: []method.Param{{Name: "k", Default: 1}}}
	tb, err := method.NewTable(base, derived, other)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tb.Names(), ","); got != "Base,Base-n,other" {
		t.Errorf("names %s", got)
	}
	m, err := tb.Lookup("base-N")
	if err != nil || m.Name != "Base-n" || m.Source().Name != "Base" || m.Param("k") == nil {
		t.Errorf("Lookup(base-N) = %+v, %v", m, err)
	}
	if _, err := tb.Lookup("nope"); err == nil || !strings.Contains(err.Error(), "have Base, Base-n, other") {
		t.Errorf("unknown method: error %v", err)
	}
	ps := tb.Params()
	if len(ps) != 1 || ps[0].Name != "k" || strings.Join(ps[0].Methods, ",") != "Base,Base-n,other" {
		t.Errorf("Params = %+v", ps)
	}
	for _, bad := range [][]method.Method{
		{base, {Name: "BASE", New: newNothing}},
		{derived},
		{base, {Name: "x", New: newNothing, Params: []method.Param{{Name: "k", Default: 1.5}}}},
	} {
		if _, err := method.NewTable(bad...); err == nil {
			t.Errorf("NewTable(%v): no error", bad)
		}
	}
}

func TestValues(t *testing.T) {
	m := method.Method{Name: "m", New: newNothing, Params: []method.Param{
		{Name: "n", Default: 10, Quick: 2, Range: "[1, inf)"},
		{Name: "x", Default: 0.5},
		{Name: "on", Default: true},
		{Name: "d", Default: time.Second},
		{Name: "s", Default: ""},
	}}
	v, err := m.Values(map[string]string{"x": "0.25", "on": "false"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("n") != 2 || v.Float("x") != 0.25 || v.Bool("on") || v.Duration("d") != time.Second || v.String("s") != "" {
		t.Errorf("values %s", v.Describe())
	}
	if !v.Given("x") || v.Given("n") {
		t.Error("Given is wrong")
	}
	if got := v.Describe(); got != "n=2, x=0.25, on=false, d=1s" {
		t.Errorf("Describe = %q", got)
	}
	if v, _ := m.Values(nil, false); v.Int("n") != 10 {
		t.Errorf("paper-scale default n = %d", v.Int("n"))
	}
	for _, given := range []map[string]string{{"n": "0"}, {"zz": "1"}, {"d": "1"}} {
		if _, err := m.Values(given, false); err == nil {
			t.Errorf("Values(%v): no error", given)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Int of a float parameter did not panic")
		}
	}()
	v.Int("x")
}

// explainerFunc adapts a function to tempora.Explainer.
type explainerFunc func(ctx context.Context, m tempora.Model, d *tempora.Dataset) (*tempora.Explanation, error)

func (f explainerFunc) Explain(ctx context.Context, m tempora.Model, d *tempora.Dataset) (*tempora.Explanation, error) {
	return f(ctx, m, d)
}

// countCells is an explainer whose cell (j, t) is j + t, calling the model
// once per feature.
type countCells struct{ name string }

func (c countCells) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	e := tempora.NewExplanation(c.name, data)
	for j := range data.X.D {
		if err := m.Predict(make([]float64, data.X.M), data.X); err != nil {
			return nil, err
		}
		for tt := range data.X.L {
			e.Cells[j*data.X.L+tt] = float64(j + tt)
		}
	}
	method.FeatureScores(e)
	e.Accounting.ModelCalls = 999 // wrong; Measure replaces it
	return e, nil
}

func testData() (*tempora.Dataset, tempora.Model) {
	x := tempora.NewTensor(4, 3, 2)
	return &tempora.Dataset{X: x, Y: make([]float64, 4), Task: tempora.Regression},
		tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error { return nil })
}

func TestMeasureAndDerive(t *testing.T) {
	data, model := testData()
	base := method.Method{Name: "cc", New: func(method.Config) (tempora.Explainer, error) { return countCells{"cc"}, nil }}
	half := method.Method{Name: "cc-half", From: &base, Derive: func(ex tempora.Explainer, e *tempora.Explanation) (*tempora.Explanation, error) {
		if _, ok := ex.(countCells); !ok {
			return nil, fmt.Errorf("Derive got %T", ex)
		}
		d := *e
		d.Cells = make([]float64, len(e.Cells))
		for i, v := range e.Cells {
			d.Cells[i] = v / 2
		}
		return &d, nil
	}}
	ex, err := half.Explainer(method.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := method.Measure(context.Background(), ex, model, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Method != "cc-half" || e.Cell(2, 1) != 1.5 || e.Accounting.ModelCalls != 3 || e.Accounting.InstanceEvals != 12 || e.Accounting.Runtime <= 0 {
		t.Errorf("derived explanation %s, cell (2,1) %v, accounting %+v", e.Method, e.Cell(2, 1), e.Accounting)
	}
	// A method's own explanation is returned as is by Derived.
	src, _ := base.Explainer(method.Config{})
	e0, _ := src.Explain(context.Background(), model, data)
	if d, _ := base.Derived(src, e0); d != e0 {
		t.Error("Derived of a source method is not its explanation")
	}
}

// TestMeasureDataSummary: Measure gives every explanation its data's
// summary, whatever the explainer reported (none for complete data), and
// a derived method that builds a fresh explanation (as PERM-f does) keeps
// its run's.
func TestMeasureDataSummary(t *testing.T) {
	data, model := testData()
	bogus := &tempora.DataSummary{Lengths: []int{1}}
	liar := explainerFunc(func(ctx context.Context, m tempora.Model, d *tempora.Dataset) (*tempora.Explanation, error) {
		e, err := countCells{"cc"}.Explain(ctx, m, d)
		if err == nil {
			e.Data = bogus
		}
		return e, err
	})
	e, err := method.Measure(context.Background(), liar, model, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Data != nil {
		t.Errorf("complete data: summary %+v, want none", e.Data)
	}
	// Instance 3 ends a timestep early; feature 0 of instance 0 misses
	// its first value.
	data.X.Data[0] = math.NaN()
	for j := range data.X.D {
		data.X.Data[data.X.Index(3, j, 1)] = math.NaN()
	}
	obs, err := data.Observe(1)
	if err != nil {
		t.Fatal(err)
	}
	want := obs.Summary()
	if want == nil || !reflect.DeepEqual(want.Lengths, []int{2, 2, 2, 1}) {
		t.Fatalf("test data's summary %+v", want)
	}
	e, err = method.Measure(context.Background(), liar, model, data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e.Data, want) {
		t.Errorf("summary %+v, want %+v", e.Data, want)
	}
	base := method.Method{Name: "cc", New: func(method.Config) (tempora.Explainer, error) { return countCells{"cc"}, nil }}
	fresh := method.Method{Name: "cc-fresh", From: &base, Derive: func(_ tempora.Explainer, e *tempora.Explanation) (*tempora.Explanation, error) {
		return tempora.NewExplanation("x", &tempora.Dataset{X: &tempora.Tensor{D: e.D, L: e.L}}), nil
	}}
	d, err := fresh.Derived(countCells{"cc"}, e)
	if err != nil {
		t.Fatal(err)
	}
	if d.Data != e.Data {
		t.Errorf("derived explanation's summary %+v, want its run's %+v", d.Data, e.Data)
	}
}

// TestMeasureAlignment: Measure gives every explanation its data's
// alignment, also when the explainer builds it without the data (as PERM
// does), and a derived method that builds a fresh one keeps its run's.
func TestMeasureAlignment(t *testing.T) {
	data, model := testData()
	data.Alignment = tempora.AlignEnd
	blind := explainerFunc(func(ctx context.Context, m tempora.Model, d *tempora.Dataset) (*tempora.Explanation, error) {
		e := tempora.NewExplanation("blind", &tempora.Dataset{X: &tempora.Tensor{D: d.X.D, L: d.X.L}})
		method.FeatureScores(e)
		return e, nil
	})
	e, err := method.Measure(context.Background(), blind, model, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Alignment != tempora.AlignEnd {
		t.Errorf("alignment %v, want end", e.Alignment)
	}
	base := method.Method{Name: "blind", New: func(method.Config) (tempora.Explainer, error) { return blind, nil }}
	fresh := method.Method{Name: "blind-fresh", From: &base, Derive: func(_ tempora.Explainer, e *tempora.Explanation) (*tempora.Explanation, error) {
		return tempora.NewExplanation("x", &tempora.Dataset{X: &tempora.Tensor{D: e.D, L: e.L}}), nil
	}}
	d, err := fresh.Derived(blind, e)
	if err != nil {
		t.Fatal(err)
	}
	if d.Alignment != tempora.AlignEnd {
		t.Errorf("derived explanation's alignment %v, want its run's (end)", d.Alignment)
	}
}

func TestMeasureChecks(t *testing.T) {
	data, _ := testData()
	nan := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error { dst[0] = math.NaN(); return nil })
	if _, err := method.Measure(context.Background(), countCells{"cc"}, nan, data); err == nil || !strings.Contains(err.Error(), "predicted NaN") {
		t.Errorf("NaN prediction: error %v", err)
	}
	_, model := testData()
	for name, ex := range map[string]tempora.Explainer{
		"wrong shape": explainerFunc(func(ctx context.Context, m tempora.Model, d *tempora.Dataset) (*tempora.Explanation, error) {
			return &tempora.Explanation{D: 1, L: 1, Cells: []float64{0}}, nil
		}),
		"no features": explainerFunc(func(ctx context.Context, m tempora.Model, d *tempora.Dataset) (*tempora.Explanation, error) {
			return &tempora.Explanation{D: 3, L: 2, Cells: make([]float64, 6)}, nil
		}),
		"nil": explainerFunc(func(ctx context.Context, m tempora.Model, d *tempora.Dataset) (*tempora.Explanation, error) {
			return nil, nil
		}),
	} {
		if _, err := method.Measure(context.Background(), ex, model, data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParallel(t *testing.T) {
	var ran atomic.Int64
	err := method.Parallel(context.Background(), 4, 100, func(w, k int) error {
		ran.Add(1)
		if k == 37 || k == 80 {
			return fmt.Errorf("item %d", k)
		}
		return nil
	})
	if err == nil || err.Error() != "item 37" {
		t.Errorf("error %v, want that of the lowest failed item", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran.Store(0)
	err = method.Parallel(ctx, 2, 10, func(w, k int) error { ran.Add(1); return nil })
	if !errors.Is(err, context.Canceled) || ran.Load() != 0 {
		t.Errorf("cancelled: error %v, %d items ran", err, ran.Load())
	}
	if err := method.Parallel(context.Background(), 0, 0, func(w, k int) error { return errors.New("no") }); err != nil {
		t.Errorf("no items: %v", err)
	}
}

func TestFeatureScore(t *testing.T) {
	if got := method.FeatureScore([]float64{-0.3, 5e-11, 0.6, math.NaN(), 0, 1e-10}); math.Abs(got-(0.3+0.6+1e-10)/3) > 1e-16 {
		t.Errorf("FeatureScore = %v", got)
	}
	if got := method.FeatureScore([]float64{0, 1e-11}); got != 0 {
		t.Errorf("all-zero FeatureScore = %v", got)
	}
}

func TestMode(t *testing.T) {
	for _, m := range []method.Mode{method.TopN, method.AllNonZero} {
		if p, err := method.ParseMode(m.String()); err != nil || p != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, p, err)
		}
	}
	if _, err := method.ParseMode("best"); err == nil {
		t.Error("ParseMode(best): no error")
	}
}
