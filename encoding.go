package tempora

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The JSON form of an Explanation is the interchange format of tempora's
// command line and of saved results. p-values that were not computed (NaN)
// are written as null; a missing window is null; cells are a list of D rows
// of L scores. "alignment" is written only for end-aligned data ("end");
// its absence means "start". By the same rule "lengths", "missing_rate"
// and "observed" (Explanation.Data, D rows of L shares like "cells") are
// written only for data that is not complete, so that complete data's
// explanations read, write and hash as before; they come and go together.

type jsonExplanation struct {
	Method    string        `json:"method"`
	Test      string        `json:"test,omitempty"`
	Alignment Alignment     `json:"alignment,omitempty"`
	D         int           `json:"num_features"`
	L         int           `json:"num_timesteps"`
	Features  []jsonFeature `json:"features"`
	Groups    []jsonFeature `json:"groups,omitempty"`
	Cells     [][]float64   `json:"cells"`
	// The data summary, omitted for complete data.
	Lengths     []int          `json:"lengths,omitempty"`
	MissingRate []float64      `json:"missing_rate,omitempty"`
	Observed    [][]float64    `json:"observed,omitempty"`
	Accounting  jsonAccounting `json:"accounting"`
	Warnings    []string       `json:"warnings"`
	// Outputs is present only for a model with several outputs.
	Outputs *jsonOutputs `json:"outputs,omitempty"`
	// Output is present only for an explanation of one output of several.
	Output string `json:"output,omitempty"`
	// Diagnostics is present for the methods that report it (TIME).
	Diagnostics *jsonDiagnostics `json:"diagnostics,omitempty"`
}

// jsonDiagnostics is the JSON form of Diagnostics.
type jsonDiagnostics struct {
	BaselineLoss     float64 `json:"baseline_loss"`
	ConstantLoss     float64 `json:"constant_loss"`
	DetectableEffect float64 `json:"detectable_effect"`
}

type jsonAccounting struct {
	ModelCalls     int64   `json:"model_calls"`
	InstanceEvals  int64   `json:"instance_evaluations"`
	WindowProbes   int64   `json:"window_probes"`
	RuntimeSeconds float64 `json:"runtime_seconds"`
	Incomplete     bool    `json:"incomplete"`
	// StoppedBy and Batch are omitted when unset, so that explanations
	// without them read and write as before.
	StoppedBy string     `json:"stopped_by,omitempty"`
	Batch     *jsonBatch `json:"batch,omitempty"`
	// Draws is omitted for methods without permutation tests.
	Draws []jsonDrawCount `json:"draws,omitempty"`
}

// jsonBatch is the JSON form of a Batch.
type jsonBatch struct {
	Size  int             `json:"size"`
	Auto  bool            `json:"auto"`
	Costs []jsonBatchCost `json:"costs,omitempty"`
}

type jsonBatchCost struct {
	Size               int     `json:"size"`
	SecondsPerInstance float64 `json:"seconds_per_instance"`
}

// toJSONBatch and fromJSONBatch convert a Batch (nil stays nil).
func toJSONBatch(b *Batch) *jsonBatch {
	if b == nil {
		return nil
	}
	j := &jsonBatch{Size: b.Size, Auto: b.Auto}
	for _, c := range b.Costs {
		j.Costs = append(j.Costs, jsonBatchCost(c))
	}
	return j
}

func fromJSONBatch(j *jsonBatch) *Batch {
	if j == nil {
		return nil
	}
	b := &Batch{Size: j.Size, Auto: j.Auto}
	for _, c := range j.Costs {
		b.Costs = append(b.Costs, BatchCost(c))
	}
	return b
}

type jsonDrawCount struct {
	Test     string `json:"test"`
	Tests    int64  `json:"tests"`
	Draws    int64  `json:"draws"`
	MaxDraws int64  `json:"max_draws"`
}

