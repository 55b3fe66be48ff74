package experiments

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/builtins"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/record/report"
)

// ProblemSpec describes a synthetic problem (see synth.Config). Noise is
// "auto" or a non-negative number.
type ProblemSpec struct {
	Instances, Features, Timesteps int
	FractionRelevant               float64
	Task                           tempora.Task
	Noise                          string
	WindowIndependent              bool
	// Aggregator, if not empty, is every feature's aggregator ("max",
	// "average", …; see synth.Config.Aggregator).
	Aggregator string
	// World is the problem's world (world.go; nil: synth.Generate's),
	// which reads the fields above as its documentation says.
	World World
	// MissingRate, LengthSpread, Alignment ("start" or "end"),
	// Mechanism ("mcar" or "mnar") and FullWindows make synth.Generate's
	// world irregular (synth.Irregular) when any is set
	// (suite_irregular.go).
	MissingRate, LengthSpread float64
	Alignment, Mechanism      string
	FullWindows               bool
}

// Setting is one experimental setting of a suite: the problem synthesised
// for it, how many of its instances are analysed, and the method
// parameters that the setting fixes.
type Setting struct {
	// Params name the setting in records ("suite/k=v/…"); empty for a
	// suite's single default setting.
	Params []record.Param
	// Problem is the problem synthesised (once per model).
	Problem ProblemSpec
	// Head is the number of leading instances analysed; zero means all.
	Head int
	// Method holds the values of method parameters that the setting fixes
	// (grid axes such as gamma=0.95): every method of the run with a
	// parameter of that name gets the value; the others ignore it.
	Method []record.Param
	// MethodDefaults holds method parameter values that the suite sets
	// in place of the parameters' own defaults (the paper suites' fixed-P
	// tests: sequential=false). Methods without such a parameter ignore
	// it, and Method overrides it.
	MethodDefaults []record.Param
	// Quick is set at the quick scale, where methods use their parameters'
	// quick-scale defaults (method.Param.Quick).
	Quick bool
	// Local adds the per-instance metrics (instanceScores) to the records
	// of every method: a global method's cell scores count as every
	// instance's attributions. Without it only methods with per-instance
	// attributions (attribute) get them.
	Local bool
	// Held runs the methods that take held data (resident.Explainer:
	// TIME, PERM) with the problem's held-data capability (the synthetic
	// model's, synth.Model.Held), so that a draw costs the terms it
	// changes, not the whole model: the results are the same bit for bit,
	// only the runtime differs. Set only where no runtime is compared
	// across methods (the test-size sweeps; docs/decisions.md, decision
	// 28).
	Held bool
	// Refusals records a method that refuses the problem's missing values
	// (method.IncompleteError) as refused
	// (record.RefusedWarning) instead of stopping the run
	// (suite_irregular.go).
	Refusals bool

	// problemKey names the problem among the suite's settings: settings
	// with equal keys analyse the same problems (testsize-* share one
	// problem per model across instance counts).
	problemKey string
	// view presents the problem to the setting's methods (nil: as
	// generated; world.go).
	view view
}

// Key returns the setting's parameters as "k=v/k=v" ("" when none).
func (s *Setting) Key() string { return paramKey(s.Params) }

func paramKey(ps []record.Param) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Key + "=" + p.Value
	}
	return strings.Join(parts, "/")
}

// Suite is a named experiment: its settings, the number of models per
// setting and the methods it runs by default, at paper and quick scale.
type Suite struct {
	// Name is the suite's name in records and on the command line.
	Name string
	// Doc is a one-line description.
	Doc string
	// Models and QuickModels are the default numbers of models (problems)
	// per setting at the two scales.
	Models, QuickModels int
	// Methods are the default methods' canonical names.
	Methods []string
	// Time and QuickTime are the expected wall times of a run with the
	// default models and methods, at paper and quick scale, on the
	// two-core development machine; empty when they depend on the run
	// (grid). A suite that costs.json measures takes them from there
	// (measured, cost.go); the others state them here. Help texts and
	// README.md are generated from them.
	Time, QuickTime string
	// Report is what the suite's report shows beyond what every suite
	// gets: the paper's tables its settings fill and figures of its own
	// (package results draws it; "tempora report" takes it from here).
	Report report.Suite
	// Paper says that make paper and make paper-quick run the suite (the
	// Makefile's SUITES).
	Paper bool
	// settings returns the settings at one scale; grid is the -grid spec.
	settings func(quick bool, grid string) ([]Setting, error)
}

// Settings returns the suite's settings at the given scale; grid is the
// sweep specification of the grid suite and must be empty otherwise.
func (s *Suite) Settings(quick bool, grid string) ([]Setting, error) {
	if s.Name != "grid" && grid != "" {
		return nil, fmt.Errorf("experiments: suite %s takes no grid (got %q)", s.Name, grid)
	}
	return s.settings(quick, grid)
}

// paperMethods are the methods of the paper's Tables 1 and S1, the default
// of the baseline-comparison suites.
var paperMethods = []string{"TIME", "TIME-n", "LIME", "SAGE", "SAGE-m", "SAGE-z", "PERM", "PERM-f"}

// Paper scale of the baseline comparison (the paper's Section 5 and
// supplement S3).
var (
	table1Problem  = ProblemSpec{Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5, Task: tempora.Classification, Noise: "auto"}
	tableS2Problem = ProblemSpec{Instances: 1000, Features: 30, Timesteps: 20, FractionRelevant: 0.33, Task: tempora.Classification, Noise: "auto"}
)

