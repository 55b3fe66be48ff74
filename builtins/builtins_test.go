package builtins

import (
	"reflect"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/explainertest"
	"github.com/tempora-dev/tempora/method"
)

func table(t *testing.T) *method.Table {
	t.Helper()
	tab, err := method.NewTable(Methods()...)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// contractParams keep the contract runs of the built-ins small: SAGE on the
// 15 cells of explainertest's problems would otherwise sample up to its
// quick cap of QuickSAGEMaxPermutations permutations, three worker counts
// and two tasks over.
var contractParams = map[string]map[string]string{
	"SAGE":   {"max-permutations": "512"},
	"SAGE-m": {"max-permutations": "512"},
	"SAGE-z": {"max-permutations": "512"},
	"LIME":   {"samples": "200"},
	// OCC, SAGE, PERM and TimeSHAP take missing values (docs/decisions.md,
	// decision 21), so explainertest's data holding NaN is refused by the
	// contract's model, which cannot take NaN, when it reaches it: TimeSHAP
	// must explain the NaN's instance (the middle one) for it to.
	"TimeSHAP": {"instances-explained": "0"},
}

// TestContract runs explainertest on every built-in method.
func TestContract(t *testing.T) {
	for _, m := range table(t).Methods() {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			if err := explainertest.Test(m, explainertest.Options{Params: contractParams[m.Name]}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestQuickDefaults checks the quick-scale defaults: smaller budgets for
// LIME and SAGE proper, none for SAGE-m.
func TestQuickDefaults(t *testing.T) {
	tab := table(t)
	for _, tc := range []struct {
		method, param string
		paper, quick  int
	}{
		{"LIME", "samples", baselines.DefaultLIMESamples, QuickLIMESamples},
		{"SAGE", "max-permutations", baselines.SAGEMaxPermutations, QuickSAGEMaxPermutations},
		{"SAGE", "background", 0, QuickSAGEBackground},
		{"SAGE-m", "max-permutations", baselines.SAGEMaxPermutations, baselines.SAGEMaxPermutations},
	} {
		m, err := tab.Lookup(tc.method)
		if err != nil {
			t.Fatal(err)
		}
		for _, quick := range []bool{false, true} {
			v, err := m.Values(nil, quick)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.paper
			if quick {
				want = tc.quick
			}
			if got := v.Int(tc.param); got != want {
				t.Errorf("%s -%s at quick=%v: %d, want %d", tc.method, tc.param, quick, got, want)
			}
		}
	}
}

// zeroMeans is, for an explainer field whose zero value stands for a
// default constant, that constant, as the explainers document it.
var zeroMeans = map[string]any{
	"explain.TIME.Alpha":         explain.DefaultAlpha,
	"explain.TIME.Gamma":         explain.DefaultGamma,
	"explain.TIME.MaxDraws":      int64(explain.DefaultMaxDraws),
	"explain.TIME.Windows":       explain.DefaultWindows,
	"explain.TIME.Tests":         explain.BesagCliffordTests,
	"explain.TIME.LengthRule":    explain.LengthRule(explain.Strata{}),
	"baselines.PERM.Tests":       explain.BesagCliffordTests,
	"baselines.LIME.Samples":     baselines.DefaultLIMESamples,
	"baselines.PERM.Alpha":       baselines.DefaultPERMAlpha,
	"baselines.Occlusion.Width":  baselines.DefaultOcclusionWidth,
	"baselines.Occlusion.Stride": baselines.DefaultOcclusionStride,
	// The zero Baseline is each method's own default.
	"baselines.Occlusion.Baseline": baselines.ZeroBaseline,
	"baselines.TimeSHAP.Baseline":  baselines.EventBaseline,
	"baselines.TimeSHAP.Tolerance": baselines.DefaultTimeSHAPTolerance,
}

// deliberate are the table defaults that differ from the explainer's zero
// value on purpose, with the value the table must give.
var deliberate = map[string]any{
	// The zero value of baselines.SAGE has no cap; the table caps every
	// SAGE method (docs/decisions.md, decision 12).
	"baselines.SAGE.MaxPermutations": baselines.SAGEMaxPermutations,
}

// TestDefaultsMatchZeroValues checks, for every built-in method, that the
// explainer its table defaults build is configured as the explainer's zero
// value (with the same seed and workers), field by field: a field may
// differ only where the zero value stands for a default constant (then the
// table must give that constant) or where the difference is deliberate.
// So a default has one owner, the explainer's package, and a table default
// that drifts from it fails here.
func TestDefaultsMatchZeroValues(t *testing.T) {
	for _, m := range table(t).Methods() {
		if m.From != nil {
			continue
		}
		v, err := m.Values(nil, false)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := m.New(method.Config{Seed: 7, Workers: 3, Values: v})
		if err != nil {
			t.Fatal(err)
		}
		if pr, ok := ex.(*permRun); ok {
			ex = pr.cfg
		}
		compareWithZero(t, m.Name, ex)
	}
}

func compareWithZero(t *testing.T, name string, ex tempora.Explainer) {
	t.Helper()
	got := reflect.ValueOf(ex)
	typ := got.Type()
	zero := reflect.New(typ).Elem()
	if f := zero.FieldByName("Seed"); f.IsValid() {
		f.SetUint(7)
	}
	zero.FieldByName("Workers").SetInt(3)
	if f := zero.FieldByName("Imputer"); f.IsValid() {
		f.Set(got.FieldByName("Imputer"))
	}
	for i := range typ.NumField() {
		field := typ.Field(i)
		if !field.IsExported() {
			continue
		}
		key := typ.String() + "." + field.Name
		g, z := got.Field(i).Interface(), zero.Field(i).Interface()
		if reflect.DeepEqual(g, z) {
			continue
		}
		want, ok := zeroMeans[key]
		if !ok {
			want, ok = deliberate[key]
		}
		switch {
		case !ok:
			t.Errorf("%s: the table's default sets %s to %v; its zero value %v is the explainer's default", name, key, g, z)
		case !reflect.DeepEqual(g, want):
			t.Errorf("%s: the table's default sets %s to %v, want %v", name, key, g, want)
		}
	}
}

// TestPeerVariants runs explainertest on OCC and TimeSHAP away from their
// defaults: other widths, strides, levels and baselines.
func TestPeerVariants(t *testing.T) {
	tab := table(t)
	for _, tc := range []struct {
		method string
		params map[string]string
	}{
		{"OCC", map[string]string{"occlusion-width": "3", "occlusion-stride": "2", "baseline": "mean"}},
		{"TimeSHAP", map[string]string{"level": "event", "coalitions": "40", "baseline": "zero", "instances-explained": "0"}},
		{"TimeSHAP", map[string]string{"level": "feature", "recent": "2", "instances-explained": "0"}},
	} {
		m, err := tab.Lookup(tc.method)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(tc.method, func(t *testing.T) {
			t.Parallel()
			if err := explainertest.Test(m, explainertest.Options{Params: tc.params}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestPaperParams checks that the paper's parameters configure TIME as
// explain.PaperTIME does, and PERM with the paper's fixed tests.
func TestPaperParams(t *testing.T) {
	tab := table(t)
	for _, name := range []string{"TIME", "PERM"} {
		m, err := tab.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		given := map[string]string{}
		for k, v := range PaperParams() {
			if m.Param(k) != nil {
				given[k] = v
			}
		}
		v, err := m.Values(given, false)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := m.New(method.Config{Values: v})
		if err != nil {
			t.Fatal(err)
		}
		paper := explain.PaperTIME()
		switch c := ex.(type) {
		case explain.TIME:
			if c.Tests != paper.Tests || c.WindowRule != paper.WindowRule || c.Windows != paper.Windows {
				t.Errorf("TIME from the paper's parameters: tests %v, window rule %v, windows %d; explain.PaperTIME has %v, %v, %d",
					c.Tests, c.WindowRule, c.Windows, paper.Tests, paper.WindowRule, paper.Windows)
			}
		case *permRun:
			if c.cfg.Tests != paper.Tests {
				t.Errorf("PERM from the paper's parameters: tests %v, want %v", c.cfg.Tests, paper.Tests)
			}
		default:
			t.Fatalf("%s builds a %T", name, ex)
		}
	}
}