type jsonFeature struct {
	Index                   int      `json:"index"`
	Name                    string   `json:"name"`
	Members                 []int    `json:"members,omitempty"`
	Tested                  bool     `json:"tested"`
	Important               bool     `json:"important"`
	Score                   float64  `json:"score"`
	PValue                  *float64 `json:"p_value"`
	PAdjusted               *float64 `json:"p_adjusted"`
	Window                  *Window  `json:"window"`
	WindowScore             float64  `json:"window_score"`
	WindowPValue            *float64 `json:"window_p_value"`
	WindowPAdjusted         *float64 `json:"window_p_adjusted"`
	WindowSignificant       bool     `json:"window_significant"`
	OrderingPValue          *float64 `json:"ordering_p_value"`
	OrderingPAdjusted       *float64 `json:"ordering_p_adjusted"`
	OrderingImportant       bool     `json:"ordering_important"`
	WindowOrderingPValue    *float64 `json:"window_ordering_p_value"`
	WindowOrderingImportant bool     `json:"window_ordering_important"`
	// The causal check, for a feature on one output's loss only.
	FuturePValue    *float64 `json:"future_p_value,omitempty"`
	FuturePAdjusted *float64 `json:"future_p_adjusted,omitempty"`
	ReadsFuture     bool     `json:"reads_future,omitempty"`
	// Undecided is omitted for a node whose tests were all decided.
	Undecided string `json:"undecided,omitempty"`
	// Windows is the list of windows; omitted when none was searched, so
	// that explanations without it read and write as before.
	Windows []jsonWindow `json:"windows,omitempty"`
}

// jsonWindow is the JSON form of a WindowResult.
type jsonWindow struct {
	Window            Window   `json:"window"`
	StartRange        Window   `json:"start_range"`
	EndRange          Window   `json:"end_range"`
	Score             float64  `json:"score"`
	PValue            *float64 `json:"p_value"`
	PAdjusted         *float64 `json:"p_adjusted"`
	Significant       bool     `json:"significant"`
	OrderingPValue    *float64 `json:"ordering_p_value"`
	OrderingPAdjusted *float64 `json:"ordering_p_adjusted"`
	OrderingImportant bool     `json:"ordering_important"`
	// Lag is the window in lag coordinates of the output it explains
	// (an output with an anchor only).
	Lag *lagWindow `json:"lag,omitempty"`
}

// lagWindow is the JSON form of a window in lag coordinates, [start,
// end]: unlike a window of timesteps, its lags are negative after the
// output's anchor (a model that reads the future).
type lagWindow Window

// UnmarshalJSON decodes [start, end], rejecting an end before its start.
func (w *lagWindow) UnmarshalJSON(b []byte) error {
	var a []int
	if err := json.Unmarshal(b, &a); err != nil || len(a) != 2 || a[1] < a[0] {
		var c bytes.Buffer
		json.Compact(&c, b)
		return fmt.Errorf("tempora: lag window %s must be [start, end] with start <= end", c.Bytes())
	}
	*w = lagWindow{Start: a[0], End: a[1]}
	return nil
}

// MarshalJSON encodes w as Window does.
func (w lagWindow) MarshalJSON() ([]byte, error) { return Window(w).MarshalJSON() }

