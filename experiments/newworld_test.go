package experiments

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/record/report"
	"github.com/tempora-dev/tempora/synth"
)

// A new synthetic world is one suite declaration: its world (problems and
// truth), its axes, its methods and its report. This test-only world
// (tinyWorld, tinySuite) is declared here and nowhere else: registering it
// is all a run needs, and "tempora report" draws its declared figure from
// the declaration (package results draws declarations of suites it does
// not know: results' TestWriteReportDeclared).

// tinyWorld is a world of small regression problems with Relevant of
// their 3 features relevant (synth.Generate's), its truth synth's.
type tinyWorld struct{ Relevant int }

func (tinyWorld) Name() string { return "tiny" }

func (w tinyWorld) Generate(_ context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
	p, err := synth.Generate(synth.Config{Instances: spec.Instances, Features: 3, Timesteps: 6,
		FractionRelevant: float64(w.Relevant) / 3, Task: tempora.Regression, Noise: synth.AutoNoise}, seed)
	if err != nil {
		return nil, err
	}
	return &Problem{Data: p.Data, Model: p.Model, Truth: truthOf(p.Truth)}, nil
}

// tinySuite sweeps the relevant features with TIME and PERM and draws
// their power and FDR against it.
var tinySuite = &Suite{
	Name: "tiny", Doc: "test-only world", Models: 2, QuickModels: 2, Methods: []string{"TIME", "PERM"},
	Report: report.Suite{Sweeps: []report.Sweep{{
		Name: "tiny-relevant", Heading: "tiny: power and FDR versus the relevant features", X: "relevant",
		Lines:   []report.Line{{Label: "TIME ({windows} windows)", Method: "TIME"}, {Label: "PERM", Method: "PERM", Where: []record.Param{{Key: "windows", Value: "1"}}}},
		Columns: []report.Column{{Title: "features", Power: "feature-power", FDR: "feature-fdr"}},
	}}},
	settings: func(quick bool, _ string) ([]Setting, error) {
		return sweep(Setting{Problem: ProblemSpec{World: tinyWorld{}, Instances: 80}, Quick: quick}, []axis{
			worldAxis("relevant", []string{"1", "2"}, func(w *tinyWorld, v string) (err error) { w.Relevant, err = strconv.Atoi(v); return err }),
			methodAxis("windows", "windows", "1", "2"),
		})
	},
}

// TestNewWorld registers the test-only world's suite, runs it, and checks
// that its records are what its report declares: every line and column of
// its figure selects records.
func TestNewWorld(t *testing.T) {
	defer func(old []*Suite) { Suites = old }(Suites)
	Suites = append(slices.Clone(Suites), tinySuite)
	out := t.TempDir()
	if err := Run(context.Background(), Options{Suite: "tiny", Quick: true, Out: out}); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2*2*2*2 {
		t.Errorf("%d records, want 2 relevant × 2 windows × 2 models × 2 methods", len(recs))
	}
	for _, r := range recs {
		if r.Truth == nil || len(r.Truth.Relevant) != 3 {
			t.Errorf("%s: truth %+v", r.Key(), r.Truth)
		}
	}
	if err := checkDeclared(tinySuite.Report, recs); err != nil {
		t.Error(err)
	}
}

// TestSuiteReports checks every suite's report declaration against the
// suite: each parameter it selects by is one of the suite's settings'
// (with a value they take) and each method one of the suite's methods.
// The records' metrics are checked by the suites' own runs (TestNewWorld;
// the committed reports of make NAME-reference).
func TestSuiteReports(t *testing.T) {
	for _, s := range Suites {
		if err := s.Report.Check(); err != nil {
			t.Errorf("suite %s: %v", s.Name, err)
		}
		grid := ""
		if s.Name == "grid" {
			grid = "noise=0,1"
		}
		ss, err := s.Settings(true, grid)
		if err != nil {
			t.Fatal(err)
		}
		var recs []*record.Record
		for _, st := range ss {
			for _, m := range s.Methods {
				recs = append(recs, &record.Record{Suite: s.Name, Params: st.Params, Method: m})
			}
		}
		if err := checkDeclared(s.Report, recs); err != nil {
			t.Errorf("suite %s: %v", s.Name, err)
		}
	}
}

// checkDeclared returns an error unless every line, column, panel and bar
// of decl selects some of recs (by method and parameters), with the swept
// parameter and the placeholders' parameters, and, when recs have metrics,
// with the metrics the figure draws.
func checkDeclared(decl report.Suite, recs []*record.Record) error {
	has := func(r *record.Record, where []record.Param) bool {
		for _, p := range where {
			if !slices.Contains(r.Params, p) {
				return false
			}
		}
		return true
	}
	selects := func(what string, method string, keys []string, metrics []string, where ...[]record.Param) error {
		for _, r := range recs {
			if method != "" && r.Method != method || !has(r, slices.Concat(where...)) {
				continue
			}
			ok := true
			for _, k := range keys {
				ok = ok && slices.ContainsFunc(r.Params, func(p record.Param) bool { return p.Key == k })
			}
			for _, m := range metrics {
				_, found := r.Get(m)
				ok = ok && (found || len(r.Metrics) == 0)
			}
			if ok {
				return nil
			}
		}
		return fmt.Errorf("%s selects no record", what)
	}
	for _, f := range decl.Sweeps {
		for _, l := range f.Lines {
			keys := []string{f.X}
			for _, part := range strings.Split(l.Label, "{")[1:] {
				k, _, _ := strings.Cut(part, "}")
				keys = append(keys, k)
			}
			if err := selects(fmt.Sprintf("figure %s, line %q", f.Name, l.Label), l.Method, keys, nil, f.Where, l.Where); err != nil {
				return err
			}
			for _, c := range f.Columns {
				if err := selects(fmt.Sprintf("figure %s, line %q, column %q", f.Name, l.Label, c.Title), l.Method, keys, []string{c.Power, c.FDR}, f.Where, l.Where, c.Where); err != nil {
					return err
				}
			}
		}
	}
	for _, f := range decl.Bars {
		for _, p := range f.Panels {
			for _, b := range f.Bars {
				var ms []string
				for _, m := range f.Metrics {
					ms = append(ms, m.Name)
				}
				if err := selects(fmt.Sprintf("figure %s, panel %q, bar %q", f.Name, p.Title, b.Label), b.Method, nil, ms, f.Where, p.Where, b.Where); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
