package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/synth"
)

// byImportance returns the indices of e's features ordered by importance:
// important features first, then by decreasing score, then by index.
func byImportance(e *tempora.Explanation) []int {
	order := make([]int, len(e.Features))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return moreImportant(e.Features[a], e.Features[b]) })
	return order
}

func fmtP(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.4f", p)
}

func fmtScore(v float64) string { return fmt.Sprintf("%.4g", v) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// outcome renders a test's outcome: "-" when it was not run (NaN p-value).
func outcome(ok bool, p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return yesNo(ok)
}

// foundWindow renders the windows TIME reports for a feature: "-" when none
// was searched, the windows joined by "+" when there are several, each
// with "(n.s.)" when its test was not significant (a feature without a
// significant window claims no timesteps, or the whole sequence under
// -window-rule paper).
func foundWindow(f tempora.FeatureResult) string {
	if f.Window == nil {
		return "-"
	}
	if len(f.Windows) > 1 {
		parts := make([]string, len(f.Windows))
		for k, w := range f.Windows {
			parts[k] = w.Window.String()
			if !w.Significant {
				parts[k] += " (n.s.)"
			}
		}
		return strings.Join(parts, "+")
	}
	if !f.WindowSignificant {
		return f.Window.String() + " (n.s.)"
	}
	return f.Window.String()
}

// writeExplanation prints the method's results, features sorted by
// importance. tests selects the columns of a method with tests (p-values,
// windows, ordering); other methods have scores only.
func writeExplanation(w io.Writer, e *tempora.Explanation, data *tempora.Dataset, settings string, tests bool) {
	fmt.Fprintf(w, "%s: %d instances × %d features × %d timesteps, %v", e.Method, data.X.M, e.D, e.L, data.Task)
	if o := data.Outputs; o != nil {
		fmt.Fprintf(w, ", %d outputs (%v)", o.K, o.Kind)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "settings: %s\n", settings)
	fmt.Fprintf(w, "model calls %d, instance evaluations %d", e.Accounting.ModelCalls, e.Accounting.InstanceEvals)
	if e.Accounting.WindowProbes > 0 {
		fmt.Fprintf(w, ", window probes %d", e.Accounting.WindowProbes)
	}
	fmt.Fprintln(w)
	writeBatch(w, e.Accounting.Batch)
	if by := e.Accounting.StoppedBy; by != "" {
		fmt.Fprintf(w, "stopped by the budget (-%s): %d features or groups undecided (their tests did not finish; not unimportant)\n", by, undecided(e))
	}
	if tests {
		n := 0
		for _, f := range e.Features {
			if f.Important {
				n++
			}
		}
		fmt.Fprintf(w, "important features: %d of %d\n", n, e.D)
	}
	if g := e.Diagnostics; g != nil {
		fmt.Fprintf(w, "model's mean loss %.4g (a constant prediction's %.4g)", g.BaselineLoss, g.ConstantLoss)
		if g.DetectableEffect > 0 {
			fmt.Fprintf(w, "; an importance of about %.3g is found half the time", g.DetectableEffect)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if tests {
		fmt.Fprintln(tw, "rank\tfeature\timportant\tscore\tp\tp adj\twindow\twindow p adj\tordering\twindow ordering")
		for r, j := range byImportance(e) {
			f := e.Features[j]
			imp := yesNo(f.Important)
			if !f.Tested {
				imp = "untested"
			}
			win := foundWindow(f)
			switch f.Undecided {
			case "overall":
				imp = "undecided"
			case "window":
				win = "undecided"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r+1, f.Name, imp, fmtScore(f.Score), fmtP(f.PValue), fmtP(f.PAdjusted),
				win, fmtP(f.WindowPAdjusted), outcome(f.OrderingImportant, f.OrderingPValue), outcome(f.WindowOrderingImportant, f.WindowOrderingPValue))
		}
	} else {
		fmt.Fprintln(tw, "rank\tfeature\tscore\tpeak timestep\tpeak cell score")
		for r, j := range byImportance(e) {
			f := e.Features[j]
			t, v := peakCell(e, j)
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\n", r+1, f.Name, fmtScore(f.Score), t, fmtScore(v))
		}
	}
	tw.Flush()

	if len(e.Groups) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "group\tmembers\ttested\timportant\tscore\tp\tp adj\twindow\tordering")
		for _, g := range e.Groups {
			members := make([]string, len(g.Members))
			for k, j := range g.Members {
				members[k] = data.Name(j)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Name, strings.Join(members, ","), yesNo(g.Tested), yesNo(g.Important),
				fmtScore(g.Score), fmtP(g.PValue), fmtP(g.PAdjusted), foundWindow(g), outcome(g.OrderingImportant, g.OrderingPValue))
		}
		tw.Flush()
	}
	writeOutputs(w, e, tests)
	if len(e.Accounting.Draws) > 0 {
		fmt.Fprintln(w, "\npermutation draws per test family (saved: against fixed tests with the same caps)")
		e.Accounting.WriteDraws(w)
	}
	for _, msg := range e.Warnings {
		fmt.Fprintln(w, "warning:", msg)
	}
	if e.Accounting.Incomplete && len(e.Warnings) == 0 {
		fmt.Fprintln(w, "warning: the method stopped on its budget before its own stopping rule was met")
	}
}

// writeBatch prints the batch size of the model calls, when one was set
// or chosen, with the measured costs of the sizes timed.
func writeBatch(w io.Writer, b *tempora.Batch) {
	if b == nil {
		return
	}
	fmt.Fprintf(w, "batch: %d instances per model call", b.Size)
	if b.Auto {
		costs := make([]string, len(b.Costs))
		for k, c := range b.Costs {
			costs[k] = fmt.Sprintf("%d: %.3g ms", c.Size, 1e3*c.SecondsPerInstance)
		}
		fmt.Fprintf(w, " (chosen by timing per instance: %s)", strings.Join(costs, ", "))
	}
	fmt.Fprintln(w)
}

// undecided counts the features and groups of e that a budget left
// undecided.
func undecided(e *tempora.Explanation) int {
	n := 0
	for _, f := range append(append([]tempora.FeatureResult(nil), e.Features...), e.Groups...) {
		if f.Undecided != "" {
			n++
		}
	}
	return n
}

// peakCell returns the timestep of feature j's largest |cell score| (the
// earliest on ties) and that score.
func peakCell(e *tempora.Explanation, j int) (int, float64) {
	best, bt := math.Inf(-1), 0
	for t := 0; t < e.L; t++ {
		if a := math.Abs(e.Cell(j, t)); a > best {
			best, bt = a, t
		}
	}
	return bt, e.Cell(j, bt)
}

// writeComparison prints the explanation next to the problem's ground
// truth. For a method with tests a feature is found when it is important;
// for the others, when it is among the n highest scores, n being the number
// of relevant features (the benchmark's top-n rule).
func writeComparison(w io.Writer, e *tempora.Explanation, truth []synth.FeatureTruth, tests bool) {
	nRel := 0
	for _, t := range truth {
		if t.Relevant {
			nRel++
		}
	}
	found := make([]bool, len(e.Features))
	if tests {
		for j, f := range e.Features {
			found[j] = f.Important
		}
	} else {
		for r, j := range byImportance(e) {
			found[j] = r < nRel && e.Features[j].Score > 0
		}
	}

	fmt.Fprintln(w)
	if tests {
		fmt.Fprintln(w, "ground truth:")
	} else {
		fmt.Fprintf(w, "ground truth (found = among the top %d scores):\n", nRel)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if tests {
		fmt.Fprintln(tw, "feature\trelevant\tfound\ttrue window\tfound window\tordering true/found\twindow ordering true/found")
	} else {
		fmt.Fprintln(tw, "feature\trelevant\tfound\ttrue window")
	}
	var hits, falsePos, exact int
	for j, t := range truth {
		f := e.Features[j]
		trueWin := "-"
		if t.Relevant {
			trueWin = t.Window.String()
		}
		switch {
		case found[j] && t.Relevant:
			hits++
			if tests && f.Window != nil && f.WindowSignificant && *f.Window == t.Window {
				exact++
			}
		case found[j]:
			falsePos++
		}
		if tests {
			fw := "-"
			if f.Important {
				fw = foundWindow(f)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s/%s\t%s/%s\n", t.Name, yesNo(t.Relevant), yesNo(found[j]), trueWin, fw,
				yesNo(t.OrderingImportant), outcome(f.OrderingImportant, f.OrderingPValue),
				yesNo(t.WindowOrderingImportant), outcome(f.WindowOrderingImportant, f.WindowOrderingPValue))
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, yesNo(t.Relevant), yesNo(found[j]), trueWin)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "found %d of %d relevant features, %d irrelevant ones", hits, nRel, falsePos)
	if tests {
		fmt.Fprintf(w, "; significant window exactly right for %d of the %d found", exact, hits)
	}
	fmt.Fprintln(w)
}

// moreImportant orders the rows of a report: important features first,
// then by score, highest first (ties keep their order under a stable
// sort).
func moreImportant(a, b tempora.FeatureResult) int {
	switch {
	case a.Important != b.Important:
		if a.Important {
			return -1
		}
		return 1
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return 0
}