func optFloat(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

func fromOpt(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func toJSONFeature(f FeatureResult) jsonFeature {
	j := jsonFeature{
		Index: f.Index, Name: f.Name, Tested: f.Tested, Important: f.Important, Score: f.Score,
		PValue: optFloat(f.PValue), PAdjusted: optFloat(f.PAdjusted),
		WindowScore: f.WindowScore, WindowPValue: optFloat(f.WindowPValue), WindowPAdjusted: optFloat(f.WindowPAdjusted),
		WindowSignificant: f.WindowSignificant,
		OrderingPValue:    optFloat(f.OrderingPValue), OrderingPAdjusted: optFloat(f.OrderingPAdjusted),
		OrderingImportant:    f.OrderingImportant,
		WindowOrderingPValue: optFloat(f.WindowOrderingPValue), WindowOrderingImportant: f.WindowOrderingImportant,
		FuturePValue: optFloat(f.FuturePValue), FuturePAdjusted: optFloat(f.FuturePAdjusted), ReadsFuture: f.ReadsFuture,
		Undecided: f.Undecided,
	}
	if f.Index < 0 || len(f.Members) != 1 {
		j.Members = f.Members
	}
	j.Window = f.Window
	for _, w := range f.Windows {
		j.Windows = append(j.Windows, toJSONWindow(w))
	}
	return j
}

func fromJSONFeature(j jsonFeature) FeatureResult {
	f := FeatureResult{
		Name: j.Name, Index: j.Index, Members: j.Members, Tested: j.Tested, Score: j.Score,
		PValue: fromOpt(j.PValue), PAdjusted: fromOpt(j.PAdjusted), Important: j.Important,
		WindowScore: j.WindowScore, WindowPValue: fromOpt(j.WindowPValue), WindowPAdjusted: fromOpt(j.WindowPAdjusted),
		WindowSignificant: j.WindowSignificant,
		OrderingPValue:    fromOpt(j.OrderingPValue), OrderingPAdjusted: fromOpt(j.OrderingPAdjusted),
		OrderingImportant:    j.OrderingImportant,
		WindowOrderingPValue: fromOpt(j.WindowOrderingPValue), WindowOrderingImportant: j.WindowOrderingImportant,
		FuturePValue: fromOpt(j.FuturePValue), FuturePAdjusted: fromOpt(j.FuturePAdjusted), ReadsFuture: j.ReadsFuture,
		Undecided: j.Undecided,
	}
	if f.Members == nil && f.Index >= 0 {
		f.Members = []int{f.Index}
	}
	f.Window = j.Window
	for _, w := range j.Windows {
		f.Windows = append(f.Windows, fromJSONWindow(w))
	}
	return f
}

// toJSONWindow and fromJSONWindow convert a WindowResult to and from its
// JSON form: NaN p-values are null.
func toJSONWindow(w WindowResult) jsonWindow {
	return jsonWindow{
		Window: w.Window, StartRange: w.StartRange, EndRange: w.EndRange, Score: w.Score,
		PValue: optFloat(w.PValue), PAdjusted: optFloat(w.PAdjusted), Significant: w.Significant,
		OrderingPValue: optFloat(w.OrderingPValue), OrderingPAdjusted: optFloat(w.OrderingPAdjusted), OrderingImportant: w.OrderingImportant,
		Lag: (*lagWindow)(w.Lag),
	}
}

func fromJSONWindow(j jsonWindow) WindowResult {
	return WindowResult{
		Window: j.Window, StartRange: j.StartRange, EndRange: j.EndRange, Score: j.Score,
		PValue: fromOpt(j.PValue), PAdjusted: fromOpt(j.PAdjusted), Significant: j.Significant,
		OrderingPValue: fromOpt(j.OrderingPValue), OrderingPAdjusted: fromOpt(j.OrderingPAdjusted), OrderingImportant: j.OrderingImportant,
		Lag: (*Window)(j.Lag),
	}
}

// MarshalJSON implements json.Marshaler.
func (e *Explanation) MarshalJSON() ([]byte, error) {
	if len(e.Cells) != e.D*e.L {
		return nil, fmt.Errorf("tempora: explanation has %d cells for %d×%d", len(e.Cells), e.D, e.L)
	}
	j := jsonExplanation{
		Method: e.Method, Test: e.Test, Alignment: e.Alignment, D: e.D, L: e.L, Cells: make([][]float64, e.D), Warnings: e.Warnings,
		Output: e.Output,
		Accounting: jsonAccounting{
			ModelCalls: e.Accounting.ModelCalls, InstanceEvals: e.Accounting.InstanceEvals,
			WindowProbes: e.Accounting.WindowProbes, RuntimeSeconds: e.Accounting.Runtime.Seconds(),
			Incomplete: e.Accounting.Incomplete, StoppedBy: e.Accounting.StoppedBy, Batch: toJSONBatch(e.Accounting.Batch),
		},
	}
	for _, c := range e.Accounting.Draws {
		j.Accounting.Draws = append(j.Accounting.Draws, jsonDrawCount(c))
	}
	if j.Warnings == nil {
		j.Warnings = []string{}
	}
	for r := range j.Cells {
		j.Cells[r] = e.Cells[r*e.L : (r+1)*e.L]
		for t, v := range j.Cells[r] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("tempora: explanation cell (%d, %d) is %v", r, t, v)
			}
		}
	}
	j.Features = make([]jsonFeature, len(e.Features))
	for i, f := range e.Features {
		j.Features[i] = toJSONFeature(f)
	}
	for _, g := range e.Groups {
		j.Groups = append(j.Groups, toJSONFeature(g))
	}
	outs, err := toJSONOutputs(e.Outputs, e.D, e.L)
	if err != nil {
		return nil, err
	}
	j.Outputs = outs
	if g := e.Diagnostics; g != nil {
		for _, v := range []float64{g.BaselineLoss, g.ConstantLoss, g.DetectableEffect} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("tempora: explanation diagnostics %+v are not finite", *g)
			}
		}
		j.Diagnostics = (*jsonDiagnostics)(g)
	}
	if s := e.Data; s != nil {
		if err := checkSummary(s.Lengths, s.MissingRate, s.Observed, e.D, e.L); err != nil {
			return nil, err
		}
		j.Lengths, j.MissingRate, j.Observed = s.Lengths, s.MissingRate, make([][]float64, e.D)
		for r := range j.Observed {
			j.Observed[r] = s.Observed[r*e.L : (r+1)*e.L]
		}
	}
	return json.Marshal(j)
}

