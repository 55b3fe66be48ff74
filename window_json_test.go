package tempora

import (
	"encoding/json"
	"testing"
)

// TestWindowJSONErrorOneLine: a window spread over lines used to be quoted
// verbatim in the error, breaking the one-line rule (found by the record
// package's FuzzRead).
func TestWindowJSONErrorOneLine(t *testing.T) {
	var w Window
	err := json.Unmarshal([]byte("[\n  8\n]"), &w)
	const want = "tempora: window [8] must be [start, end] with 0 <= start <= end"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}
