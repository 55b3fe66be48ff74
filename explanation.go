package tempora

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"
)

// Explainer explains a model's use of a dataset. Implementations are value
// configs whose zero value is a documented default (see explain.TIME and the
// baselines); randomness comes from a seed in the config, so the same config
// on the same inputs gives the same explanation.
//
// Explain validates its inputs and returns an error, never a panic, for bad
// data. It honours ctx cancellation between model calls.
type Explainer interface {
	Explain(ctx context.Context, m Model, data *Dataset) (*Explanation, error)
}

// Window is a contiguous range of timesteps [Start, End], 0-based and
// inclusive at both ends.
type Window struct {
	Start, End int
}

// Len returns the number of timesteps in w.
func (w Window) Len() int { return w.End - w.Start + 1 }

// String returns "[start, end]".
func (w Window) String() string { return fmt.Sprintf("[%d, %d]", w.Start, w.End) }

// Contains reports whether timestep t lies in w.
func (w Window) Contains(t int) bool { return t >= w.Start && t <= w.End }

// Explanation is what every explainer returns: a D × L matrix of cell scores
// (what the benchmark scores against ground truth), per-feature results, and
// the accounting of what it cost.
type Explanation struct {
	// Method names the explainer, e.g. "TIME" or "SAGE-m".
	Method string
	// Test names the kind of permutation test run when it is not the
	// default marginal one: "conditional" for TIME's conditional tests
	// (explain.TIME.Conditional); empty otherwise.
	Test string
	// Alignment is the explained dataset's alignment: the timesteps of the
	// cells and windows are in this aligned time (see Observation).
	Alignment Alignment
	// Data summarises where the explained data is observed when it is not
	// complete (missing values, sequences of different lengths); nil for
	// complete data. method.Measure, which runs every explainer for the
	// command line and the benchmark, sets it from the data whatever the
	// explainer reported, so that readers of the JSON need not have the
	// data to know it.
	Data *DataSummary
	// D and L are the number of features and timesteps explained.
	D, L int
	// Cells holds D*L scores in row-major order: Cells[j*L+t] is the score of
	// feature j at timestep t. Larger magnitude means more important.
	Cells []float64
	// Features has one entry per feature, in index order. Methods fill what
	// they compute; p-values they do not compute are NaN.
	Features []FeatureResult
	// Groups has one entry per tested feature group of a user hierarchy, in
	// pre-order; nil without a hierarchy.
	Groups []FeatureResult
	// Accounting records the cost of the explanation.
	Accounting Accounting
	// Warnings are non-fatal problems, e.g. "SAGE did not converge within
	// budget".
	Warnings []string
	// Outputs holds the results per output of a model with several
	// outputs (Dataset.Outputs); nil for one output, and for an
	// explanation of one output (Output).
	Outputs *OutputResults
	// Output names the one output of a model with several outputs that
	// the explanation explains (Outputs.Name), when a method was asked to
	// explain that output alone: Cells, Features and Groups are then that
	// output's. Empty for an explanation of the whole model, the only kind
	// there is for a model with one output.
	Output string
	// Diagnostics says how much the tests could see (TIME); nil for
	// methods that do not report it.
	Diagnostics *Diagnostics
}

// Diagnostics are what a reader of an explanation that found little needs
// to know: how good the model is, and how large an effect the tests could
// have found.
type Diagnostics struct {
	// BaselineLoss is the model's mean loss on the data, and ConstantLoss
	// the mean loss of the best constant prediction (the mean target, the
	// rate of 1s, each class's frequency; Scorer.ConstantLoss): a model
	// whose loss is not below it has nothing for a feature to carry.
	BaselineLoss, ConstantLoss float64
	// DetectableEffect is about the smallest importance score (the rise
	// of the mean loss when a feature is permuted) that the first family's
	// tests find about half the time: z(1 − α/m) times the median, over
	// the family's tests whose draws moved the loss, of the spread (SD) of
	// their draws' perturbed mean losses, m the family's size; 0 when no
	// draw moved it. With more instances the spread, and with it the
	// detectable effect, shrinks like 1/√M.
	DetectableEffect float64
}