// Quick scale: chosen so that each paper suite runs in under a minute at
// quick scale on two cores; each suite's QuickTime states its expected
// time.
const (
	quickTableInstances = 200
	quickTestsizeMax    = 1600
)

// testsizeCounts are the analysed instance counts of the test-set-size
// sweeps (the paper's Figure 4).
var testsizeCounts = []int{100, 200, 400, 800, 1600, 3200, 6400}

// Suites lists the named suites.
var Suites = []*Suite{
	measured(&Suite{
		Name: "table1", Doc: "baseline comparison, paper Tables 1 and S1 (1000×10×20, 5 relevant, classification)",
		Models: 100, QuickModels: 3, Methods: paperMethods,
		// Time and QuickTime: measured (costs.json).
		Report: report.Suite{PaperTables: []string{"table1", "table-s1"}}, Paper: true,
		settings: func(quick bool, _ string) ([]Setting, error) { return tableSettings(table1Problem, quick), nil },
	}),
	measured(&Suite{
		Name: "table-s2", Doc: "baseline comparison with 30 features, paper Table S2 (1000×30×20, 10 relevant, classification)",
		Models: 100, QuickModels: 2, Methods: paperMethods,
		// Time: measured (costs.json; LIME and SAGE in part).
		QuickTime: "about 40 s",
		Report:    report.Suite{PaperTables: []string{"table-s2"}}, Paper: true,
		settings: func(quick bool, _ string) ([]Setting, error) { return tableSettings(tableS2Problem, quick), nil },
	}),
	measured(&Suite{
		Name: "testsize-regression", Doc: "TIME against test-set size, paper Fig. 4 (regression; 30 features, 50 timesteps, 10 relevant; the model predicts from held data)",
		Models: 100, QuickModels: 3, Methods: []string{"TIME"},
		// Time and QuickTime: measured (costs.json).
		Paper:    true,
		settings: func(quick bool, _ string) ([]Setting, error) { return testsizeSettings(tempora.Regression, quick), nil },
	}),
	measured(&Suite{
		Name: "testsize-classification", Doc: "TIME against test-set size, paper Fig. S1 (classification; 30 features, 50 timesteps, 10 relevant; the model predicts from held data)",
		Models: 100, QuickModels: 3, Methods: []string{"TIME"},
		// Time and QuickTime: measured (costs.json).
		Paper: true,
		settings: func(quick bool, _ string) ([]Setting, error) {
			return testsizeSettings(tempora.Classification, quick), nil
		},
	}),
	measured(correlatedSuite),
	{
		Name: "grid", Doc: "generic sweep over synth and explainer parameters (-grid 'noise=0,0.5;gamma=0.95,0.99') around the Table 1 setting",
		Models: 20, QuickModels: 2, Methods: []string{"TIME", "TIME-n"},
		settings: gridSettings,
	},
	localSuite,
	windowsSuite,
	irregularSuite,
	outputsSuite,
}

// LookupSuite returns the named suite.
func LookupSuite(name string) (*Suite, error) {
	for _, s := range Suites {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(Suites))
	for i, s := range Suites {
		names[i] = s.Name
	}
	return nil, fmt.Errorf("experiments: unknown suite %q (have %s)", name, strings.Join(names, ", "))
}

// paperTests sets the paper's configuration of TIME (explain.PaperTIME:
// fixed-P tests, the paper's window rule and one window; PERM takes the
// tests), as method parameters (builtins.PaperParams), in the suites that
// reproduce the paper's tables and figures, so that their tables stay the
// paper's; the grid suite and "tempora explain" use TIME's defaults
// (docs/decisions.md, section TIME).
func paperTests() []record.Param {
	var ps []record.Param
	for k, v := range builtins.PaperParams() {
		ps = append(ps, record.Param{Key: k, Value: v})
	}
	slices.SortFunc(ps, func(a, b record.Param) int { return strings.Compare(a.Key, b.Key) })
	return ps
}

func tableSettings(p ProblemSpec, quick bool) []Setting {
	s := Setting{Params: []record.Param{}, Problem: p, Quick: quick, MethodDefaults: paperTests()}
	if quick {
		s.Problem.Instances = quickTableInstances
		s.Params = []record.Param{{Key: "instances", Value: strconv.Itoa(quickTableInstances)}}
	}
	s.problemKey = s.Key()
	return []Setting{s}
}

func testsizeSettings(task tempora.Task, quick bool) []Setting {
	p := ProblemSpec{Instances: 6400, Features: 30, Timesteps: 50, FractionRelevant: 0.33, Task: task, Noise: "auto"}
	if quick {
		p.Instances = quickTestsizeMax
	}
	var ss []Setting
	for _, n := range testsizeCounts {
		if n > p.Instances {
			break
		}
		ss = append(ss, Setting{
			Params:  []record.Param{{Key: "instances", Value: strconv.Itoa(n)}},
			Problem: p, Head: n, Quick: quick, MethodDefaults: paperTests(), Held: true,
			// Synthesise and calibrate once per model on the largest
			// count, then analyse prefixes (docs/decisions.md,
			// decision 10).
			problemKey: "max=" + strconv.Itoa(p.Instances),
		})
	}
	return ss
}
