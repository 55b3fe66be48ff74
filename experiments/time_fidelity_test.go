package experiments

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/internal/fdr"
	"github.com/tempora-dev/tempora/synth"
)

// table1 is the paper's Table 1 setting: classification, 1000 instances ×
// 10 features × 20 timesteps, half of the features relevant, automatic
// noise.
var table1 = synth.Config{
	Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5,
	Task: tempora.Classification, Noise: synth.AutoNoise,
}

// modeRun is one TIME configuration's explanation of one problem, with its
// feature power and FDR (recall and 1 − precision of the important
// features, computed by PowerFDR).
type modeRun struct {
	ex         *tempora.Explanation
	power, fdr float64
}

// mode is one TIME configuration over a set of problems.
type mode struct {
	name string
	cfg  explain.TIME
	runs []modeRun
}

// meanSE returns the mean of f over the runs and its standard error
// (sample SD/√n).
func (m *mode) meanSE(f func(modeRun) float64) (mean, se float64) {
	n := float64(len(m.runs))
	for _, r := range m.runs {
		mean += f(r) / n
	}
	var ss float64
	for _, r := range m.runs {
		ss += (f(r) - mean) * (f(r) - mean)
	}
	if n > 1 {
		se = math.Sqrt(ss / (n - 1) / n)
	}
	return mean, se
}

// evals returns the instance evaluations summed over the runs.
func (m *mode) evals() int64 {
	var s int64
	for _, r := range m.runs {
		s += r.ex.Accounting.InstanceEvals
	}
	return s
}

// calls returns the model calls summed over the runs.
func (m *mode) calls() int64 {
	var s int64
	for _, r := range m.runs {
		s += r.ex.Accounting.ModelCalls
	}
	return s
}

// explain explains problem p in mode m with the given seed and appends the
// run, scored against truth (feature relevance).
func (m *mode) explain(t *testing.T, p *synth.Problem, truth []bool, seed uint64) {
	t.Helper()
	c := m.cfg
	c.Seed = seed
	ex, err := c.Explain(context.Background(), p.Model, p.Data)
	if err != nil {
		t.Fatal(err)
	}
	found := make([]bool, len(ex.Features))
	for j, f := range ex.Features {
		found[j] = f.Important
	}
	power, fdr := PowerFDR(truth, found)
	m.runs = append(m.runs, modeRun{ex: ex, power: power, fdr: fdr})
}

