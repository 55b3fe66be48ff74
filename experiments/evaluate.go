package experiments

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/internal/safefile"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/metrics"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/synth"
)

// ReadTruth reads the ground truth of a synthetic problem directory written
// by synth (its truth.json), without loading the data.
func ReadTruth(dir string) (tr *record.Truth, l int, err error) {
	path := filepath.Join(dir, synth.TruthFile)
	b, err := safefile.ReadFile(path, safefile.JSONLimit, "a truth file")
	if err != nil {
		return nil, 0, fmt.Errorf("experiments: %w", err)
	}
	var jt struct {
		Format   string `json:"format"`
		L        int    `json:"num_timesteps"`
		Features []struct {
			Index                   int            `json:"index"`
			Relevant                bool           `json:"relevant"`
			Window                  tempora.Window `json:"window"`
			EffectSize              float64        `json:"effect_size"`
			OrderingImportant       bool           `json:"ordering_important"`
			WindowOrderingImportant bool           `json:"window_ordering_important"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &jt); err != nil {
		return nil, 0, fmt.Errorf("experiments: %s: %w", path, err)
	}
	if jt.Format != synth.TruthFormat {
		return nil, 0, fmt.Errorf("experiments: %s: format %q, want %q", path, jt.Format, synth.TruthFormat)
	}
	d := len(jt.Features)
	tr = &record.Truth{
		Relevant: make([]bool, d), Windows: make([]tempora.Window, d), EffectSize: make([]float64, d),
		OrderingImportant: make([]bool, d), WindowOrderingImportant: make([]bool, d),
	}
	for j, f := range jt.Features {
		if f.Index != j {
			return nil, 0, fmt.Errorf("experiments: %s: feature %d has index %d", path, j, f.Index)
		}
		tr.Relevant[j], tr.Windows[j], tr.EffectSize[j] = f.Relevant, f.Window, f.EffectSize
		tr.OrderingImportant[j], tr.WindowOrderingImportant[j] = f.OrderingImportant, f.WindowOrderingImportant
	}
	if err := metrics.CheckTruth(tr, d, jt.L); err != nil {
		return nil, 0, fmt.Errorf("%w (in %s)", err, path)
	}
	return tr, jt.L, nil
}

// ReadScores reads a D × L score matrix produced by any tool, as an
// explanation: a JSON file holding either an explanation (an object with
// "cells", as tempora explain writes it; every other field is optional:
// without "num_features" only "cells" and "accounting" are read, so a tool
// can report its cost as {"cells": …, "accounting": {"runtime_seconds": s,
// "model_calls": n, "instance_evaluations": k}}) or a bare matrix
// [[…], …]; or a CSV file of D rows of L numbers (comma-separated, blank
// lines and lines starting with '#' ignored). Non-finite scores and ragged
// rows are errors. The explanation's feature results are filled from the
// cells (method.FeatureScores) when the file has none.
func ReadScores(path string) (*tempora.Explanation, error) {
	b, err := safefile.ReadFile(path, safefile.RecordLimit, "a score file")
	if err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	trim := bytes.TrimSpace(b)
	var e *tempora.Explanation
	switch {
	case len(trim) > 0 && trim[0] == '{':
		e, err = scoresFromObject(trim)
	case len(trim) > 0 && trim[0] == '[':
		var rows [][]float64
		if err = json.Unmarshal(trim, &rows); err == nil {
			e, err = scoresFromRows(rows)
		}
	default:
		e, err = scoresFromCSV(b)
	}
	if err != nil {
		return nil, fmt.Errorf("experiments: %s: %w", path, err)
	}
	if len(e.Features) == 0 {
		e.Features = make([]tempora.FeatureResult, e.D)
		for j := range e.Features {
			e.Features[j] = tempora.NewFeatureResult(j, strconv.Itoa(j))
		}
		method.FeatureScores(e)
	}
	return e, nil
}

func scoresFromObject(b []byte) (*tempora.Explanation, error) {
	var probe struct {
		D          *int        `json:"num_features"`
		Cells      [][]float64 `json:"cells"`
		Accounting struct {
			Calls   int64   `json:"model_calls"`
			Evals   int64   `json:"instance_evaluations"`
			Runtime float64 `json:"runtime_seconds"`
		} `json:"accounting"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, err
	}
	if probe.Cells == nil {
		return nil, fmt.Errorf("no \"cells\" in the JSON object")
	}
	if probe.D == nil {
		e, err := scoresFromRows(probe.Cells)
		if err != nil {
			return nil, err
		}
		a := probe.Accounting
		if a.Calls < 0 || a.Evals < 0 || !(a.Runtime >= 0) || math.IsInf(a.Runtime, 0) {
			return nil, fmt.Errorf("accounting must hold non-negative numbers")
		}
		e.Accounting = tempora.Accounting{ModelCalls: a.Calls, InstanceEvals: a.Evals, Runtime: time.Duration(a.Runtime * float64(time.Second))}
		return e, nil
	}
	var e tempora.Explanation
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	if len(e.Features) != 0 && len(e.Features) != e.D {
		return nil, fmt.Errorf("%d feature results for %d features", len(e.Features), e.D)
	}
	if _, err := scoresFromRows(probe.Cells); err != nil {
		return nil, err
	}
	return &e, nil
}

func scoresFromRows(rows [][]float64) (*tempora.Explanation, error) {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return nil, fmt.Errorf("empty score matrix")
	}
	d, l := len(rows), len(rows[0])
	e := &tempora.Explanation{Method: "scores", D: d, L: l, Cells: make([]float64, 0, d*l)}
	for j, r := range rows {
		if len(r) != l {
			return nil, fmt.Errorf("row %d has %d scores, row 0 has %d", j, len(r), l)
		}
		for t, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("score (%d, %d) is %v", j, t, v)
			}
		}
		e.Cells = append(e.Cells, r...)
	}
	return e, nil
}