// DataSummary is an explanation's summary of where its data is observed
// (Observation.Summary makes it): each instance's sequence length, each
// feature's missing rate and the share of instances observed in every
// cell.
type DataSummary struct {
	// Lengths[i] is instance i's sequence length: the length of its
	// support (Observation.Support), in aligned time.
	Lengths []int
	// MissingRate[j] is the share of feature j's cells inside the
	// sequences that are missing (Observation.MissingRate: padding
	// outside the sequences is not counted).
	MissingRate []float64
	// Observed holds D*L shares in row-major order, as Cells:
	// Observed[j*L+t] is the share of all instances whose feature j is
	// observed at timestep t (an instance's padding is not observed), so
	// that a window where few instances are observed can be told from one
	// that rests on all of them.
	Observed []float64
}

// Cell returns the score of feature j at timestep t.
func (e *Explanation) Cell(j, t int) float64 { return e.Cells[j*e.L+t] }

// Accounting records what an explanation cost.
type Accounting struct {
	// ModelCalls counts calls of Model.Predict.
	ModelCalls int64
	// InstanceEvals counts instances predicted, summed over calls.
	InstanceEvals int64
	// WindowProbes counts the window-search probes, including those of
	// the gap split into several windows (TIME only).
	WindowProbes int64
	// Runtime is the wall time of Explain.
	Runtime time.Duration
	// Incomplete is true when the method stopped on a budget before its own
	// stopping rule (e.g. SAGE's convergence test) was met.
	Incomplete bool
	// StoppedBy names the budget that stopped a run before its decisions
	// were all made (TIME: "max-calls" or "max-time"): the explanation
	// then holds the decisions settled before it, each feature whose tests
	// had not finished is marked Undecided, and Incomplete is true. Empty
	// otherwise.
	StoppedBy string
	// Batch is the batch size of the model calls when it was set or
	// chosen (TIME's batch); nil otherwise.
	Batch *Batch
	// Draws breaks the permutation draws down by kind of test, in a fixed
	// order (TIME: overall, window search, ordering, window, window
	// ordering; PERM: cell); nil for methods that do not run permutation
	// tests.
	Draws []DrawCount
}

// RunEstimate is a method's estimate of what a run costs, made during the
// run from its first model calls (TIME: after the baseline, and again once
// its feature tests are decided): the model calls and instance
// evaluations of the whole run, made so far included, at most, and the
// wall time of the rest at the cost per instance measured so far.
type RunEstimate struct {
	// After names what the estimate follows: "baseline" or "feature
	// tests".
	After string
	// ModelCalls and InstanceEvals are the run's totals at most: every
	// test still to run goes to its cap, and (after the baseline) every
	// feature and group is important.
	ModelCalls, InstanceEvals float64
	// SecondsPerInstance is the measured wall time per instance
	// evaluation: the baseline's (or, with a batch size chosen by timing,
	// the chosen size's), then the feature tests' own, with the run's
	// workers.
	SecondsPerInstance float64
	// SecondsLeft is the wall time of the evaluations still to come at
	// most, at SecondsPerInstance.
	SecondsLeft float64
}

// Batch is the batch size of an explanation's model calls: the most
// instances per call, given or chosen by timing the model at a few sizes.
// The results do not depend on it, only the model calls do.
type Batch struct {
	// Size is the most instances per model call the run used.
	Size int
	// Auto reports that Size was chosen by timing the model (Costs).
	Auto bool
	// Costs are the measured costs of the sizes timed, largest first
	// (Auto only).
	Costs []BatchCost
}

// BatchCost is the measured cost of one batch size: the wall time of a
// pass over the data in calls of Size instances, per instance.
type BatchCost struct {
	Size               int
	SecondsPerInstance float64
}