// runModes explains the problems of cfg with seeds 1..n in every mode (the
// explainer seeded with the problem's seed) and returns the problems'
// truths, truth[k][j] being feature j's relevance in problem k.
func runModes(t *testing.T, cfg synth.Config, n int, modes []*mode) [][]bool {
	t.Helper()
	var truths [][]bool
	for k := range n {
		seed := uint64(1 + k)
		p, err := synth.Generate(cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		truth := make([]bool, len(p.Truth))
		for j := range truth {
			truth[j] = p.Truth[j].Relevant
		}
		truths = append(truths, truth)
		for _, m := range modes {
			m.explain(t, p, truth, seed)
		}
	}
	return truths
}

// agreement compares two modes feature by feature: the fraction of
// features with the same decision, and among features important in both,
// the fraction with the same window, whole-sequence ordering decision and
// window-ordering decision.
type agreement struct {
	features, both, windows, orderings, windowOrderings int
	total                                               int
}

func (a agreement) String() string {
	return fmt.Sprintf("features %d/%d same; of %d important in both: windows %d, ordering %d, window ordering %d same",
		a.features, a.total, a.both, a.windows, a.orderings, a.windowOrderings)
}

func compare(a, b *mode) agreement {
	var g agreement
	for k := range a.runs {
		fa, fb := a.runs[k].ex.Features, b.runs[k].ex.Features
		for j := range fa {
			g.total++
			if fa[j].Important == fb[j].Important {
				g.features++
			}
			if !fa[j].Important || !fb[j].Important {
				continue
			}
			g.both++
			if *fa[j].Window == *fb[j].Window {
				g.windows++
			}
			if fa[j].OrderingImportant == fb[j].OrderingImportant {
				g.orderings++
			}
			if fa[j].WindowOrderingImportant == fb[j].WindowOrderingImportant {
				g.windowOrderings++
			}
		}
	}
	return g
}

// drawTable sums the draw counts of a mode's runs by kind of test.
func drawTable(m *mode) string {
	acc := tempora.Accounting{}
	for _, r := range m.runs {
		for k, c := range r.ex.Accounting.Draws {
			if k >= len(acc.Draws) {
				acc.Draws = append(acc.Draws, tempora.DrawCount{Test: c.Test})
			}
			acc.Draws[k].Tests += c.Tests
			acc.Draws[k].Draws += c.Draws
			acc.Draws[k].MaxDraws += c.MaxDraws
		}
	}
	var b strings.Builder
	acc.WriteDraws(&b)
	return b.String()
}

// logModes logs the side-by-side comparison of the modes.
func logModes(t *testing.T, modes []*mode) {
	t.Helper()
	t.Logf("%-22s %12s %16s %14s %14s", "mode", "model calls", "instance evals", "power (SE)", "FDR (SE)")
	for _, m := range modes {
		p, pse := m.meanSE(func(r modeRun) float64 { return r.power })
		f, fse := m.meanSE(func(r modeRun) float64 { return r.fdr })
		t.Logf("%-22s %12d %16d %7.3f (%.3f) %7.3f (%.3f)", m.name, m.calls(), m.evals(), p, pse, f, fse)
	}
}

// evalRatio returns the ratio of a's instance evaluations to b's over the
// same problems, Σa/Σb, and its standard error over the problems (the
// ratio estimator's: the SD of the residuals a_k − R·b_k over √n and the
// mean of b).
func evalRatio(a, b *mode) (ratio, se float64) {
	n := float64(len(a.runs))
	ratio = float64(a.evals()) / float64(b.evals())
	var ss float64
	for k := range a.runs {
		r := float64(a.runs[k].ex.Accounting.InstanceEvals) - ratio*float64(b.runs[k].ex.Accounting.InstanceEvals)
		ss += r * r
	}
	if n > 1 {
		se = math.Sqrt(ss/(n-1)/n) / (float64(b.evals()) / n)
	}
	return ratio, se
}

// TestTIMEFidelityTable1 runs TIME on 20 seeded problems of the paper's
// Table 1 setting, in the default sequential mode (Besag–Clifford's
// tests), with the family stopping rule (-tests anytime) and in the
// paper's fixed P = 50, and checks the issues' targets on them:
//
//   - at least 2 times fewer instance evaluations by default than with
//     fixed P = 50 (docs/decisions.md, decision 25), and at most half of
//     the default's draws with the family stopping rule in the families it
//     governs (issue 22; the window search's probes and the window
//     orderings stop by their own rules in both modes);
//   - the default's power within one SE (of the other mode's mean over
//     the 20 models) of the fixed mode's, on the same problems;
//   - feature FDR at most α = 0.1 in the default and the fixed mode. The per-model FDR has an
//     SD of about 0.1 (SE 0.010 over the 100 models of the paper-scale
//     run, whose mean is 0.062), so a 20-model mean has an SE of about
//     0.022: the expected mean + 3 SE would be 0.13, and α, 1.7 SE above
//     the expected mean, is already as tight as 20 models allow. The
//     calibration of the tests themselves is checked far more tightly
//     under the null in package explain (3000 trials per mode and task).
//   - power at least 0.9 (the paper's TIME row: power 0.930, FDR 0.037
//     over 100 models; the paper-scale run gives 0.950 with SE 0.009, so
//     a 20-model mean has an SE of about 0.02 and 0.9 lies 2.5 SE below).
//
// Power and FDR are computed here by PowerFDR, independently of the
// experiments package's metrics.
func TestTIMEFidelityTable1(t *testing.T) {
	if testing.Short() {
		t.Skip("runs TIME on 20 Table-1 problems in two modes")
	}
	const (
		models   = 20
		minPower = 0.9
		maxFDR   = 0.1
		minRatio = 2
	)
	seq := &mode{name: "Besag–Clifford (default)"}
	fixed := &mode{name: "fixed P = 50", cfg: explain.TIME{Tests: explain.FixedTests}}
	family := &mode{name: "anytime", cfg: explain.TIME{Tests: explain.AnytimeTests}}
	runModes(t, table1, models, []*mode{seq, fixed, family})
	logModes(t, []*mode{seq, fixed, family})
	t.Logf("default vs fixed P = 50: %v", compare(seq, fixed))
	t.Logf("default draws:\n%s", drawTable(seq))
	for _, m := range []*mode{seq, fixed} {
		power, _ := m.meanSE(func(r modeRun) float64 { return r.power })
		fdr, _ := m.meanSE(func(r modeRun) float64 { return r.fdr })
		if power < minPower {
			t.Errorf("%s: mean feature power %.3f < %.2f", m.name, power, minPower)
		}
		if fdr > maxFDR {
			t.Errorf("%s: mean feature FDR %.3f > %.2f", m.name, fdr, maxFDR)
		}
	}
	ps, _ := seq.meanSE(func(r modeRun) float64 { return r.power })
	if pm, se := fixed.meanSE(func(r modeRun) float64 { return r.power }); ps < pm-se {
		t.Errorf("default power %.3f < %s's %.3f by more than its SE %.3f", ps, fixed.name, pm, se)
	}
	// The family stopping rule governs the p-value tests; the window
	// search's probes (the outer search and, with several windows, the gap
	// probes) stop by the probe rules of docs/decisions.md, decision 22, in
	// both modes, and the window-ordering tests by Besag and Clifford's
	// (docs/decisions.md, decision 18), so the probes' savings lower both
	// runs. The target of issue 22 is checked on the draws the rule
	// governs; the whole run's ratio is logged beside it, with its SE over
	// the problems (docs/decisions.md, decision 16, quotes it with the
	// ratio against the run before the probe rules).
	governed := func(m *mode) (n int64) {
		for _, r := range m.runs {
			for _, c := range r.ex.Accounting.Draws {
				if c.Test != "window search" && c.Test != "window ordering" {
					n += c.Draws
				}
			}
		}
		return n
	}
	whole, wholeSE := evalRatio(family, seq)
	t.Logf("the family stopping rule makes %.3f (SE %.3f over problems) of the default's instance evaluations over the whole run",
		whole, wholeSE)
	if ratio := float64(governed(family)) / float64(governed(seq)); ratio > 0.5 {
		t.Errorf("the family stopping rule makes %.3f of the default's draws in the families it governs, want at most 0.5", ratio)
	} else {
		t.Logf("the family stopping rule makes %.3f of the default's draws in the families it governs", ratio)
	}
	if ratio := float64(fixed.evals()) / float64(seq.evals()); ratio < minRatio {
		t.Errorf("fixed P = 50 makes %.2f times the default's instance evaluations, want at least %d", ratio, minRatio)
	} else {
		t.Logf("fixed P = 50 makes %.2f times the default's instance evaluations", ratio)
	}
	for _, r := range seq.runs {
		for _, w := range r.ex.Warnings {
			if strings.Contains(w, "smallest p-value") {
				t.Errorf("sequential default warns %q", w)
			}
		}
	}
}

// TestTIMEFidelityLoneFeature checks the silent floor on 20 seeded
// problems with one relevant feature among 10 (FractionRelevant below
// 0.5/D): the sequential default must find it in at least 90% of them
// (18 of 20). Fixed P = 50 cannot (its p-value 1/51 exceeds α/10 = 0.01,
// and BH needs two features at the floor), and every one of its
// explanations must say so in a warning.
func TestTIMEFidelityLoneFeature(t *testing.T) {
	if testing.Short() {
		t.Skip("runs TIME on 20 problems in two modes")
	}
	const (
		models   = 20
		minFound = 18
	)
	cfg := table1
	cfg.FractionRelevant = 0.01
	seq := &mode{name: "sequential (default)"}
	fixed := &mode{name: "fixed P = 50", cfg: explain.TIME{Tests: explain.FixedTests}}
	truths := runModes(t, cfg, models, []*mode{seq, fixed})
	logModes(t, []*mode{seq, fixed})
	found := func(m *mode) int {
		n := 0
		for k, r := range m.runs {
			for j, f := range r.ex.Features {
				if truths[k][j] && f.Important {
					n++
				}
			}
		}
		return n
	}
	t.Logf("lone relevant feature found: sequential %d/%d, fixed P = 50 %d/%d", found(seq), models, found(fixed), models)
	if n := found(seq); n < minFound {
		t.Errorf("sequential found the relevant feature in %d of %d problems, want at least %d", n, models, minFound)
	}
	for k, r := range fixed.runs {
		warned := false
		for _, w := range r.ex.Warnings {
			warned = warned || strings.Contains(w, "the family of 10 features: with 50 permutations")
		}
		if !warned {
			t.Errorf("fixed P = 50, problem %d: no floor warning in %q", k+1, r.ex.Warnings)
		}
	}
}

// fixedStageA returns the feature decisions of TIME in fixed mode with p
// permutations per test on a flat hierarchy: the overall test of every
// feature (the stream keys TIME uses, docs/decisions.md) and BH at alpha.
// It costs p·D draws instead of a whole fixed run.
func fixedStageA(t *testing.T, prob *synth.Problem, seed uint64, p int, alpha float64) []bool {
	t.Helper()
	eng, err := explain.NewEngine(prob.Model, prob.Data, nil, seed, 0)
	if err != nil {
		t.Fatal(err)
	}
	x := prob.Data.X
	tests := make([]explain.Test, x.D)
	for j := range tests {
		tests[j] = explain.Test{Features: []int{j}, Window: tempora.Window{Start: 0, End: x.L - 1}, Permutations: p, Key: fmt.Sprintf("time/feature/%d/overall", j)}
	}
	res, err := eng.Run(context.Background(), tests)
	if err != nil {
		t.Fatal(err)
	}
	ps := make([]float64, x.D)
	for j, r := range res {
		ps[j] = r.PValue
	}
	rej, adj := make([]bool, x.D), make([]float64, x.D)
	fdr.BH(rej, adj, ps, alpha)
	return rej
}

// TestTIMESequentialPaperScale is the paper-scale comparison of the modes
// (set TEMPORA_PAPER_SCALE=1; table1 and lone take about 5 minutes on 2
// cores, wide about 1 minute per problem):
//
//   - Table 1, 100 models: sequential and fixed P = 50 side by side (model
//     calls, instance evaluations, power, FDR), the fixed P = 50 /
//     sequential ratio of instance evaluations (target ≥ 3), sequential
//     power at least fixed P = 50's, FDR within α + 3 SE (and logged
//     against π₀α, BH's bound); sequential feature decisions identical to
//     fixed P = P_max = 99 on at least 98% of features (the fixed decisions
//     come from its overall tests and BH, fixedStageA, checked against a
//     whole fixed run on the first problem). The probe cut's windows are
//     checked against full probes by explain's TestProbeCut.
//   - one relevant feature among 10, 100 problems: found in at least 90%.
//   - wide data, 1000 × 100 × 20 with 10 relevant, TEMPORA_WIDE_MODELS
//     problems (default 5; the reported run used 20 and
//     TEMPORA_WIDE_FIXED=3): sequential power at least 0.9 and FDR at most
//     0.1, fixed P = 50 alongside, and sequential instance evaluations at
//     most 1/5 of fixed P = P_max = 999's. A fixed run at 999 makes at least
//     1 + 999·D model calls (its overall tests alone), so the ratio is
//     checked against that lower bound of its cost, which makes the check
//     conservative.
func TestTIMESequentialPaperScale(t *testing.T) {
	if os.Getenv("TEMPORA_PAPER_SCALE") == "" {
		t.Skip("set TEMPORA_PAPER_SCALE=1 to run the paper-scale comparison")
	}
	const alpha = explain.DefaultAlpha
	t.Run("table1", func(t *testing.T) {
		const models, pmax = 100, 99
		seq := &mode{name: "sequential (default)"}
		fixed50 := &mode{name: "fixed P = 50", cfg: explain.TIME{Tests: explain.FixedTests}}
		same, total := 0, 0
		for k := range models {
			ms := []*mode{seq, fixed50}
			seed := uint64(k + 1)
			prob, err := synth.Generate(table1, seed)
			if err != nil {
				t.Fatal(err)
			}
			truth := make([]bool, table1.Features)
			for j := range truth {
				truth[j] = prob.Truth[j].Relevant
			}
			for _, m := range ms {
				m.explain(t, prob, truth, seed)
			}
			dec := fixedStageA(t, prob, seed, pmax, alpha)
			if k == 0 {
				ex, err := explain.TIME{Tests: explain.FixedTests, Permutations: pmax, Seed: seed}.Explain(context.Background(), prob.Model, prob.Data)
				if err != nil {
					t.Fatal(err)
				}
				for j, f := range ex.Features {
					if f.Important != dec[j] {
						t.Fatalf("fixedStageA differs from a fixed run at feature %d", j)
					}
				}
			}
			for j, f := range seq.runs[k].ex.Features {
				total++
				if f.Important == dec[j] {
					same++
				}
			}
			r := seq.runs[k]
			t.Logf("problem %d: sequential %d calls power %.2f FDR %.2f; fixed P = 50 %d calls power %.2f FDR %.2f", seed,
				r.ex.Accounting.ModelCalls, r.power, r.fdr, fixed50.runs[k].ex.Accounting.ModelCalls, fixed50.runs[k].power, fixed50.runs[k].fdr)
		}
		logModes(t, []*mode{seq, fixed50})
		t.Logf("sequential vs fixed P = 50: %v", compare(seq, fixed50))
		t.Logf("feature decisions identical to fixed P = P_max = %d: %d of %d", pmax, same, total)
		t.Logf("instance evaluations: fixed P = 50 / sequential = %.3f", float64(fixed50.evals())/float64(seq.evals()))
		t.Logf("sequential draws:\n%s", drawTable(seq))
		if frac := float64(same) / float64(total); frac < 0.98 {
			t.Errorf("sequential and fixed P = P_max agree on %.3f of the features, want 0.98", frac)
		}
		if r := float64(fixed50.evals()) / float64(seq.evals()); r < 3 {
			t.Errorf("fixed P = 50 / sequential instance evaluations = %.2f, want at least 3", r)
		}
		ps, _ := seq.meanSE(func(r modeRun) float64 { return r.power })
		pf, _ := fixed50.meanSE(func(r modeRun) float64 { return r.power })
		if ps < pf {
			t.Errorf("sequential power %.3f < fixed P = 50's %.3f", ps, pf)
		}
		for _, m := range []*mode{seq, fixed50} {
			fdr, se := m.meanSE(func(r modeRun) float64 { return r.fdr })
			t.Logf("%s: FDR %.3f, SE %.3f; BH bound π₀α = 0.05, α = 0.1", m.name, fdr, se)
			if fdr > alpha+3*se {
				t.Errorf("%s: FDR %.3f > α + 3 SE = %.3f", m.name, fdr, alpha+3*se)
			}
		}
	})
	t.Run("lone", func(t *testing.T) {
		const models = 100
		cfg := table1
		cfg.FractionRelevant = 0.01
		seq := &mode{name: "sequential (default)"}
		fixed50 := &mode{name: "fixed P = 50", cfg: explain.TIME{Tests: explain.FixedTests}}
		truths := runModes(t, cfg, models, []*mode{seq, fixed50})
		logModes(t, []*mode{seq, fixed50})
		for _, m := range []*mode{seq, fixed50} {
			n := 0
			for k, r := range m.runs {
				for j, f := range r.ex.Features {
					if truths[k][j] && f.Important {
						n++
					}
				}
			}
			t.Logf("%s: lone relevant feature found in %d of %d problems", m.name, n, models)
			if m == seq && n < 90 {
				t.Errorf("sequential found the lone feature in %d of %d problems, want at least 90", n, models)
			}
		}
	})
	t.Run("wide", func(t *testing.T) {
		models := 5
		if v := os.Getenv("TEMPORA_WIDE_MODELS"); v != "" {
			fmt.Sscan(v, &models)
		}
		const pmax = 999
		cfg := synth.Config{Instances: 1000, Features: 100, Timesteps: 20, FractionRelevant: 0.1, Task: tempora.Classification, Noise: synth.AutoNoise}
		seq := &mode{name: "sequential (default)"}
		fixed50 := &mode{name: "fixed P = 50", cfg: explain.TIME{Tests: explain.FixedTests}}
		runModes(t, cfg, models, []*mode{seq, fixed50})
		logModes(t, []*mode{seq, fixed50})
		t.Logf("sequential draws:\n%s", drawTable(seq))
		for k, r := range seq.runs {
			t.Logf("problem %d: sequential power %.2f FDR %.2f, %d calls; fixed P = 50 power %.2f FDR %.2f", k+1, r.power, r.fdr, r.ex.Accounting.ModelCalls, fixed50.runs[k].power, fixed50.runs[k].fdr)
		}
		// TEMPORA_WIDE_FIXED=n compares the sequential feature decisions
		// of the first n problems with fixed P = P_max's (about 10⁵ draws
		// each).
		nfixed := 0
		if v := os.Getenv("TEMPORA_WIDE_FIXED"); v != "" {
			fmt.Sscan(v, &nfixed)
		}
		for k := range min(nfixed, models) {
			seed := uint64(k + 1)
			prob, err := synth.Generate(cfg, seed)
			if err != nil {
				t.Fatal(err)
			}
			dec := fixedStageA(t, prob, seed, pmax, alpha)
			same, found, relevant := 0, 0, 0
			for j, f := range seq.runs[k].ex.Features {
				if f.Important == dec[j] {
					same++
				}
				if prob.Truth[j].Relevant {
					relevant++
					if dec[j] {
						found++
					}
				}
			}
			t.Logf("problem %d: sequential and fixed P = P_max = %d agree on %d of %d features; fixed finds %d of %d relevant", seed, pmax, same, cfg.Features, found, relevant)
		}
		power, pse := seq.meanSE(func(r modeRun) float64 { return r.power })
		fdr, fse := seq.meanSE(func(r modeRun) float64 { return r.fdr })
		t.Logf("wide: sequential power %.3f (SE %.3f), FDR %.3f (SE %.3f)", power, pse, fdr, fse)
		// The means are compared with a rounding slack: five powers of 0.8,
		// 0.9, 0.8, 1 and 1 average to 0.9 only up to rounding.
		if power < 0.9-1e-9 || fdr > 0.1+1e-9 {
			t.Errorf("wide: sequential power %.3f, FDR %.3f; want ≥ 0.9 and ≤ 0.1", power, fdr)
		}
		bound := int64(models) * int64(cfg.Instances) * (1 + pmax*int64(cfg.Features))
		ratio := float64(seq.evals()) / float64(bound)
		t.Logf("wide: sequential instance evaluations %d; fixed P = P_max = %d makes at least %d; ratio at most %.4f", seq.evals(), pmax, bound, ratio)
		if ratio > 0.2 {
			t.Errorf("wide: sequential makes %.3f of fixed P = P_max's instance evaluations, want at most 1/5", ratio)
		}
	})
}