func scoresFromCSV(b []byte) (*tempora.Explanation, error) {
	var rows [][]float64
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<26)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		var row []float64
		for f := range strings.SplitSeq(s, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q is not a number", line, strings.TrimSpace(f))
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return scoresFromRows(rows)
}

// HasTests reports whether e carries per-feature test outcomes that the
// per-feature metrics can score: one result per feature, some with a
// p-value or a window (as TIME's explanations have).
func HasTests(e *tempora.Explanation) bool {
	if len(e.Features) != e.D {
		return false
	}
	for _, f := range e.Features {
		if f.Window != nil || !math.IsNaN(f.PValue) {
			return true
		}
	}
	return false
}

// EvaluateFile scores the score file at path (see ReadScores) against the
// truth of the synthetic problem in dir (see ReadTruth) and returns the
// record without its identity fields (see Score): the detection metrics in
// the given mode, and the per-feature metrics when tests is set or the
// file is an explanation with test outcomes (HasTests).
func EvaluateFile(dir, path string, mode method.Mode, tests bool) (*record.Record, error) {
	return EvaluateFiles(dir, path, "", mode, tests)
}

// ReadAttributions reads per-instance attributions, a NumPy .npy array of
// n instances × D features × L timesteps for the first n instances of a
// problem's data (any n from 1 to the data's instances).
func ReadAttributions(path string) (*tempora.Tensor, error) {
	a, err := dataio.ReadTensorNPY(path)
	if err != nil {
		return nil, fmt.Errorf("experiments: attributions: %w", err)
	}
	if a.M < 1 {
		return nil, fmt.Errorf("experiments: %s holds no instance's attributions", path)
	}
	return a, nil
}

// GlobalCells returns the cell scores of per-instance attributions: each
// cell's mean magnitude over the instances (as OCC and TimeSHAP make
// theirs), as an explanation named "attributions".
func GlobalCells(a *tempora.Tensor) *tempora.Explanation {
	p := a.D * a.L
	e := &tempora.Explanation{Method: "attributions", D: a.D, L: a.L, Cells: make([]float64, p)}
	for i := range a.M {
		for k, v := range a.Data[i*p : (i+1)*p] {
			e.Cells[k] += math.Abs(v)
		}
	}
	for k := range e.Cells {
		e.Cells[k] /= float64(a.M)
	}
	e.Features = make([]tempora.FeatureResult, e.D)
	for j := range e.Features {
		e.Features[j] = tempora.NewFeatureResult(j, strconv.Itoa(j))
	}
	method.FeatureScores(e)
	return e
}