// checkSummary checks a data summary of an explanation of d features × l
// timesteps: at least one length, each in [1, l], d missing rates and d·l
// observed shares, each in [0, 1]. Encoding and decoding share it, so
// that a summary written is one that reads.
func checkSummary(lengths []int, rates, observed []float64, d, l int) error {
	if len(lengths) == 0 || len(rates) != d || len(observed) != d*l {
		return fmt.Errorf("tempora: explanation data summary has %d lengths, %d missing rates and %d observed shares for %d×%d (want at least one length, %d rates and %d shares)",
			len(lengths), len(rates), len(observed), d, l, d, d*l)
	}
	for i, n := range lengths {
		if n < 1 || n > l {
			return fmt.Errorf("tempora: explanation data summary: length %d of instance %d is not in [1, %d]", n, i, l)
		}
	}
	for j, v := range rates {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("tempora: explanation data summary: missing rate %v of feature %d is not in [0, 1]", v, j)
		}
	}
	for k, v := range observed {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("tempora: explanation data summary: observed share %v of cell (%d, %d) is not in [0, 1]", v, k/l, k%l)
		}
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler. It checks that the cells have
// the announced D × L shape.
func (e *Explanation) UnmarshalJSON(b []byte) error {
	var j jsonExplanation
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if len(j.Cells) != j.D {
		return fmt.Errorf("tempora: explanation has %d cell rows for %d features", len(j.Cells), j.D)
	}
	*e = Explanation{Method: j.Method, Test: j.Test, Alignment: j.Alignment, D: j.D, L: j.L, Cells: make([]float64, 0, j.D*j.L), Warnings: j.Warnings, Output: j.Output}
	for r, row := range j.Cells {
		if len(row) != j.L {
			return fmt.Errorf("tempora: explanation cell row %d has %d values for %d timesteps", r, len(row), j.L)
		}
		e.Cells = append(e.Cells, row...)
	}
	for _, f := range append(append([]jsonFeature(nil), j.Features...), j.Groups...) {
		if f.Window != nil && f.Window.End >= j.L {
			return fmt.Errorf("tempora: window %v of %q ends after the last timestep %d", *f.Window, f.Name, j.L-1)
		}
		for _, w := range f.Windows {
			for _, r := range []Window{w.Window, w.StartRange, w.EndRange} {
				if r.End >= j.L {
					return fmt.Errorf("tempora: window %v of %q ends after the last timestep %d", r, f.Name, j.L-1)
				}
			}
		}
	}
	for _, f := range j.Features {
		e.Features = append(e.Features, fromJSONFeature(f))
	}
	for _, g := range j.Groups {
		e.Groups = append(e.Groups, fromJSONFeature(g))
	}
	if j.Lengths != nil || j.MissingRate != nil || j.Observed != nil {
		if len(j.Observed) != j.D {
			return fmt.Errorf("tempora: explanation has %d observed rows for %d features", len(j.Observed), j.D)
		}
		s := &DataSummary{Lengths: j.Lengths, MissingRate: j.MissingRate, Observed: make([]float64, 0, j.D*j.L)}
		for r, row := range j.Observed {
			if len(row) != j.L {
				return fmt.Errorf("tempora: explanation observed row %d has %d values for %d timesteps", r, len(row), j.L)
			}
			s.Observed = append(s.Observed, row...)
		}
		if err := checkSummary(s.Lengths, s.MissingRate, s.Observed, j.D, j.L); err != nil {
			return err
		}
		e.Data = s
	}
	outs, err := fromJSONOutputs(j.Outputs, j.D, j.L)
	if err != nil {
		return err
	}
	e.Outputs = outs
	e.Diagnostics = (*Diagnostics)(j.Diagnostics)
	if e.Output != "" && outs != nil {
		return fmt.Errorf("tempora: explanation of output %q carries results per output", e.Output)
	}
	a := j.Accounting
	e.Accounting = Accounting{
		ModelCalls: a.ModelCalls, InstanceEvals: a.InstanceEvals, WindowProbes: a.WindowProbes,
		Runtime: time.Duration(math.Round(a.RuntimeSeconds * float64(time.Second))), Incomplete: a.Incomplete,
		StoppedBy: a.StoppedBy, Batch: fromJSONBatch(a.Batch),
	}
	for _, c := range a.Draws {
		e.Accounting.Draws = append(e.Accounting.Draws, DrawCount(c))
	}
	return nil
}

