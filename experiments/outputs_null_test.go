package experiments

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// The null calibration of TIME's hierarchy for models with several
// outputs (issue 30): worlds whose black box reads more than its targets
// do (synth.OutputsConfig's noise weights, at SD 0.5 on every feature at
// every timestep of every output, and its null outputs), so that every
// level has true nulls whose permutation tests are not trivial (the loss
// moves when the nulls are permuted, but not in expectation):
//
//   - horizons: 200 × 4 features × 10 timesteps, 3 horizons, features 0
//     and 1 relevant (feature 1 read by some horizons only), features 2
//     and 3 read by no output, and horizon 2 a null output (its targets
//     read no feature);
//   - classes: 200 × 4 × 10, 3 classes, a nested dichotomy over features
//     0 and 1 (one class reads one of them only), features 2 and 3 read by
//     no class;
//   - steps: 200 × 3 × 8, 8 output steps, features 0 and 1 read at fixed
//     lags, feature 2 by none, the last 2 steps null outputs; every
//     output's black box reads the future, its targets never.
var outputsNullWorlds = []struct {
	name string
	cfg  synth.OutputsConfig
}{
	{"horizons", synth.OutputsConfig{Kind: tempora.Horizons, Instances: 200, Features: 4, Timesteps: 10, Outputs: 3, Relevant: 2, Partial: 1, NullOutputs: 1, NoiseScale: 0.5}},
	{"classes", synth.OutputsConfig{Kind: tempora.Classes, Instances: 200, Features: 4, Timesteps: 10, Outputs: 3, NoiseScale: 0.5}},
	{"steps", synth.OutputsConfig{Kind: tempora.Steps, Instances: 200, Features: 3, Timesteps: 8, Relevant: 2, NullOutputs: 2, NoiseScale: 0.5}},
}

// nullLevels are the levels of the hierarchy whose FDR the calibration
// measures, in order.
// The first three are TIME's families (docs/decisions.md, decision 24):
// the features, each feature's outputs, and each (feature, output)'s
// {ordering, windows} with its window orderings. The next two split the
// third, whose BH family holds an ordering and windows together, for
// information only: BH bounds the FDR of a family, not of a part of it.
// The last is the causal check's family (one per explanation), whose
// verdict says whether some output reads the future.
var nullLevels = []string{"features", "outputs of a feature", "windows and orderings per (feature, output)",
	"windows alone", "orderings alone", "causal family"}

// nullAsserted is the number of leading levels of nullLevels whose FDR
// TestOutputsNull bounds.
const nullAsserted = 3

// nullTally accumulates, per level, the sum over trials of the false
// discovery proportion V/R (0 when nothing is claimed) and the claims
// made; for the causal check, also per family (one per explanation) and
// per trial (the model's verdict).
type nullTally struct {
	fdp            []float64
	claims, falses []int
	trials         int
	// families counts the causal families tested, famFDP sums their
	// false discovery proportions, verdicts counts the trials whose
	// explanation says some output reads the future, futures those where
	// one does.
	families          int
	famFDP            float64
	verdicts, futures int
}

// add scores one explanation of problem p.
func (a *nullTally) add(p *synth.OutputsProblem, ex *tempora.Explanation) {
	if a.fdp == nil {
		a.fdp = make([]float64, len(nullLevels))
		a.claims, a.falses = make([]int, len(nullLevels)), make([]int, len(nullLevels))
	}
	v, r := make([]int, len(nullLevels)), make([]int, len(nullLevels))
	claim := func(level int, made, ok bool) {
		if made {
			r[level]++
			if !ok {
				v[level]++
			}
		}
	}
	for j, f := range ex.Features {
		claim(0, f.Important, p.Truth[j].Relevant)
	}
	type fam struct{ v, r int }
	causal := map[int]*fam{} // lookup only; never iterated in order
	var order []int
	future := false
	for k, out := range ex.Outputs.Outputs {
		ot := p.Outputs[k]
		for j, f := range out.Features {
			tf := ot.Features[j]
			claim(1, f.Important, tf.Relevant)
			if !f.Important {
				continue
			}
			claim(2, f.OrderingImportant, tf.Relevant)
			claim(4, f.OrderingImportant, tf.Relevant)
			for _, w := range f.Windows {
				ok := tf.Relevant && overlaps(w.Window, tf.Window)
				claim(2, w.Significant, ok)
				claim(2, w.OrderingImportant, ok && w.Window.Len() > 1)
				claim(3, w.Significant, ok)
				claim(4, w.OrderingImportant, ok && w.Window.Len() > 1)
			}
			truth := ot.ReadsFuture(j)
			future = future || truth
			claim(5, f.ReadsFuture, truth)
			if anchors := ex.Outputs.Anchors; anchors != nil && anchors[k] < ex.L-1 {
				if causal[j] == nil {
					causal[j] = &fam{}
					order = append(order, j)
				}
				if f.ReadsFuture {
					causal[j].r++
					if !truth {
						causal[j].v++
					}
				}
			}
		}
	}
	for l := range nullLevels {
		if r[l] > 0 {
			a.fdp[l] += float64(v[l]) / float64(r[l])
		}
		a.claims[l] += r[l]
		a.falses[l] += v[l]
	}
	// The causal check is one family over every (feature, output) it tests.
	if len(order) > 0 {
		a.families++
		var fr, fv int
		for _, j := range order {
			fr += causal[j].r
			fv += causal[j].v
		}
		if fr > 0 {
			a.famFDP += float64(fv) / float64(fr)
		}
	}
	a.trials++
	a.verdicts += b2i(ex.Outputs.ReadsFuture)
	a.futures += b2i(future)
}

