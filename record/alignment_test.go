package record

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestAlignmentRoundTrip: a record's alignment, and its explanation's,
// survive Write and Read (checksum verified); a start-aligned record has
// no "alignment" member, so older records read and hash as before.
func TestAlignmentRoundTrip(t *testing.T) {
	data := &tempora.Dataset{X: tempora.NewTensor(2, 2, 3), Y: []float64{0, 1}, Alignment: tempora.AlignEnd}
	for _, tc := range []struct {
		name    string
		align   tempora.Alignment
		explain bool
		want    tempora.Alignment
	}{
		{"start", tempora.AlignStart, false, tempora.AlignStart},
		{"end", tempora.AlignEnd, false, tempora.AlignEnd},
		{"end with explanation", tempora.AlignEnd, true, tempora.AlignEnd},
		{"explanation's alignment taken", tempora.AlignStart, true, tempora.AlignEnd},
	} {
		dir := t.TempDir()
		r := sample(0, "TIME")
		r.Alignment = tc.align
		if tc.explain {
			r.Explanation = tempora.NewExplanation("TIME", data)
		}
		if err := Write(dir, r); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := os.ReadFile(r.Path(dir))
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(b, []byte(`"alignment"`)); got != (tc.want == tempora.AlignEnd) {
			t.Errorf("%s: alignment member written: %v\n%s", tc.name, got, b)
		}
		back, err := Read(r.Path(dir))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if back.Alignment != tc.want || tc.explain && back.Explanation.Alignment != tc.want {
			t.Errorf("%s: read back alignment %v", tc.name, back.Alignment)
		}
	}
}

func TestAlignmentErrors(t *testing.T) {
	r := sample(0, "TIME")
	r.Alignment = tempora.AlignEnd
	r.Explanation = tempora.NewExplanation("TIME", &tempora.Dataset{X: tempora.NewTensor(2, 2, 3), Y: []float64{0, 1}})
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "alignment end, but its explanation's is start") {
		t.Errorf("mismatch: %v", err)
	}
	r.Explanation = nil
	r.Alignment = 7
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "invalid alignment 7") {
		t.Errorf("invalid: %v", err)
	}
	dir := t.TempDir()
	r = sample(0, "TIME")
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(r.Path(dir))
	b = bytes.Replace(b, []byte(`"seed":`), []byte(`"alignment": "middle", "seed":`), 1)
	if err := os.WriteFile(r.Path(dir), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(r.Path(dir)); err == nil || !strings.Contains(err.Error(), `unknown alignment "middle"`) {
		t.Errorf("unknown alignment: %v", err)
	}
}
