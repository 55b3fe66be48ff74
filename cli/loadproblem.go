package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/synth"
)

// loadedProblem is a synthetic problem as explain and serve use it: its
// model, its data (with Outputs for a model with several outputs) and its
// ground truth, the whole model's and, for several outputs, each output's.
type loadedProblem struct {
	model   tempora.Model
	data    *tempora.Dataset
	truth   []synth.FeatureTruth
	outputs []synth.OutputTruth // nil for one output
}

// loadProblem loads the problem "tempora synth" (or "tempora problems")
// wrote into dir: with one output (synth.Load) or several
// (synth.LoadOutputs), as its problem.json says.
func loadProblem(dir string) (*loadedProblem, error) {
	if synth.HasOutputs(dir) {
		p, err := synth.LoadOutputs(dir)
		if err != nil {
			return nil, err
		}
		return &loadedProblem{model: p.Model, data: p.Data, truth: p.Truth, outputs: p.Outputs}, nil
	}
	p, err := synth.Load(dir)
	if err != nil {
		return nil, err
	}
	return &loadedProblem{model: p.Model, data: p.Data, truth: p.Truth}, nil
}

// writeOutputsComparison prints, for a problem with several outputs, each
// output's results next to its truth: the features relevant to the output
// or found for it, their true and found windows, in lag coordinates too
// for outputs with an anchor, and whether the output reads the feature
// after its own step. As for the whole model (writeComparison), a feature
// is found for an output when it is important to it (a method with tests)
// or among its n highest scores, n being the features relevant to it.
func writeOutputsComparison(w io.Writer, e *tempora.Explanation, outs []synth.OutputTruth, tests bool) {
	if outs == nil || e.Outputs == nil || len(e.Outputs.Outputs) != len(outs) {
		return
	}
	anchored := e.Outputs.Anchors != nil
	fmt.Fprintln(w, "\nground truth per output:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "output\tfeature\trelevant\tfound\ttrue window\tfound window")
	if anchored {
		fmt.Fprint(tw, "\ttrue lag\tfound lag\treads future true/found")
	}
	fmt.Fprintln(tw)
	var rel, hits, falsePos, exact int
	for k, ot := range outs {
		res := e.Outputs.Outputs[k]
		found := foundFeatures(res.Features, ot.Features, tests)
		for j, t := range ot.Features {
			f := res.Features[j]
			if t.Relevant {
				rel++
			}
			switch {
			case found[j] && t.Relevant:
				hits++
				if f.Window != nil && f.WindowSignificant && *f.Window == t.Window {
					exact++
				}
			case found[j]:
				falsePos++
			}
			if !t.Relevant && !found[j] {
				continue
			}
			trueWin, fw := "-", "-"
			if t.Relevant {
				trueWin = t.Window.String()
			}
			if found[j] && tests {
				fw = foundWindow(f)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s", ot.Name, t.Name, yesNo(t.Relevant), yesNo(found[j]), trueWin, fw)
			if anchored {
				trueLag, fl := "-", "-"
				if t.Relevant {
					trueLag = ot.Lags[j].String()
				}
				if found[j] && tests {
					fl = lagWindows(f, e.Outputs.Anchors[k])
				}
				fmt.Fprintf(tw, "\t%s\t%s\t%s/%s", trueLag, fl, yesNo(ot.ReadsFuture(j)), outcome(f.ReadsFuture, f.FuturePValue))
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "found %d of %d relevant (output, feature) pairs, %d irrelevant ones", hits, rel, falsePos)
	if tests {
		fmt.Fprintf(w, "; significant window exactly right for %d of the %d found", exact, hits)
	}
	fmt.Fprintln(w)
}

// foundFeatures returns which features of results are found against
// truth: important ones for a method with tests, else the n highest
// positive scores, n the number of relevant features.
func foundFeatures(results []tempora.FeatureResult, truth []synth.FeatureTruth, tests bool) []bool {
	found := make([]bool, len(results))
	if tests {
		for j, f := range results {
			found[j] = f.Important
		}
		return found
	}
	n := 0
	for _, t := range truth {
		if t.Relevant {
			n++
		}
	}
	for r, j := range byImportance(&tempora.Explanation{Features: results}) {
		found[j] = r < n && results[j].Score > 0
	}
	return found
}