// DrawCount is the cost of one kind of permutation test. Each draw is one
// model call on all instances.
type DrawCount struct {
	// Test names the kind of test.
	Test string
	// Tests is the number of tests run.
	Tests int64
	// Draws is the number of draws evaluated, including any evaluated in
	// a batch after a sequential test's stopping point.
	Draws int64
	// MaxDraws is the number of draws the same tests make without
	// stopping early, each running to its cap: what fixed-P tests with the
	// same caps would have cost. Draws = MaxDraws in fixed mode.
	MaxDraws int64
}

// Saved returns the fraction of MaxDraws that the sequential tests did
// not need, 1 − Draws/MaxDraws (0 when MaxDraws is 0).
func (c DrawCount) Saved() float64 {
	if c.MaxDraws == 0 {
		return 0
	}
	return 1 - float64(c.Draws)/float64(c.MaxDraws)
}

// WriteDraws writes a's draw counts as a table with a total row, one line
// per kind of test:
//
//	test             tests  draws  max draws  saved
//	overall             10    545        990  45.0%
//	…
//	total               60   1085       4500  75.9%
//
// It writes nothing when a has no draw counts.
func (a Accounting) WriteDraws(w io.Writer) error {
	if len(a.Draws) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "test\ttests\tdraws\tmax draws\tsaved")
	for _, c := range append(append([]DrawCount(nil), a.Draws...), a.TotalDraws()) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f%%\n", c.Test, c.Tests, c.Draws, c.MaxDraws, 100*c.Saved())
	}
	return tw.Flush()
}

// TotalDraws returns the sum of a's draw counts, with Test "total".
func (a Accounting) TotalDraws() DrawCount {
	t := DrawCount{Test: "total"}
	for _, c := range a.Draws {
		t.Tests += c.Tests
		t.Draws += c.Draws
		t.MaxDraws += c.MaxDraws
	}
	return t
}

// FeatureResult is the result for one feature, or for one group of features
// tested jointly. Fields a method does not compute keep their zero value,
// except p-values, which are NaN ("not computed").
type FeatureResult struct {
	// Name is the feature's or group's name; Index is the feature index, or
	// -1 for a group. Members lists the features of the node (one for a
	// feature).
	Name    string
	Index   int
	Members []int
	// Tested is false when a hierarchical method never reached this node
	// because its parent was not rejected.
	Tested bool
	// Score is the importance score (TIME: mean perturbed loss minus mean
	// baseline loss on the whole sequence).
	Score float64
	// PValue is the raw p-value of the importance test and PAdjusted its
	// Benjamini–Hochberg adjustment within its family.
	PValue, PAdjusted float64
	// Important reports a rejected importance test.
	Important bool
	// Window is the localised window, nil when none was searched.
	Window *Window
	// WindowScore is the importance score of the window.
	WindowScore float64
	// WindowPValue and WindowPAdjusted are the window test's p-values.
	WindowPValue, WindowPAdjusted float64
	// WindowSignificant reports a rejected window test.
	WindowSignificant bool
	// OrderingPValue and OrderingPAdjusted are the whole-sequence ordering
	// test's p-values; OrderingImportant reports its rejection.
	OrderingPValue, OrderingPAdjusted float64
	OrderingImportant                 bool
	// WindowOrderingPValue is the within-window ordering test's p-value
	// and WindowOrderingImportant reports its rejection; with several
	// windows (TIME), the smallest p-value of the windows' ordering tests,
	// and whether the ordering matters in some window (each window's test
	// is in Windows).
	WindowOrderingPValue    float64
	WindowOrderingImportant bool
	// FuturePValue and FuturePAdjusted are the causal check of a feature
	// on one output's loss (TIME, an output with an anchor inside the
	// sequence): an across-instance test of the feature over the
	// timesteps after the anchor, adjusted within the feature's outputs;
	// ReadsFuture reports its rejection, an output that reads inputs after
	// its own step. NaN when not tested.
	FuturePValue, FuturePAdjusted float64
	ReadsFuture                   bool
	// Undecided names the first of the node's tests that a budget stopped
	// before they were decided (Accounting.StoppedBy), as
	// Accounting.Draws names the kinds of test: "overall" (its
	// importance), "window" (its windows and whole-sequence ordering),
	// "window ordering" or "future" (the causal check); that test and the
	// node's later ones are not answers (Important false there means not
	// decided, not unimportant). Empty when every test the node needed was
	// decided.
	Undecided string
	// Windows lists the feature's windows in time order, with their tests
	// and the uncertainty of their ends (TIME); nil when no window was
	// searched. Window and the Window… fields above repeat its lead window
	// (TIME: the one with the smallest adjusted p-value, the earliest on
	// ties; the only one when there is one), for records and readers of
	// one window; the WindowOrdering… fields summarise every window's. Both forms are part of the JSON
	// format ("window", "window_…" and "windows"), so neither is derived
	// from the other when reading or writing.
	Windows []WindowResult
}

