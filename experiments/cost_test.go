package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tempora-dev/tempora/baselines"
)

// costMeter is an experiments.Progress that charges the process's CPU time
// between an item's Start and Done to its method run, and the time between
// items (synthesising problems) to the problems.
type costMeter struct {
	t               *testing.T
	last, problem   float64
	start           float64
	methods         map[string]float64
	suite           string
	items, finished int
}

func (m *costMeter) Moved(string)      {}
func (m *costMeter) Begin(todo, _ int) { m.items, m.last = todo, cpuSeconds(m.t) }
func (m *costMeter) Start(it *Item)    { m.start = cpuSeconds(m.t); m.problem += m.start - m.last }
func (m *costMeter) Done(it *Item) {
	m.last = cpuSeconds(m.t)
	m.methods[it.Method] += m.last - m.start
	m.finished++
	m.t.Logf("%s: %d/%d %s model=%d %s: %.2f s CPU", m.suite, m.finished, m.items, it.Setting.Key(), it.Model, it.Method, m.last-m.start)
}

// quickRepeats is the number of times a quick-scale measurement runs the
// suite: each figure is the least of its runs, since contention on a
// loaded machine only ever adds CPU time (two single quick runs of table1
// measured 4.9 and 6.5 s per model).
const quickRepeats = 3

// measureSuite runs the suite's default methods (but those in skip) at
// the scale on models models and returns the CPU seconds per model, each
// the least of quickRepeats runs at quick scale.
func measureSuite(t *testing.T, s *Suite, quick bool, models int, skip []string) suiteCost {
	repeats := 1
	if quick {
		repeats = quickRepeats
	}
	var best suiteCost
	for k := range repeats {
		c := measureSuiteOnce(t, s, quick, models, skip)
		if k == 0 {
			best = c
			continue
		}
		best.Problem = min(best.Problem, c.Problem)
		for m, v := range c.Methods {
			best.Methods[m] = min(best.Methods[m], v)
		}
	}
	return best
}

// measureSuiteOnce is one run of measureSuite.
func measureSuiteOnce(t *testing.T, s *Suite, quick bool, models int, skip []string) suiteCost {
	runs, err := costMethods(s)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, name := range s.Methods {
		if !slices.Contains(skip, name) {
			methods = append(methods, name)
		}
	}
	m := &costMeter{t: t, suite: s.Name, methods: map[string]float64{}}
	o := Options{Suite: s.Name, Quick: quick, Models: models, Methods: methods, Out: t.TempDir(), Progress: m}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	c := suiteCost{Models: models, Problem: round3(m.problem / float64(models)), Methods: map[string]float64{}}
	for _, r := range runs {
		if v, ok := m.methods[r]; ok {
			c.Methods[r] = round3(v / float64(models))
		}
	}
	return c
}

func round3(v float64) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// partialCosts measures, on model 0 of Table S2 at paper scale, the two
// runs too long to run in full on a loaded machine, and returns their
// projected CPU seconds per model with how each was obtained: LIME on its
// first limeInstances instances, scaled to all (each instance is a
// surrogate fit of the same size, so its cost is linear in them); SAGE on
// sagePerms permutations, its CPU per permutation times the permutations
// its convergence ratio projects (the ratio falls as 1/√permutations, so
// n·(ratio/threshold)² are needed), at most the cap.
func partialCosts(t *testing.T, s *Suite) (map[string]float64, map[string]string) {
	const limeInstances, sagePerms = 100, 1024
	settings, err := s.Settings(false, "")
	if err != nil {
		t.Fatal(err)
	}
	st := settings[0]
	prob, err := synthesise(context.Background(), st.Problem, problemSeed(DefaultSeed, s.Name, st.problemKey, 0))
	if err != nil {
		t.Fatal(err)
	}
	m := prob.Data.X.M
	c0 := cpuSeconds(t)
	if _, err := (baselines.LIME{Seed: 1, Instances: limeInstances}).Explain(context.Background(), prob.Model, prob.Data); err != nil {
		t.Fatal(err)
	}
	lime := (cpuSeconds(t) - c0) * float64(m) / limeInstances
	c0 = cpuSeconds(t)
	r, err := baselines.SAGE{Seed: 1, MaxPermutations: sagePerms}.Estimate(context.Background(), prob.Model, prob.Data)
	if err != nil {
		t.Fatal(err)
	}
	perPerm := (cpuSeconds(t) - c0) / float64(r.Permutations)
	need := float64(r.Permutations) * math.Pow(r.Ratio/baselines.DefaultSAGEThreshold, 2)
	if r.Converged {
		need = float64(r.Permutations)
	}
	need = math.Min(need, baselines.SAGEMaxPermutations)
	t.Logf("%s: LIME %.1f s CPU per model (from %d instances); SAGE %.1f ms CPU per permutation, ratio %.3f after %d, projected %.0f permutations: %.0f s CPU",
		s.Name, lime, limeInstances, 1000*perPerm, r.Ratio, r.Permutations, need, perPerm*need)
	return map[string]float64{"LIME": round3(lime), "SAGE": round3(perPerm * need)}, map[string]string{
		"LIME": fmt.Sprintf("measured on the first %d of %d instances, scaled to all", limeInstances, m),
		"SAGE": fmt.Sprintf("%.1f ms CPU per permutation measured over %d permutations, times %.0f permutations projected from the convergence ratio %.3f (ratio ∝ 1/√permutations)",
			1000*perPerm, r.Permutations, need, r.Ratio),
	}
}

