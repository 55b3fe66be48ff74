package method

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestRequireComplete checks the one message of a method that needs
// complete data: nil for complete data, the data's own error for invalid
// data, and for missing values an *IncompleteError naming the method, the
// first missing value, the short sequences and the reason.
func TestRequireComplete(t *testing.T) {
	x := tempora.NewTensor(4, 2, 5)
	for k := range x.Data {
		x.Data[k] = float64(k % 7)
	}
	data := &tempora.Dataset{X: x, Y: make([]float64, 4), FeatureNames: []string{"a", "b"}}
	if err := RequireComplete("M", data, 1, "why"); err != nil {
		t.Fatalf("complete data: %v", err)
	}
	if err := RequireComplete("M", data, 5, "why"); err == nil || !strings.Contains(err.Error(), "need at least 5") {
		t.Errorf("too few instances: %v", err)
	}

	gappy := x.Clone()
	gappy.Set(2, 1, 3, math.NaN()) // missing inside the sequence
	gappy.Set(3, 0, 4, math.NaN()) // instance 3 ends a step early
	gappy.Set(3, 1, 4, math.NaN())
	gappy.Set(1, 0, 2, math.NaN())
	d := *data
	d.X = gappy
	err := RequireComplete("LIME", &d, 1, "its surrogate needs every cell")
	var inc *IncompleteError
	if !errors.As(err, &inc) || inc.Method != "LIME" {
		t.Fatalf("missing values: %v, want an *IncompleteError of LIME", err)
	}
	want := `LIME needs complete data, and in this data 2 values are missing (NaN), the first at instance 1, feature 0 ("a"), timestep 2, and 1 of the 4 sequences are shorter than the data's 5 timesteps: its surrogate needs every cell; tempora does not impute`
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message\n%s\nwant it to start\n%s", err, want)
	}
	// The first missing value, for programs (docs/errors.md).
	var de *tempora.DataError
	if !errors.As(err, &de) || de.Kind != tempora.KindMissing || de.Instance != 1 || de.Feature != 0 || de.Timestep != 2 || de.Count != 2 || de.Error() != err.Error() {
		t.Errorf("missing values: DataError %+v, want kind missing at (1, 0, 2), count 2, the same message", de)
	}
	short := x.Clone()
	short.Set(3, 0, 4, math.NaN()) // only a shorter sequence: no cell to name
	short.Set(3, 1, 4, math.NaN())
	d.X = short
	if err := RequireComplete("LIME", &d, 1, "why"); !errors.As(err, &de) || de.Kind != tempora.KindMissing || de.Instance != -1 {
		t.Errorf("a shorter sequence only: %v (%+v), want kind missing at no cell", err, de)
	}

	inf := x.Clone()
	inf.Set(0, 0, 0, math.Inf(1))
	inf.Set(1, 0, 0, math.NaN())
	d.X = inf
	if err := RequireComplete("M", &d, 1, "why"); err == nil || errors.As(err, &inc) || !strings.Contains(err.Error(), "+Inf") {
		t.Errorf("infinite value: %v, want the data's error", err)
	}
}
