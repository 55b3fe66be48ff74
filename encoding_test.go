package tempora

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// sampleExplanation is a small TIME-like explanation that uses every field:
// an important feature with a significant window and ordering, an important
// feature whose window is not significant, an untested feature (NaN
// p-values), a group, warnings and accounting.
func sampleExplanation() *Explanation {
	data := &Dataset{X: NewTensor(1, 3, 4), Y: []float64{0}, FeatureNames: []string{"hr", "bp", "temp"}}
	e := NewExplanation("TIME", data)
	copy(e.Cells, []float64{
		0, 0.25, 0.25, 0,
		0.125, 0.125, 0.125, 0.125,
		0, 0, 0, 0,
	})
	f := &e.Features[0]
	f.Tested, f.Important, f.Score, f.PValue, f.PAdjusted = true, true, 0.5, 1.0/51, 0.03
	f.Window, f.WindowScore, f.WindowPValue, f.WindowPAdjusted, f.WindowSignificant = &Window{1, 2}, 0.25, 1.0/51, 1.0/51, true
	f.OrderingPValue, f.OrderingPAdjusted, f.OrderingImportant = 0.04, 0.04, true
	f.WindowOrderingPValue, f.WindowOrderingImportant = 0.5, false
	f = &e.Features[1]
	f.Tested, f.Important, f.Score, f.PValue, f.PAdjusted = true, true, 0.125, 0.02, 0.03
	f.Window, f.WindowScore, f.WindowPValue, f.WindowPAdjusted = &Window{0, 3}, 0.125, 0.3, 0.3
	f.OrderingPValue, f.OrderingPAdjusted = 0.7, 0.7
	g := NewFeatureResult(-1, "vitals")
	g.Members, g.Tested, g.Important, g.Score, g.PValue, g.PAdjusted = []int{0, 1}, true, true, 0.75, 1.0/51, 1.0/51
	e.Groups = []FeatureResult{g}
	e.Accounting = Accounting{ModelCalls: 412, InstanceEvals: 412000, WindowProbes: 9, Runtime: 1500 * time.Millisecond,
		Draws: []DrawCount{{"overall", 3, 130, 297}, {"window search", 9, 41, 450}, {"ordering", 2, 38, 38}, {"window", 2, 38, 38}, {"window ordering", 2, 164, 164}}}
	e.Warnings = []string{"feature temp: not tested"}
	return e
}

// withoutNaN returns a deep copy of e with NaN p-values replaced by a
// sentinel, so that reflect.DeepEqual can compare explanations.
func withoutNaN(e *Explanation) *Explanation {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	var c Explanation
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	fix := func(fs []FeatureResult) {
		for i := range fs {
			for _, p := range []*float64{&fs[i].PValue, &fs[i].PAdjusted, &fs[i].WindowPValue, &fs[i].WindowPAdjusted,
				&fs[i].OrderingPValue, &fs[i].OrderingPAdjusted, &fs[i].WindowOrderingPValue, &fs[i].FuturePValue, &fs[i].FuturePAdjusted} {
				if math.IsNaN(*p) {
					*p = -999
				}
			}
		}
	}
	fix(c.Features)
	fix(c.Groups)
	return &c
}

// sampleWithData is sampleExplanation for data with missing values: it
// carries a data summary (two instances of lengths 4 and 3).
func sampleWithData() *Explanation {
	e := sampleExplanation()
	e.Data = &DataSummary{Lengths: []int{4, 3}, MissingRate: []float64{0, 1.0 / 7, 2.0 / 7}, Observed: []float64{
		1, 1, 1, 0.5,
		0.5, 1, 1, 0,
		1, 0.5, 0.5, 0.5,
	}}
	return e
}