// EvaluateFiles is EvaluateFile with per-instance attributions: when
// attributions is not empty it names a .npy file (ReadAttributions) whose
// per-instance metrics against the per-instance truth of the problem in
// dir (synth.Model.InstanceTruth; the directory must hold the problem's
// model and data, as tempora synth and tempora problems write them) are
// added to the record (InstanceScores). scores may then be empty: the cell
// scores are the attributions' GlobalCells.
func EvaluateFiles(dir, scores, attributions string, mode method.Mode, tests bool) (*record.Record, error) {
	if scores == "" && attributions == "" {
		return nil, fmt.Errorf("experiments: nothing to evaluate (no scores and no attributions)")
	}
	tr, l, err := ReadTruth(dir)
	if err != nil {
		return nil, err
	}
	var local *tempora.Tensor
	if attributions != "" {
		if local, err = ReadAttributions(attributions); err != nil {
			return nil, err
		}
		if local.D != len(tr.Relevant) || local.L != l {
			return nil, fmt.Errorf("experiments: %s has %d × %d × %d attributions, the problem in %s has %d features × %d timesteps",
				attributions, local.M, local.D, local.L, dir, len(tr.Relevant), l)
		}
	}
	var e *tempora.Explanation
	path := scores
	if scores != "" {
		if e, err = ReadScores(scores); err != nil {
			return nil, err
		}
	} else {
		e, path = GlobalCells(local), attributions
	}
	if e.D != len(tr.Relevant) || e.L != l {
		return nil, fmt.Errorf("experiments: %s has %d × %d scores, the problem in %s has %d features × %d timesteps",
			path, e.D, e.L, dir, len(tr.Relevant), l)
	}
	if tests && !HasTests(e) {
		return nil, fmt.Errorf("experiments: %s holds scores only, but the method is scored on per-feature test outcomes (an explanation with p-values and windows)", path)
	}
	rec, err := Score(tr, e, mode, tests || HasTests(e))
	if err != nil || local == nil {
		return rec, err
	}
	p, err := synth.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("experiments: per-instance truth: %w", err)
	}
	if local.M > p.Data.X.M {
		return nil, fmt.Errorf("experiments: %s has attributions of %d instances, the problem in %s has %d", attributions, local.M, dir, p.Data.X.M)
	}
	ms, err := InstanceScores(p.Model, p.Data, nil, local)
	if err != nil {
		return nil, err
	}
	rec.Metrics = append(rec.Metrics, ms...)
	return rec, nil
}

// EvaluateOptions configure EvaluateProblems.
type EvaluateOptions struct {
	// Problems is a directory written by WriteProblems.
	Problems string
	// Scores is the name of the score file (see ReadScores) in each
	// problem's directory; Attributions, if not empty, the name of its
	// per-instance attributions (see EvaluateFiles). One of them must be
	// set.
	Scores, Attributions string
	// Method is the method name of the records.
	Method string
	// Mode and Tests say how to score, as for EvaluateFile.
	Mode  method.Mode
	Tests bool
	// Out is the output directory: records below Out/records, plus
	// Out/manifest.json and Out/bench.txt, as Run writes them.
	Out string
}

// EvaluateProblems scores the score file of every problem listed in
// o.Problems/index.json against that problem's truth and writes one record
// per (setting, model), with the identity (suite, setting, model and problem
// seed) of a Run on the same problems, so that Merge and the reports take
// them beside such a run: the outside method gets its own rows. The
// records' runtime and model calls are those of the score file's
// accounting, when it has one (see ReadScores), else 0. It returns the
// number of records written. An output directory holding a run of other
// problems is refused.
func EvaluateProblems(o EvaluateOptions) (int, error) {
	if o.Out == "" || o.Problems == "" || (o.Scores == "" && o.Attributions == "") {
		return 0, fmt.Errorf("experiments: EvaluateProblems needs Problems, Scores or Attributions, and Out")
	}
	if err := method.CheckName(o.Method); err != nil {
		return 0, fmt.Errorf("experiments: %w", err)
	}
	idx, err := ReadIndex(o.Problems)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("experiments: %s has no %s (write one with tempora problems)", o.Problems, IndexFile)
		}
		return 0, err
	}
	man := &Manifest{Format: ManifestFormat, Suite: idx.Suite, Grid: idx.Grid, Quick: idx.Quick, Seed: idx.Seed,
		Models: idx.Models, Methods: []string{o.Method}}
	if old, err := ReadManifest(o.Out); err == nil {
		if !old.sameProblems(man) {
			return 0, fmt.Errorf("experiments: %s holds a run of suite %s (grid %q, quick %v, seed %d), not suite %s (grid %q, quick %v, seed %d)",
				o.Out, old.Suite, old.Grid, old.Quick, old.Seed, man.Suite, man.Grid, man.Quick, man.Seed)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	var recs []*record.Record
	for _, e := range idx.Problems {
		dir := filepath.Join(o.Problems, filepath.FromSlash(e.Dir))
		var scores, attributions string
		if o.Scores != "" {
			scores = filepath.Join(dir, o.Scores)
		}
		if o.Attributions != "" {
			attributions = filepath.Join(dir, o.Attributions)
		}
		rec, err := EvaluateFiles(dir, scores, attributions, o.Mode, o.Tests)
		if err != nil {
			return 0, err
		}
		rec.Suite, rec.Params, rec.Model, rec.Seed, rec.Method = idx.Suite, e.Params, e.Model, e.Seed, o.Method
		rec.Explanation.Method = o.Method
		if err := rec.Validate(); err != nil { // refused before anything is written
			return 0, err
		}
		recs = append(recs, rec)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return 0, err
	}
	if err := writeManifest(o.Out, man); err != nil {
		return 0, err
	}
	for _, r := range recs {
		if err := record.Write(filepath.Join(o.Out, "records"), r); err != nil {
			return 0, err
		}
	}
	return len(recs), WriteBench(o.Out)
}
