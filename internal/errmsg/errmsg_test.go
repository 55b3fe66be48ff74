package errmsg

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

func TestTrim(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"tempora: tempora: x.npy: data is empty", "x.npy: data is empty"},
		{"synth: open /p/truth.json: no such file or directory", "open /p/truth.json: no such file or directory"},
		{"experiments: open /p/truth.json: no such file", "open /p/truth.json: no such file"},
		{"explain: model: procmodel: model timed out after 1s: no hello frame", "model: model timed out after 1s: no hello frame"},
		{"synth: /p/data.npy: npy: reading header: file is truncated", "/p/data.npy: reading header: file is truncated"},
		{`experiments: method: unknown method "shap"`, `unknown method "shap"`},
		{"explain: metrics: 3 cells", "3 cells"},
		{"no prefix at all", "no prefix at all"},
		{"a/synth: x", "a/synth: x"},                           // part of a path, not a prefix
		{`feature "synth: 1": bad`, `feature "synth: 1": bad`}, // quoted
		{"synthetic: x", "synthetic: x"},
		{"synth:", "synth:"},
		{"", ""},
		{"tempora: ", ""},
	} {
		if got := Trim(tc.in); got != tc.want {
			t.Errorf("Trim(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWrap(t *testing.T) {
	_, cause := os.Open("/no/such/file")
	inner := Wrap(cause, "dataio: %s", "x.npy")
	err := Wrap(inner, "synth: loading %s", "problem")
	const want = "synth: loading problem: x.npy: open /no/such/file: no such file or directory"
	if err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v does not unwrap to fs.ErrNotExist", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "/no/such/file" {
		t.Errorf("%v does not unwrap to its *fs.PathError", err)
	}
}