// TestSuiteCosts measures the CPU cost per model of suites' runs and logs
// it per method run; with TEMPORA_COSTS_WRITE=1 it writes the figures into
// costs.json (keeping the suites it does not measure), which Suite.Time
// and QuickTime are computed from. TEMPORA_COSTS lists suite:scale pairs,
// e.g.
//
//	TEMPORA_COSTS=table1:paper,table-s2:paper,table1:quick TEMPORA_COSTS_WRITE=1 \
//	    go test ./experiments/ -run '^TestSuiteCosts$' -v -timeout 0
//
// Paper scale measures one model (TEMPORA_COSTS_MODELS to change), quick
// scale the suite's quick models, the least of quickRepeats runs. At paper scale table-s2's LIME and SAGE
// are measured in part (partialCosts). The test records the machine and
// the load average, and measures CPU time (getrusage), not wall time.
func TestSuiteCosts(t *testing.T) {
	spec := os.Getenv("TEMPORA_COSTS")
	if spec == "" {
		t.Skip("set TEMPORA_COSTS=suite:scale,… to measure (see the comment)")
	}
	tab := costs
	if tab.Suites == nil {
		tab.Suites = map[string]map[string]suiteCost{}
	}
	for _, item := range strings.Split(spec, ",") {
		name, scale, _ := strings.Cut(item, ":")
		s := mustSuite(t, name)
		quick := scale == "quick"
		if !quick && scale != "paper" {
			t.Fatalf("TEMPORA_COSTS: %q: want suite:paper or suite:quick", item)
		}
		models := s.QuickModels
		if !quick {
			models = 1
			if v := os.Getenv("TEMPORA_COSTS_MODELS"); v != "" {
				fmt.Sscan(v, &models)
			}
		}
		var skip []string
		var partial map[string]float64
		var notes map[string]string
		if !quick && name == "table-s2" {
			skip = []string{"LIME", "SAGE"}
			partial, notes = partialCosts(t, s)
		}
		load := loadAverage(t)
		c := measureSuite(t, s, quick, models, skip)
		c.Load = fmt.Sprintf("%s at the start, %s at the end (1-minute load average, %d CPUs)", load, loadAverage(t), runtime.NumCPU())
		for k, v := range partial {
			c.Methods[k] = v
		}
		c.Notes = notes
		total, _ := func() (float64, bool) {
			v := c.Problem
			for _, x := range c.Methods {
				v += x
			}
			return v, true
		}()
		t.Logf("%s at %s scale: %.1f s CPU per model (%v; problems %.2f s)", name, scale, total, c.Methods, c.Problem)
		if tab.Suites[name] == nil {
			tab.Suites[name] = map[string]suiteCost{}
		}
		tab.Suites[name][scale] = c
	}
	tab.Machine, tab.Cores, tab.Go = cpuName(), 2, runtime.Version()
	tab.Date = time.Now().UTC().Format("2006-01-02")
	if os.Getenv("TEMPORA_COSTS_WRITE") == "" {
		return
	}
	b, err := json.MarshalIndent(tab, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("costs.json", append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadAverage returns the 1-minute load average.
func loadAverage(t *testing.T) string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}

// TestAboutDuration checks the wording of expected wall times.
func TestAboutDuration(t *testing.T) {
	for _, tc := range []struct {
		sec  float64
		want string
	}{
		{0.2, "about 1 s"}, {14.6, "about 15 s"}, {119, "about 120 s"}, {120, "about 2 min"},
		{2400, "about 40 min"}, {7199, "about 120 min"}, {7200, "about 2 h"}, {36000, "about 10 h"}, {4.9 * 86400, "about 120 h"},
	} {
		if got := aboutDuration(tc.sec); got != tc.want {
			t.Errorf("aboutDuration(%v) = %q, want %q", tc.sec, got, tc.want)
		}
	}
}

// TestCostsCoverSuites checks costs.json against the suites: every
// measurement names a suite and holds exactly the runs of its default
// methods (so a change of the defaults needs a new measurement), and the
// suite's stated expected times are the ones costs.json gives.
func TestCostsCoverSuites(t *testing.T) {
	if costs.Cores < 1 || costs.Machine == "" {
		t.Errorf("costs.json: machine %q, %d cores: want the machine and the cores stated", costs.Machine, costs.Cores)
	}
	for name, scales := range costs.Suites {
		s := mustSuite(t, name)
		runs, err := costMethods(s)
		if err != nil {
			t.Fatal(err)
		}
		for scale, c := range scales {
			var got []string
			for m := range c.Methods {
				got = append(got, m)
			}
			if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(runs))) || c.Models < 1 || c.Load == "" {
				t.Errorf("costs.json: %s at %s scale measures %v on %d models (load %q), want the runs %v on at least one, and the load", name, scale, got, c.Models, c.Load, runs)
			}
			quick := scale == "quick"
			stated, models := s.Time, s.Models
			if quick {
				stated, models = s.QuickTime, s.QuickModels
			}
			if want := measuredTime(name, quick, models); stated != want {
				t.Errorf("suite %s at %s scale states %q, want %q from costs.json", name, scale, stated, want)
			}
		}
	}
}

