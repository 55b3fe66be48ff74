package experiments

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/synth"
)

// ReadTruth reads the ground truth of a synthetic problem directory written
// by synth (its truth.json), without loading the data.
func ReadTruth(dir string) (tr *Truth, l int, err error) {
	path := filepath.Join(dir, synth.TruthFile)
	b, err := os.ReadFile(path)
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
	tr = &Truth{
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
	if err := CheckTruth(tr, d, jt.L); err != nil {
		return nil, 0, fmt.Errorf("%w (in %s)", err, path)
	}
	return tr, jt.L, nil
}

// ReadScores reads a D × L score matrix produced by any tool, as an
// explanation: a JSON file holding either an explanation (an object with
// "cells", as tempora explain writes it; "num_features" and "features" are
// optional) or a bare matrix [[…], …]; or a CSV file of D rows of L
// numbers (comma-separated, blank lines and lines starting with '#'
// ignored). Non-finite scores and ragged rows are errors.
func ReadScores(path string) (*tempora.Explanation, error) {
	b, err := os.ReadFile(path)
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
	return e, nil
}

func scoresFromObject(b []byte) (*tempora.Explanation, error) {
	var probe struct {
		D     *int        `json:"num_features"`
		Cells [][]float64 `json:"cells"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, err
	}
	if probe.Cells == nil {
		return nil, fmt.Errorf("no \"cells\" in the JSON object")
	}
	if probe.D == nil {
		return scoresFromRows(probe.Cells)
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

// Evaluate scores an explanation against the truth with the metrics of the
// benchmark: DetectionMetrics in the given mode, followed by TIMEMetrics
// when the explanation has per-feature results with windows (a TIME
// explanation).
func Evaluate(tr *Truth, e *tempora.Explanation, mode Mode) ([]Metric, error) {
	ms, err := DetectionMetrics(tr, e.Cells, e.D, e.L, mode)
	if err != nil {
		return nil, err
	}
	hasWindows := false
	for _, f := range e.Features {
		hasWindows = hasWindows || f.Window != nil
	}
	if len(e.Features) == e.D && hasWindows {
		tm, err := TIMEMetrics(tr, e.Features, e.L)
		if err != nil {
			return nil, err
		}
		ms = append(ms, tm...)
	}
	return ms, nil
}

// EvaluateFile scores the score file at path (see ReadScores) against the
// truth of the synthetic problem in dir (see ReadTruth).
func EvaluateFile(dir, path string, mode Mode) ([]Metric, error) {
	tr, l, err := ReadTruth(dir)
	if err != nil {
		return nil, err
	}
	e, err := ReadScores(path)
	if err != nil {
		return nil, err
	}
	if e.D != len(tr.Relevant) || e.L != l {
		return nil, fmt.Errorf("experiments: %s has %d × %d scores, the problem in %s has %d features × %d timesteps",
			path, e.D, e.L, dir, len(tr.Relevant), l)
	}
	return Evaluate(tr, e, mode)
}
