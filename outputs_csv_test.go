package tempora

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

// outputsExplanation returns an explanation of 2 features × 4 timesteps
// with the results of 2 step outputs anchored at 1 and 2, output 1 reading
// feature 0 at timestep 3, after its own step (lag −1).
func outputsExplanation() *Explanation {
	data := &Dataset{X: NewTensor(1, 2, 4), FeatureNames: []string{"a", "b"}, Outputs: &Outputs{Kind: Steps, K: 2, Anchors: []int{1, 2}}}
	e := NewExplanation("TIME", data)
	e.Features[0].Tested, e.Features[0].Important, e.Features[0].Score = true, true, 0.5
	f := &e.Outputs.Outputs[1].Features[0]
	w := Window{Start: 3, End: 3}
	f.Tested, f.Important, f.Window, f.WindowSignificant = true, true, &w, true
	f.Windows = []WindowResult{{Window: w, Significant: true, Lag: &Window{Start: -1, End: -1}}}
	f.FuturePValue, f.FuturePAdjusted, f.ReadsFuture = 0.01, 0.02, true
	e.Outputs.CausalChecked, e.Outputs.ReadsFuture = true, true
	return e
}

// TestOutputsCSV checks the CSV of an explanation with per-output results:
// OutputsCSVHeader, the whole model's rows with an empty output, then each
// output's rows with its lags and causal check; and that an explanation of
// one output keeps CSVHeader.
func TestOutputsCSV(t *testing.T) {
	var b bytes.Buffer
	if err := outputsExplanation().WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != strings.Join(OutputsCSVHeader, ",") || rows[0][0] != "output" {
		t.Fatalf("header %q", rows[0])
	}
	if len(rows) != 1+2+2*2 {
		t.Fatalf("%d rows", len(rows))
	}
	col := func(name string) int {
		for k, h := range rows[0] {
			if h == name {
				return k
			}
		}
		t.Fatalf("no column %q", name)
		return -1
	}
	for r, want := range []string{"", "", "0", "0", "1", "1"} {
		if rows[1+r][0] != want {
			t.Errorf("row %d: output %q, want %q", r+1, rows[1+r][0], want)
		}
	}
	row := rows[5] // output 1, feature a
	if row[col("name")] != "a" || row[col("windows")] != "3-3*" || row[col("lags")] != "-1--1*" ||
		row[col("future_p_value")] != "0.01" || row[col("future_p_adjusted")] != "0.02" || row[col("reads_future")] != "true" {
		t.Errorf("output 1, feature a: %q", row)
	}
	if rows[1][col("lags")] != "" || rows[1][col("reads_future")] != "" {
		t.Errorf("whole model's row has causal columns: %q", rows[1])
	}

	one := NewExplanation("TIME", &Dataset{X: NewTensor(1, 2, 4)})
	b.Reset()
	if err := one.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); first != strings.Join(CSVHeader, ",") {
		t.Errorf("one output's header %q", first)
	}
}

// TestNegativeLagJSON checks that a window in lag coordinates after the
// output's own step (negative) survives the JSON round trip, while
// windows in timesteps stay non-negative.
func TestNegativeLagJSON(t *testing.T) {
	e := outputsExplanation()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"lag":[-1,-1]`) {
		t.Fatalf("no negative lag in %s", b)
	}
	var back Explanation
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	lag := back.Outputs.Outputs[1].Features[0].Windows[0].Lag
	if lag == nil || *lag != (Window{Start: -1, End: -1}) {
		t.Errorf("lag read back as %v", lag)
	}
	again, err := json.Marshal(&back)
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("round trip changed the JSON: %v\n%s\n%s", err, b, again)
	}
	for _, bad := range []string{`"lag":[0,-1]`, `"lag":[1]`} {
		if err := json.Unmarshal([]byte(strings.Replace(string(b), `"lag":[-1,-1]`, bad, 1)), &back); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want a one-line error", bad, err)
		}
	}
}
