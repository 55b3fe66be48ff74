package record

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestOutputTruthJSON checks that the truth of outputs survives a record's
// round trip, negative lags (an output reading the future) included, that
// a truth without outputs is written as before (no "outputs" member), and
// that a lag ending before its start is refused.
func TestOutputTruthJSON(t *testing.T) {
	w := func(s, e int) tempora.Window { return tempora.Window{Start: s, End: e} }
	tr := &Truth{Relevant: []bool{true}, Windows: []tempora.Window{w(0, 3)}, EffectSize: []float64{1},
		OrderingImportant: []bool{true}, WindowOrderingImportant: []bool{true}}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("outputs")) {
		t.Errorf("a truth without outputs: %s", b)
	}
	tr.Outputs = []OutputTruth{
		{Relevant: []bool{true}, Windows: []tempora.Window{w(1, 3)}, Lags: []tempora.Window{w(-1, 1)}},
		{Relevant: []bool{false}, Windows: []tempora.Window{{}}},
	}
	r := sample(0, "TIME")
	r.Truth = tr
	dir := t.TempDir()
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := Read(r.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Truth.Outputs, tr.Outputs) {
		t.Errorf("outputs after a round trip: %+v, want %+v", got.Truth.Outputs, tr.Outputs)
	}
	var o OutputTruth
	if err := json.Unmarshal([]byte(`{"relevant":[true],"windows":[[0,1]],"lags":[[2,1]]}`), &o); err == nil || !strings.Contains(err.Error(), "ends before it starts") {
		t.Errorf("a lag ending before its start: %v", err)
	}
}
