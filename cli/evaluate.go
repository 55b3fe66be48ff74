package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tempora-dev/tempora/experiments"
	"github.com/tempora-dev/tempora/method"
)

const evaluateHelp = `
Evaluate scores a D × L matrix of cell scores (feature j, timestep t),
produced by any tool, against the ground truth of synthetic problems, with
the benchmark's metrics: feature and timestep power and FDR in the chosen
mode and in all-non-zero mode (the "-all" metrics), and, for an explanation
with test outcomes (windows, as TIME's), ordering, window ordering and
average-window power and FDR.

With -problem DIR -scores FILE it scores one file against DIR/truth.json
(written by "tempora synth") and prints the metrics.

With -problems DIR -scores NAME -method M -out RUN it scores the file NAME
in every problem directory listed in DIR/index.json (written by "tempora
problems") and writes one record per problem into RUN, as "tempora run"
does: "tempora report -in RUN,OTHER_RUN" and "tempora merge" take them beside
a run of the same suite and seed, and the outside method M gets its own rows
next to TIME. M is a method name (a letter, then letters, digits, '-', '_'
or '.'); a name of a known method takes its canonical spelling and its
scoring rule.

With -attributions (a NumPy .npy file of per-instance attributions,
instances × D × L, for the problem's first instances, as "tempora explain
-attributions" writes them; with -problems its name in each problem
directory) it adds the per-instance metrics: each instance's attributions
against the cells that move that instance's output (synth's per-instance
truth), averaged over instances. Without -scores the cell scores are then
the attributions' mean magnitude over instances. For a model with K outputs
the file is instances × K × D × L, each output's attributions scored against
its own truth: the metrics over every (instance, output) pair, then each
output's, named with [k] (see docs/records.md).

Every evaluation adds the threshold-free metrics: AUROC and AUPRC of the
cell scores against the true cells (timestep-auroc, timestep-auprc) and of
the feature scores against the relevant features (feature-auroc,
feature-auprc); see docs/records.md.

Scores are taken by magnitude; magnitudes below 1e-10 count as zero; a
feature's score is the mean of its non-zero cells. -mode top-n (the baselines'
rule) selects the n highest scores with n = min(#true, #non-zero), ties to the
lower index; -mode all-non-zero (TIME's rule) selects every non-zero score.
The default is the named method's mode if the method is known, else top-n.

The score file is one of:
  .csv   D lines of L comma-separated numbers ('#' lines are ignored)
  .json  a matrix [[...], ...], or an object with "cells" (as "tempora
         explain -json" writes it); an object may report the tool's cost as
         "accounting": {"runtime_seconds": s, "model_calls": n,
         "instance_evaluations": k}, which the records keep`

func (p *program) evaluate(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("evaluate", evaluateHelp, stdout)
	problem := fs.String("problem", "", "synthetic problem `directory` holding truth.json")
	problems := fs.String("problems", "", "`directory` of a suite's problems written by tempora problems")
	scores := fs.String("scores", "", "score `file` (with -problems: its name in each problem directory)")
	attributions := fs.String("attributions", "", "per-instance attributions, a .npy `file` (with -problems: its name in each problem directory)")
	name := fs.String("method", "", "method `name` of the scores (required with -problems)")
	modeFlag := fs.String("mode", "", "selection `mode`: top-n or all-non-zero (default: the method's, else top-n)")
	out := fs.String("out", "", "with -problems: the run `directory` to write records into")
	asJSON := fs.Bool("json", false, "with -problem: print the metrics as a JSON object")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 0 {
		return usageErrorf("evaluate: unexpected arguments %q (see tempora evaluate -h)", fs.Args())
	}
	switch {
	case (*problem == "") == (*problems == ""):
		return usageErrorf("evaluate: want exactly one of -problem and -problems (see tempora evaluate -h)")
	case *scores == "" && *attributions == "":
		return usageErrorf("evaluate: -scores or -attributions is required (see tempora evaluate -h)")
	case *problems != "" && (*name == "" || *out == ""):
		return usageErrorf("evaluate: -problems needs -method NAME and -out DIR (see tempora evaluate -h)")
	case *problem != "" && *out != "":
		return usageErrorf("evaluate: -out goes with -problems (with -problem the metrics are printed)")
	case *problems != "" && *asJSON:
		return usageErrorf("evaluate: -json goes with -problem")
	}
	mode, tests := method.TopN, false
	canon := *name
	if *name != "" {
		if err := method.CheckName(*name); err != nil {
			return usageErrorf("evaluate: -method: %v", err)
		}
		if m, err := p.table.Lookup(*name); err == nil {
			canon, mode, tests = m.Name, m.Mode, m.Tests
		}
	}
	if *modeFlag != "" {
		var err error
		if mode, err = method.ParseMode(*modeFlag); err != nil {
			return usageErrorf("evaluate: unknown -mode %q (want top-n or all-non-zero)", *modeFlag)
		}
	}
	if p.parseOnly {
		return nil
	}
	if *problems != "" {
		n, err := experiments.EvaluateProblems(experiments.EvaluateOptions{
			Problems: *problems, Scores: *scores, Attributions: *attributions, Method: canon, Mode: mode, Tests: tests, Out: *out})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %d records of %s to %s\n", n, canon, *out)
		return nil
	}
	rec, err := experiments.EvaluateFiles(*problem, *scores, *attributions, mode, tests)
	if err != nil {
		return err
	}
	ms := rec.Metrics
	if *asJSON {
		fmt.Fprint(stdout, "{\n")
		for i, x := range ms {
			k, _ := json.Marshal(x.Name)
			v, _ := json.Marshal(x.Value)
			sep := ","
			if i == len(ms)-1 {
				sep = ""
			}
			fmt.Fprintf(stdout, "  %s: %s%s\n", k, v, sep)
		}
		fmt.Fprint(stdout, "}\n")
		return nil
	}
	for _, x := range ms {
		fmt.Fprintf(stdout, "%-22s %.6g\n", x.Name, x.Value)
	}
	return nil
}
