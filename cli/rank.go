package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tempora-dev/tempora/internal/scorefile"
	"github.com/tempora-dev/tempora/metrics"
)

const rankHelp = `
Rank prints each feature's score under the benchmark's rule
(docs/decisions.md, decision 14), from a D × L matrix of cell scores
produced by any tool: the mean magnitude of the feature's cells whose magnitude is at least 1e-10, 0
when it has none. The features are listed in the order of the top-n rule
(higher score first, ties to the lower index): the first n are the n
features the benchmark's top-n mode selects, for n up to the number of
non-zero scores.

The score file is read as by "tempora evaluate -scores" (a .csv of D lines
of L numbers, or a .json matrix or object with "cells").

With -json it prints {"feature_scores": [s_0, …, s_D−1], "ranking": [j, …]}:
the scores in feature order and all D feature indices in rank order. The
Python package's feature_scores and top_features read it.`

// rankOutput is the JSON of "tempora rank -json".
type rankOutput struct {
	FeatureScores []float64 `json:"feature_scores"`
	Ranking       []int     `json:"ranking"`
}

func (p *program) rank(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("rank", rankHelp, stdout)
	scores := fs.String("scores", "", "score `file`: D lines of L numbers (.csv), or a .json matrix or object with \"cells\"")
	asJSON := fs.Bool("json", false, "print the scores and the ranking as a JSON object")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	switch {
	case fs.NArg() != 0:
		return usageErrorf("rank: unexpected arguments %q (see tempora rank -h)", fs.Args())
	case *scores == "":
		return usageErrorf("rank: -scores is required (see tempora rank -h)")
	}
	if p.parseOnly {
		return nil
	}
	e, err := scorefile.Read(*scores)
	if err != nil {
		return err
	}
	out := rankOutput{FeatureScores: metrics.FeatureScores(nil, e.Cells, e.D, e.L)}
	out.Ranking = metrics.Ranking(out.FeatureScores)
	if *asJSON {
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tfeature\tscore")
	for r, j := range out.Ranking {
		fmt.Fprintf(tw, "%d\t%d\t%.6g\n", r+1, j, out.FeatureScores[j])
	}
	return tw.Flush()
}