// CSVHeader is the header row of WriteCSV.
var CSVHeader = []string{
	"index", "name", "tested", "important", "score", "p_value", "p_adjusted",
	"window_start", "window_end", "window_score", "window_p_value", "window_p_adjusted", "window_significant",
	"ordering_p_value", "ordering_p_adjusted", "ordering_important",
	"window_ordering_p_value", "window_ordering_important", "windows",
}

// OutputsCSVHeader is the header row of WriteCSV for an explanation with
// per-output results (Outputs): the output's name, CSVHeader's columns,
// then a feature's windows in lag coordinates and its causal check.
var OutputsCSVHeader = append(append([]string{"output"}, CSVHeader...), "lags", "future_p_value", "future_p_adjusted", "reads_future")

// WriteCSV writes one row per feature (then one per tested group, with index
// -1) in the column order of CSVHeader. Values not computed are empty. The
// last column lists a feature's windows as start-end, separated by ";",
// with "*" after each significant one and "o" after each whose ordering
// matters (e.g. "2-5*;14-17*o").
//
// An explanation with per-output results (Outputs) is written in the
// columns of OutputsCSVHeader: the whole model's rows, whose output is
// empty, then each output's rows (every feature, then its tested groups)
// under its name, with its windows in lag coordinates (lags, as windows,
// for outputs with an anchor) and its causal check. An explanation of one
// output is written as before.
func (e *Explanation) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	outs := e.Outputs
	if outs == nil {
		cw.Write(CSVHeader)
	} else {
		cw.Write(OutputsCSVHeader)
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 10, 64)
	}
	row := func(f FeatureResult) []string {
		ws, we := "", ""
		if f.Window != nil {
			ws, we = strconv.Itoa(f.Window.Start), strconv.Itoa(f.Window.End)
		}
		// A decision a budget stopped before it was made (Undecided) is
		// written empty, not false.
		b := func(v bool, step string) string {
			if undecidedAt(f.Undecided, step) {
				return ""
			}
			return strconv.FormatBool(v)
		}
		return []string{
			strconv.Itoa(f.Index), f.Name, strconv.FormatBool(f.Tested), b(f.Important, "overall"),
			num(f.Score), num(f.PValue), num(f.PAdjusted),
			ws, we, num(f.WindowScore), num(f.WindowPValue), num(f.WindowPAdjusted), b(f.WindowSignificant, "window"),
			num(f.OrderingPValue), num(f.OrderingPAdjusted), b(f.OrderingImportant, "window"),
			num(f.WindowOrderingPValue), b(f.WindowOrderingImportant, "window ordering"), windowList(f.Windows),
		}
	}
	rows := append(append([]FeatureResult(nil), e.Features...), e.Groups...)
	for _, f := range rows {
		if outs == nil {
			cw.Write(row(f))
			continue
		}
		cw.Write(append(append([]string{""}, row(f)...), "", "", "", ""))
	}
	if outs != nil {
		for _, o := range outs.Outputs {
			for _, f := range append(append([]FeatureResult(nil), o.Features...), o.Groups...) {
				future := strconv.FormatBool(f.ReadsFuture)
				if undecidedAt(f.Undecided, "future") {
					future = ""
				}
				cw.Write(append(append([]string{o.Name}, row(f)...), lagList(f.Windows), num(f.FuturePValue), num(f.FuturePAdjusted), future))
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// lagList renders the lag windows of ws (WindowResult.Lag) for the CSV's
// lags column as windowList renders windows; empty for windows without
// one.
func lagList(ws []WindowResult) string {
	var parts []string
	for _, w := range ws {
		if w.Lag == nil {
			continue
		}
		p := strconv.Itoa(w.Lag.Start) + "-" + strconv.Itoa(w.Lag.End)
		if w.Significant {
			p += "*"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ";")
}

// windowList renders windows for the CSV's windows column.
func windowList(ws []WindowResult) string {
	parts := make([]string, len(ws))
	for k, w := range ws {
		parts[k] = strconv.Itoa(w.Window.Start) + "-" + strconv.Itoa(w.Window.End)
		if w.Significant {
			parts[k] += "*"
		}
		if w.OrderingImportant {
			parts[k] += "o"
		}
	}
	return strings.Join(parts, ";")
}

// UndecidedSteps orders the steps of a node's tests as
// FeatureResult.Undecided names them.
var UndecidedSteps = []string{"overall", "window", "window ordering", "future"}

// undecidedAt reports whether the decision of step is not made in a node
// whose first undecided step is undecided ("" when every step was
// decided): step is that step or a later one.
func undecidedAt(undecided, step string) bool {
	if undecided == "" {
		return false
	}
	return slices.Index(UndecidedSteps, step) >= slices.Index(UndecidedSteps, undecided)
}