// TestSuiteCostsAgree runs each suite:scale of TEMPORA_COSTS_CHECK (e.g.
// table1:quick) afresh, measuring its CPU time as TestSuiteCosts does, and
// checks that it is within 25% of what costs.json gives for the same
// models: the expected wall times are only as good as this agreement.
// Paper scale runs one model; quick scale takes the least of quickRepeats
// runs, as the table does.
func TestSuiteCostsAgree(t *testing.T) {
	spec := os.Getenv("TEMPORA_COSTS_CHECK")
	if spec == "" {
		t.Skip("set TEMPORA_COSTS_CHECK=suite:scale,… to check costs.json against a measured run")
	}
	const tolerance = 0.25
	for _, item := range strings.Split(spec, ",") {
		name, scale, _ := strings.Cut(item, ":")
		s := mustSuite(t, name)
		quick := scale == "quick"
		want, ok := costs.perModel(name, quick)
		if !ok {
			t.Fatalf("costs.json has no %s at %s scale", name, scale)
		}
		models := 1
		if quick {
			models = s.QuickModels
		}
		c := measureSuite(t, s, quick, models, nil)
		got := c.Problem
		for _, v := range c.Methods {
			got += v
		}
		t.Logf("%s at %s scale: measured %.1f s CPU per model (%v), costs.json %.1f s (load average %s)", name, scale, got, c.Methods, want, loadAverage(t))
		if math.Abs(got-want) > tolerance*want {
			t.Errorf("%s at %s scale: %.1f s CPU per model measured, costs.json says %.1f s: more than %.0f%% apart", name, scale, got, want, 100*tolerance)
		}
	}
}

// paperNight is issue 34's bar for `make paper`: every paper suite at
// full scale within a night on 2 cores.
const paperNight = 8 * time.Hour

// TestPaperInANight checks, from the measured costs (costs.json), that
// `make paper` (the Makefile's SUITES at full scale, each with its default
// models) is expected to take under paperNight on costs.Cores cores.
func TestPaperInANight(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var suites []string
	for _, ln := range strings.Split(string(mk), "\n") {
		if rest, ok := strings.CutPrefix(ln, "SUITES := "); ok {
			suites = strings.Fields(rest)
		}
	}
	if len(suites) == 0 {
		t.Fatal("Makefile: no SUITES := line")
	}
	var total float64
	for _, name := range suites {
		s, err := LookupSuite(name)
		if err != nil {
			t.Fatal(err)
		}
		sec, ok := costs.expectedSeconds(name, false, s.Models)
		if !ok {
			t.Fatalf("costs.json has no paper-scale cost of %s", name)
		}
		t.Logf("%s: %d models, %.2f h on %d cores", name, s.Models, sec/3600, costs.Cores)
		total += sec
	}
	got := time.Duration(total * float64(time.Second))
	t.Logf("make paper: %.2f h on %d cores", got.Hours(), costs.Cores)
	if costs.Cores != 2 || got > paperNight {
		t.Errorf("make paper is expected to take %.2f h on %d cores, want at most %v on 2", got.Hours(), costs.Cores, paperNight)
	}
}