// WindowResult is one window of a feature: where it lies, how sure its
// ends are, and its tests.
type WindowResult struct {
	// Window is the window.
	Window Window
	// StartRange and EndRange are the ranges in which the window's start
	// and end lie by the search's probes whose interval settled their
	// comparison with the threshold: the ends the search chose, widened
	// to where probes that were too noisy to be sure could have put them.
	// A range of one timestep is an end fixed by sure probes.
	StartRange, EndRange Window
	// Score, PValue, PAdjusted and Significant are the window's importance
	// test (an across-instance permutation of the feature over Window).
	Score             float64
	PValue, PAdjusted float64
	Significant       bool
	// OrderingPValue, OrderingPAdjusted and OrderingImportant are the
	// ordering test within Window; NaN p-values when it was not tested
	// (the window is not significant).
	OrderingPValue, OrderingPAdjusted float64
	OrderingImportant                 bool
	// Lag is Window in lag coordinates of the output it explains
	// (Outputs.Lag: lag 0 the output's own step); nil for the whole model
	// and for outputs without an anchor (classes).
	Lag *Window
}

// NewFeatureResult returns an untested result for feature j with every
// p-value NaN.
func NewFeatureResult(j int, name string) FeatureResult {
	nan := math.NaN()
	return FeatureResult{
		Name: name, Index: j, Members: []int{j},
		PValue: nan, PAdjusted: nan, WindowPValue: nan, WindowPAdjusted: nan,
		OrderingPValue: nan, OrderingPAdjusted: nan, WindowOrderingPValue: nan,
		FuturePValue: nan, FuturePAdjusted: nan,
	}
}

// NewExplanation returns an explanation of method for data with zeroed cells
// and one untested FeatureResult per feature.
func NewExplanation(method string, data *Dataset) *Explanation {
	d, l := data.X.D, data.X.L
	e := &Explanation{Method: method, Alignment: data.Alignment, D: d, L: l, Cells: make([]float64, d*l), Features: make([]FeatureResult, d), Outputs: NewOutputResults(data.Outputs, data)}
	for j := range e.Features {
		e.Features[j] = NewFeatureResult(j, data.Name(j))
	}
	return e
}

// MarshalJSON encodes w as the two-element array [start, end].
func (w Window) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("[%d,%d]", w.Start, w.End)), nil
}

// UnmarshalJSON decodes the two-element array [start, end]; it rejects
// negative starts and ends before starts.
func (w *Window) UnmarshalJSON(b []byte) error {
	var a []int
	if err := json.Unmarshal(b, &a); err != nil {
		return fmt.Errorf("tempora: window must be [start, end]: %w", err)
	}
	if len(a) != 2 || a[0] < 0 || a[1] < a[0] {
		// Compact the JSON so that the message stays on one line.
		var c bytes.Buffer
		json.Compact(&c, b)
		return fmt.Errorf("tempora: window %s must be [start, end] with 0 <= start <= end", c.Bytes())
	}
	*w = Window{Start: a[0], End: a[1]}
	return nil
}
