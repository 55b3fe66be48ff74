package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tempora-dev/tempora/experiments"
)

const evaluateHelp = `
Evaluate scores a D × L matrix of cell scores (feature j, timestep t),
produced by any tool, against the ground truth of a synthetic problem
(DIR/truth.json, written by "tempora synth"), with the benchmark's metrics:
feature and timestep power and FDR in the chosen mode and in all-non-zero
mode (the "-all" metrics), and, for a TIME explanation, ordering, window
ordering and average-window power and FDR.

Scores are taken by magnitude; magnitudes below 1e-10 count as zero; a
feature's score is the mean of its non-zero cells. -mode top-n (the baselines'
rule) selects the n highest scores with n = min(#true, #non-zero), ties to the
lower index; -mode all-non-zero (TIME's rule) selects every non-zero score.

The score file is one of:
  .csv   D lines of L comma-separated numbers ('#' lines are ignored)
  .json  a matrix [[...], ...], or an explanation object with "cells"
         (as "tempora explain -json" writes it)`

func runEvaluate(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("evaluate", "-problem DIR -scores FILE [-mode top-n|all-non-zero] [-json]", evaluateHelp, stdout)
	problem := fs.String("problem", "", "synthetic problem `directory` holding truth.json (required)")
	scores := fs.String("scores", "", "score `file` (required)")
	mode := fs.String("mode", "top-n", "selection `mode`: top-n or all-non-zero")
	asJSON := fs.Bool("json", false, "print the metrics as a JSON object")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 0 {
		return usageErrorf("evaluate: unexpected arguments %q (see tempora evaluate -h)", fs.Args())
	}
	if *problem == "" || *scores == "" {
		return usageErrorf("evaluate: -problem and -scores are required (see tempora evaluate -h)")
	}
	var m experiments.Mode
	switch *mode {
	case "top-n":
		m = experiments.TopN
	case "all-non-zero":
		m = experiments.AllNonZero
	default:
		return usageErrorf("evaluate: unknown -mode %q (want top-n or all-non-zero)", *mode)
	}
	ms, err := experiments.EvaluateFile(*problem, *scores, m)
	if err != nil {
		return err
	}
	if *asJSON {
		obj := make([]string, 0, len(ms))
		for _, x := range ms {
			k, _ := json.Marshal(x.Name)
			v, _ := json.Marshal(x.Value)
			obj = append(obj, fmt.Sprintf("  %s: %s", k, v))
		}
		fmt.Fprint(stdout, "{\n")
		for i, s := range obj {
			sep := ","
			if i == len(obj)-1 {
				sep = ""
			}
			fmt.Fprintf(stdout, "%s%s\n", s, sep)
		}
		fmt.Fprint(stdout, "}\n")
		return nil
	}
	for _, x := range ms {
		fmt.Fprintf(stdout, "%-22s %.6g\n", x.Name, x.Value)
	}
	return nil
}
