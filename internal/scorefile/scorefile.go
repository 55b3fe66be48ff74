// Package scorefile reads the files in which a tool outside tempora
// gives its explanation of a problem ("tempora evaluate"): a D × L score
// matrix as JSON or CSV, or an explanation as tempora writes it. Its
// errors carry no package prefix; callers add theirs.
package scorefile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// Read reads a D × L score matrix produced by any tool, as an explanation:
// a JSON file holding either an explanation (an object with "cells", as
// tempora explain writes it; every other field is optional: without
// "num_features" only "cells" and "accounting" are read, so a tool can
// report its cost as {"cells": …, "accounting": {"runtime_seconds": s,
// "model_calls": n, "instance_evaluations": k}}) or a bare matrix [[…],
// …]; or a CSV file of D rows of L numbers (comma-separated, blank lines
// and lines starting with '#' ignored). Non-finite scores and ragged rows
// are errors. The explanation has no feature results unless the file
// gives them (the caller fills them from the cells).
func Read(path string) (*tempora.Explanation, error) {
	b, err := safefile.ReadFile(path, safefile.RecordLimit, "a score file")
	if err != nil {
		return nil, err
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
		return nil, fmt.Errorf("%s: %w", path, err)
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

// GlobalCells returns the cell scores of per-instance attributions a (n
// instances × D × L): each cell's mean magnitude over the instances (as
// OCC and TimeSHAP make theirs), as an explanation named "attributions"
// without feature results.
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
	return e
}