func TestExplanationJSONGolden(t *testing.T) {
	b, err := json.MarshalIndent(sampleExplanation(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "explanation.json", append(b, '\n'))
}

func TestExplanationJSONRoundTrip(t *testing.T) {
	for _, sample := range []func() *Explanation{sampleExplanation, sampleWithData} {
		explanationRoundTrip(t, sample)
	}
}

// explanationRoundTrip checks that sample()'s explanation survives JSON.
func explanationRoundTrip(t *testing.T, sample func() *Explanation) {
	t.Helper()
	e := sample()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Explanation
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	// Untested p-values travel as null and come back as NaN.
	if !strings.Contains(string(b), `"p_value":null`) {
		t.Errorf("NaN p-value not written as null: %s", b)
	}
	temp := back.Features[2]
	for name, p := range map[string]float64{"p": temp.PValue, "adjusted p": temp.PAdjusted, "window p": temp.WindowPValue,
		"ordering p": temp.OrderingPValue, "window ordering p": temp.WindowOrderingPValue} {
		if !math.IsNaN(p) {
			t.Errorf("untested %s decoded as %v, want NaN", name, p)
		}
	}
	if temp.Window != nil {
		t.Errorf("missing window decoded as %v", temp.Window)
	}
	// Everything else survives exactly, including single-feature Members
	// (omitted in JSON and restored), the runtime and the data summary.
	got, want := withoutNaN(&back), sample()
	for _, fs := range [][]FeatureResult{want.Features, want.Groups} {
		for i := range fs {
			for _, p := range []*float64{&fs[i].PValue, &fs[i].PAdjusted, &fs[i].WindowPValue, &fs[i].WindowPAdjusted,
				&fs[i].OrderingPValue, &fs[i].OrderingPAdjusted, &fs[i].WindowOrderingPValue, &fs[i].FuturePValue, &fs[i].FuturePAdjusted} {
				if math.IsNaN(*p) {
					*p = -999
				}
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the explanation:\n got %+v\nwant %+v", got, want)
	}
	// Marshalling the decoded value reproduces the bytes.
	b2, err := json.Marshal(&back)
	if err != nil || !bytes.Equal(b, b2) {
		t.Errorf("re-encoding differs (%v):\n%s\n%s", err, b, b2)
	}
}

func TestExplanationJSONErrors(t *testing.T) {
	e := sampleExplanation()
	e.Cells[5] = math.Inf(1)
	if _, err := json.Marshal(e); err == nil || !strings.Contains(err.Error(), "explanation cell (1, 1) is +Inf") {
		t.Errorf("infinite cell: error %v", err)
	}
	e = sampleWithData()
	e.Data.Observed = e.Data.Observed[:11]
	if _, err := json.Marshal(e); err == nil || !strings.Contains(err.Error(), "11 observed shares for 3×4") {
		t.Errorf("short observed shares: error %v", err)
	}
	e = sampleWithData()
	e.Data.MissingRate[1] = math.NaN()
	if _, err := json.Marshal(e); err == nil || !strings.Contains(err.Error(), "missing rate NaN of feature 1") {
		t.Errorf("NaN missing rate: error %v", err)
	}
	e = sampleExplanation()
	e.Cells = e.Cells[:11]
	if _, err := json.Marshal(e); err == nil || !strings.Contains(err.Error(), "11 cells for 3×4") {
		t.Errorf("short cells: error %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"num_features": 2, "num_timesteps": 1, "cells": [[0]]}`, "1 cell rows for 2 features"},
		{`{"num_features": 1, "num_timesteps": 2, "cells": [[0]]}`, "cell row 0 has 1 values for 2 timesteps"},
		{`{"method": 3}`, "cannot unmarshal"},
		// The data summary comes whole, in the explanation's shape.
		{`{"num_features": 1, "num_timesteps": 2, "cells": [[0, 0]], "lengths": [2]}`, "0 observed rows for 1 features"},
		{`{"num_features": 1, "num_timesteps": 2, "cells": [[0, 0]], "observed": [[1, 1]]}`, "0 lengths, 0 missing rates and 2 observed shares"},
		{`{"num_features": 1, "num_timesteps": 2, "cells": [[0, 0]], "lengths": [], "missing_rate": [0], "observed": [[1, 1]]}`, "0 lengths"},
		{`{"num_features": 1, "num_timesteps": 2, "cells": [[0, 0]], "lengths": [2], "missing_rate": [0], "observed": [[1]]}`, "observed row 0 has 1 values for 2 timesteps"},
		{`{"num_features": 1, "num_timesteps": 2, "cells": [[0, 0]], "lengths": [3], "missing_rate": [0], "observed": [[1, 1]]}`, "length 3 of instance 0 is not in [1, 2]"},
		{`{"num_features": 1, "num_timesteps": 2, "cells": [[0, 0]], "lengths": [2], "missing_rate": [1.5], "observed": [[1, 1]]}`, "missing rate 1.5 of feature 0"},
		{`{"num_features": 1, "num_timesteps": 2, "cells": [[0, 0]], "lengths": [2], "missing_rate": [0], "observed": [[1, -1]]}`, "observed share -1 of cell (0, 1)"},
	} {
		var e Explanation
		if err := json.Unmarshal([]byte(tc.in), &e); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Unmarshal(%s): error %v, want one containing %q", tc.in, err, tc.want)
		}
	}
}

func TestExplanationWithoutWarningsHasEmptyList(t *testing.T) {
	e := sampleExplanation()
	e.Warnings = nil
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"warnings":[]`) {
		t.Errorf("nil warnings not written as []: %s", b)
	}
}

func TestExplanationCSVGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleExplanation().WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	// One header, three features, one group.
	if len(lines) != 5 || lines[0] != strings.Join(CSVHeader, ",") {
		t.Errorf("CSV has %d lines, header %q", len(lines), lines[0])
	}
	golden(t, "explanation.csv", buf.Bytes())
}

func TestWindow(t *testing.T) {
	w := Window{Start: 3, End: 7}
	if w.Len() != 5 || w.String() != "[3, 7]" || !w.Contains(3) || !w.Contains(7) || w.Contains(2) || w.Contains(8) {
		t.Errorf("Window %v: Len %d, String %q", w, w.Len(), w.String())
	}
	if (Window{4, 4}).Len() != 1 {
		t.Error("single-timestep window length")
	}
}

func TestNewExplanation(t *testing.T) {
	data := &Dataset{X: NewTensor(2, 3, 5), Y: []float64{0, 1}}
	e := NewExplanation("LIME", data)
	if e.Method != "LIME" || e.D != 3 || e.L != 5 || len(e.Cells) != 15 || len(e.Features) != 3 {
		t.Fatalf("NewExplanation = %+v", e)
	}
	f := e.Features[2]
	if f.Name != "2" || f.Index != 2 || !reflect.DeepEqual(f.Members, []int{2}) || f.Tested || !math.IsNaN(f.PValue) || !math.IsNaN(f.WindowOrderingPValue) {
		t.Errorf("feature 2 = %+v", f)
	}
	e.Cells[1*5+4] = 9
	if e.Cell(1, 4) != 9 {
		t.Error("Cell(1, 4) does not read Cells[j*L+t]")
	}
}

func TestUnmarshalRejectsBadWindows(t *testing.T) {
	for _, w := range []string{"[3,1]", "[-1,2]", "[0,5]", "[1]"} {
		doc := `{"method":"X","num_features":1,"num_timesteps":5,"cells":[[0,0,0,0,0]],` +
			`"features":[{"index":0,"name":"0","window":` + w + `}]}`
		var e Explanation
		if err := e.UnmarshalJSON([]byte(doc)); err == nil {
			t.Errorf("window %s accepted", w)
		}
	}
}

// TestWriteDraws checks the draw table: one row per kind of test and a
// total, the saving 1 − draws/max draws, and nothing without draws.
func TestWriteDraws(t *testing.T) {
	var b strings.Builder
	if err := sampleExplanation().Accounting.WriteDraws(&b); err != nil {
		t.Fatal(err)
	}
	want := `test             tests  draws  max draws  saved
overall          3      130    297        56.2%
window search    9      41     450        90.9%
ordering         2      38     38         0.0%
window           2      38     38         0.0%
window ordering  2      164    164        0.0%
total            18     411    987        58.4%
`
	if b.String() != want {
		t.Errorf("draw table\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := (Accounting{ModelCalls: 3}).WriteDraws(&b); err != nil || b.Len() != 0 {
		t.Errorf("no draws: wrote %q, %v", b.String(), err)
	}
	if s := (DrawCount{}).Saved(); s != 0 {
		t.Errorf("empty count saved %v, want 0", s)
	}
}

// TestExplanationJSONWindows checks the list of windows: it round-trips
// (untested ordering p-values as null, back as NaN), is omitted when
// empty, and a window or end range past the last timestep is rejected.
func TestExplanationJSONWindows(t *testing.T) {
	e := sampleExplanation()
	nan := math.NaN()
	e.Features[0].Windows = []WindowResult{
		{Window: Window{0, 0}, StartRange: Window{0, 0}, EndRange: Window{0, 1}, Score: 0.1, PValue: 0.02, PAdjusted: 0.04, Significant: true,
			OrderingPValue: nan, OrderingPAdjusted: nan},
		{Window: Window{2, 3}, StartRange: Window{2, 2}, EndRange: Window{3, 3}, Score: 0.2, PValue: 0.01, PAdjusted: 0.04, Significant: true,
			OrderingPValue: 0.03, OrderingPAdjusted: 0.06, OrderingImportant: true},
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"windows":`); n != 1 {
		t.Errorf("%d windows lists in %s, want 1 (omitted when empty)", n, b)
	}
	var back Explanation
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := back.Features[0].Windows
	if len(got) != 2 || !math.IsNaN(got[0].OrderingPValue) || got[1] != e.Features[0].Windows[1] ||
		got[0].Window != (Window{0, 0}) || got[0].EndRange != (Window{0, 1}) || got[0].PValue != 0.02 || !got[0].Significant {
		t.Errorf("windows decoded as %+v, want %+v", got, e.Features[0].Windows)
	}
	if b2, _ := json.Marshal(&back); !bytes.Equal(b, b2) {
		t.Errorf("re-encoding differs:\n%s\n%s", b, b2)
	}
	for _, field := range []string{`"window":[0,4]`, `"start_range":[0,4]`, `"end_range":[3,4]`} {
		doc := `{"method":"X","num_features":1,"num_timesteps":4,"cells":[[0,0,0,0]],` +
			`"features":[{"index":0,"name":"0","windows":[{"window":[0,1],"start_range":[0,0],"end_range":[1,1],` + field + `}]}]}`
		if err := back.UnmarshalJSON([]byte(doc)); err == nil {
			t.Errorf("windows entry with %s accepted for 4 timesteps", field)
		}
	}
}

// TestRuntimeRoundTrip: an explanation's runtime survives JSON exactly, so
// that re-encoding a decoded record gives the same bytes (tempora rehash
// used to find records "changed" whose runtime lost a nanosecond to
// truncation: 508624 ns is 0.000508624 s, which times 1e9 is
// 508623.99… as a float).
func TestRuntimeRoundTrip(t *testing.T) {
	e := NewExplanation("X", &Dataset{X: NewTensor(1, 1, 1), Y: []float64{0}})
	// 508624 ns is one that truncation loses; the step visits ~10,000
	// others up to 2 s, of which truncation loses about one in twenty.
	for ns := int64(508624); ns < 2e9; ns += 199999 {
		e.Accounting.Runtime = time.Duration(ns)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Explanation
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Accounting.Runtime != e.Accounting.Runtime {
			t.Fatalf("runtime %v came back as %v", e.Accounting.Runtime, back.Accounting.Runtime)
		}
	}
}