// nullTrials returns the trials per world: def, 100 under -short, or
// TEMPORA_OUTPUTS_TRIALS.
func nullTrials(t *testing.T, def int) int {
	if s := os.Getenv("TEMPORA_OUTPUTS_TRIALS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("TEMPORA_OUTPUTS_TRIALS=%q", s)
		}
		return n
	}
	if testing.Short() {
		return 100
	}
	return def
}

// runNull explains trials problems of a null world with TIME's defaults,
// each problem and explainer from its own seed.
func runNull(t *testing.T, name string, cfg synth.OutputsConfig, trials int) *nullTally {
	t.Helper()
	a := &nullTally{}
	for trial := range trials {
		seed := tempora.DeriveSeed(DefaultSeed, "outputs null", name, strconv.Itoa(trial))
		p, err := synth.GenerateOutputs(cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := explain.TIME{Seed: seed}.Explain(context.Background(), p.Model, p.Data)
		if err != nil {
			t.Errorf("%s: trial %d: %v", name, trial, err)
			continue
		}
		a.add(p, ex)
	}
	return a
}

// TestOutputsNull is the null calibration of TIME's hierarchy with
// several outputs, on the worlds of outputsNullWorlds: 300 trials each
// (100 under -short; TEMPORA_OUTPUTS_TRIALS sets them). At each level —
// features (the whole model), outputs of a feature (each important
// feature's output family), windows and orderings per (feature, output)
// (a significant window is true when it overlaps the true window of a
// pair the output reads; a unit's whole-sequence ordering when the
// output reads the feature; a window's ordering when, besides, the
// window has two timesteps or more) — the FDR, the mean over trials of
// the level's false discovery proportion, must be at most α + 3 SE, SE =
// √(α(1 − α)/trials) (fdrBound). For the causal check (steps), one family
// of every (feature, output) is tested under BH at α: its FDR, the mean
// over the families tested of their false discovery proportion, must be
// at most α + 3 SE over the families. The model's verdict (some output
// reads the future) pools the families: TestTIMEOutputsCausalVerdict.
func TestOutputsNull(t *testing.T) {
	const alpha = explain.DefaultAlpha
	trials := nullTrials(t, 300)
	var quoted []string
	var family string
	for _, w := range outputsNullWorlds {
		a := runNull(t, w.name, w.cfg, trials)
		quoted = append(quoted, fmt.Sprintf("%s %.3f / %.3f / %.3f", w.name, a.fdp[0]/float64(a.trials), a.fdp[1]/float64(a.trials), a.fdp[2]/float64(a.trials)))
		bound := fdrBound(alpha, a.trials)
		for l, level := range nullLevels {
			fdr := a.fdp[l] / float64(a.trials)
			t.Logf("%s: %s: FDR %.4f over %d trials (bound %.4f); %d claims, %d false", w.name, level, fdr, a.trials, bound, a.claims[l], a.falses[l])
			if l < nullAsserted && fdr > bound {
				t.Errorf("%s: %s: FDR %.4f > α + 3 SE = %.4f over %d trials", w.name, level, fdr, bound, a.trials)
			}
		}
		if a.families > 0 {
			fdr, fb := a.famFDP/float64(a.families), fdrBound(alpha, a.families)
			family = fmt.Sprintf("%.3f over %d families", fdr, a.families)
			t.Logf("%s: causal family: FDR per family %.4f over %d families (bound %.4f); model verdict 'reads the future' in %d of %d trials, true in %d",
				w.name, fdr, a.families, fb, a.verdicts, a.trials, a.futures)
			if fdr > fb {
				t.Errorf("%s: causal family: FDR %.4f > α + 3 SE = %.4f over %d families", w.name, fdr, fb, a.families)
			}
		}
	}
	if trials == 300 && !testing.Short() {
		last := len(quoted) - 1
		docStates(t, "was "+strings.Join(quoted[:last], ", ")+" and "+quoted[last]+";")
		docStates(t, "kept its FDR at "+family+".")
		docStates(t, fmt.Sprintf("%d trials each", trials))
		docStates(t, fmt.Sprintf("the test allows α + 3 SE = %.3f", fdrBound(alpha, trials)))
		docStates(t, fmt.Sprintf("noise weights of SD %v everywhere", outputsNullWorlds[0].cfg.NoiseScale))
	}
}
