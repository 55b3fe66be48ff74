package record

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestExplanationWithOutputs checks that a record keeping the explanation
// of a model with several outputs (per-output results, windows in lag
// coordinates, negative for an input after the output's own step, the
// causal check) is written, read back with its checksum verified, and
// decodes to the same explanation; and that Rehash leaves it as it is.
func TestExplanationWithOutputs(t *testing.T) {
	data := &tempora.Dataset{X: tempora.NewTensor(1, 2, 4), FeatureNames: []string{"a", "b"},
		Outputs: &tempora.Outputs{Kind: tempora.Steps, K: 2, Anchors: []int{1, 2}}}
	e := tempora.NewExplanation("TIME", data)
	e.Features[0].Tested, e.Features[0].Important, e.Features[0].Score = true, true, 0.5
	f := &e.Outputs.Outputs[1].Features[0]
	w := tempora.Window{Start: 3, End: 3}
	f.Tested, f.Important, f.Window, f.WindowSignificant = true, true, &w, true
	f.Windows = []tempora.WindowResult{{Window: w, Significant: true, Lag: &tempora.Window{Start: -1, End: -1}}}
	f.FuturePValue, f.FuturePAdjusted, f.ReadsFuture = 0.01, 0.02, true
	e.Outputs.CausalChecked, e.Outputs.ReadsFuture = true, true
	e.Outputs.Outputs[0].Cells[3] = 0.25

	r := sample(0, "TIME")
	r.Explanation = e
	dir := t.TempDir()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := Read(r.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(e)
	got, _ := json.Marshal(back.Explanation)
	if !bytes.Equal(got, want) {
		t.Errorf("explanation read back differs:\n got %s\nwant %s", got, want)
	}
	if o := back.Explanation.Outputs; o == nil || !o.Outputs[1].Features[0].ReadsFuture || *o.Outputs[1].Features[0].Windows[0].Lag != (tempora.Window{Start: -1, End: -1}) {
		t.Errorf("outputs read back as %+v", o)
	}
	changed, err := Rehash(r.Path(dir))
	if err != nil || changed {
		t.Errorf("Rehash of a record just written: changed %v, %v", changed, err)
	}
}
