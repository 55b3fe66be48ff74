package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tempora-dev/tempora"
)

// writeOutputs prints the results of a model with several outputs output
// by output, after the whole model's (writeExplanation): for a method with
// tests, which nodes each output reads among those tested on its loss (the
// nodes important to the whole model), their windows, in lag coordinates
// too for outputs with an anchor, and the causal check; for the others,
// each output's feature scores and peak timesteps. It writes nothing for an
// explanation without per-output results.
func writeOutputs(w io.Writer, e *tempora.Explanation, tests bool) {
	r := e.Outputs
	if r == nil {
		return
	}
	anchored := r.Anchors != nil
	fmt.Fprintf(w, "\nper output (%v, %d outputs", r.Kind, len(r.Outputs))
	if anchored {
		fmt.Fprint(w, "; lag = the output's anchor − timestep: 0 is its own step, negative after it")
	}
	fmt.Fprintln(w, "):")
	if !tests {
		writeOutputScores(w, e)
		return
	}
	if !slices.ContainsFunc(r.Outputs, func(o tempora.OutputResult) bool { return len(testedNodes(o)) > 0 }) {
		fmt.Fprintln(w, "no feature is important to the whole model, so no output was tested")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"output"}
	if anchored {
		head = append(head, "anchor")
	}
	head = append(head, "feature", "important", "score", "p adj", "window")
	if anchored {
		head = append(head, "lag")
	}
	head = append(head, "window p adj", "ordering", "window ordering")
	if r.CausalChecked {
		head = append(head, "future p adj", "reads future")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for k, o := range r.Outputs {
		for _, f := range testedNodes(o) {
			row := []string{o.Name}
			if anchored {
				row = append(row, fmt.Sprint(r.Anchors[k]))
			}
			row = append(row, f.Name, yesNo(f.Important), fmtScore(f.Score), fmtP(f.PAdjusted), foundWindow(f))
			if anchored {
				row = append(row, lagWindows(f, r.Anchors[k]))
			}
			row = append(row, fmtP(f.WindowPAdjusted), outcome(f.OrderingImportant, f.OrderingPValue), outcome(f.WindowOrderingImportant, f.WindowOrderingPValue))
			if r.CausalChecked {
				row = append(row, fmtP(f.FuturePAdjusted), outcome(f.ReadsFuture, f.FuturePValue))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
	tw.Flush()
	writeCausal(w, r)
}

// testedNodes returns the features, then the groups, that output o was
// tested on, each kind ordered by importance (important first, then by
// decreasing score).
func testedNodes(o tempora.OutputResult) []tempora.FeatureResult {
	var out []tempora.FeatureResult
	for _, nodes := range [][]tempora.FeatureResult{o.Features, o.Groups} {
		var tested []tempora.FeatureResult
		for _, f := range nodes {
			if f.Tested {
				tested = append(tested, f)
			}
		}
		slices.SortStableFunc(tested, moreImportant)
		out = append(out, tested...)
	}
	return out
}

// lagWindows renders the windows of f in lag coordinates from anchor a,
// as foundWindow renders them in timesteps: "-" when none was searched.
func lagWindows(f tempora.FeatureResult, a int) string {
	if f.Window == nil {
		return "-"
	}
	lag := func(w tempora.Window) string { return tempora.Window{Start: a - w.End, End: a - w.Start}.String() }
	if len(f.Windows) > 1 {
		parts := make([]string, len(f.Windows))
		for k, w := range f.Windows {
			parts[k] = lag(w.Window)
		}
		return strings.Join(parts, "+")
	}
	return lag(*f.Window)
}

// writeCausal states the causal check's outcome: which outputs read which
// nodes after their own step, or that none does.
func writeCausal(w io.Writer, r *tempora.OutputResults) {
	if !r.CausalChecked {
		return
	}
	var reads []string
	for _, o := range r.Outputs {
		for _, f := range testedNodes(o) {
			if f.ReadsFuture {
				reads = append(reads, fmt.Sprintf("output %s reads %s", o.Name, f.Name))
			}
		}
	}
	if len(reads) == 0 {
		fmt.Fprintln(w, "causal check: no output reads inputs after its own step")
		return
	}
	fmt.Fprintf(w, "causal check: inputs after the output's own step are read: %s\n", strings.Join(reads, "; "))
}

// writeOutputScores prints, for a method without tests, each output's
// features by decreasing score with their peak timestep.
func writeOutputScores(w io.Writer, e *tempora.Explanation) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "output\tfeature\tscore\tpeak timestep\tpeak cell score")
	for _, o := range e.Outputs.Outputs {
		order := make([]int, len(o.Features))
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch sa, sb := o.Features[a].Score, o.Features[b].Score; {
			case sa > sb:
				return -1
			case sa < sb:
				return 1
			}
			return 0
		})
		for _, j := range order {
			t, v := peakOf(o.Cells, j, e.L)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", o.Name, o.Features[j].Name, fmtScore(o.Features[j].Score), t, fmtScore(v))
		}
	}
	tw.Flush()
}

// peakOf returns the timestep of feature j's largest |cell score| among
// cells of rows of l timesteps (the earliest on ties), and that score.
func peakOf(cells []float64, j, l int) (int, float64) {
	best, bt := math.Inf(-1), 0
	for t := range l {
		if a := math.Abs(cells[j*l+t]); a > best {
			best, bt = a, t
		}
	}
	return bt, cells[j*l+bt]
}
