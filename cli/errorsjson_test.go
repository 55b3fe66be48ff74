package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
)

// errorLines runs a command line that must fail and returns what Main
// writes for its error: the JSON error object (nil without one) and the
// "tempora: " line.
func errorLines(t *testing.T, args ...string) (map[string]any, string) {
	t.Helper()
	_, _, err := runCmd(t, args...)
	if err == nil {
		t.Fatalf("tempora %s succeeded", strings.Join(args, " "))
	}
	var buf bytes.Buffer
	writeError(&buf, err)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	text := lines[len(lines)-1]
	if !strings.HasPrefix(text, "tempora: ") {
		t.Fatalf("last line %q is not the error's", text)
	}
	switch len(lines) {
	case 1:
		return nil, text
	case 2:
		var doc map[string]map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &doc); err != nil {
			t.Fatalf("JSON line %q: %v", lines[0], err)
		}
		obj := doc["error"]
		if obj == nil || obj["message"] != strings.TrimPrefix(text, "tempora: ") {
			t.Fatalf("JSON line %q does not carry the message %q", lines[0], text)
		}
		return obj, text
	}
	t.Fatalf("%d lines for one error: %q", len(lines), buf.String())
	return nil, ""
}

// TestErrorsJSON: with -errors json a command's failure is also one JSON
// line, whose fields (docs/errors.md) say what is wrong and where in the
// data, all of them present (null when they do not apply); without it,
// only the text line.
func TestErrorsJSON(t *testing.T) {
	nan := math.NaN()
	t.Chdir(t.TempDir())
	irregularFixtures(t) // 6 × 2 × 5: instances 4 and 5 of length 3; inf.npy: +Inf at (3, 0, 2)
	if err := dataio.WriteVectorNPY("labels.npy", []float64{0, 1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	// Start-aligned sequences of lengths 4, 2, 3, 2.
	short, _ := tempora.TensorFrom(4, 1, 4, []float64{1, 2, 3, 4, 5, 6, nan, nan, 7, 8, 9, nan, 1, 2, nan, nan})
	if err := dataio.WriteTensorNPY("short.npy", short); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("dup.json", []byte(`["hr", "hr"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	explain := func(data string, more ...string) []string {
		return withFlags([]string{"explain", "-errors", "json", "-data", data, "-targets", "y.npy", "-task", "classification", "-model-cmd", "false"}, more...)
	}
	null := any(nil)
	num := func(v float64) any { return v }
	for _, tc := range []struct {
		name string
		args []string
		want map[string]any // the fields checked besides message and detail
	}{
		{"infinite", explain("inf.npy"), map[string]any{"kind": "infinite", "instance": num(3), "feature": num(0), "timestep": num(2), "value": "+Inf", "count": num(1), "lengths": null, "alignment": null}},
		{"alignment", []string{"describe", "-errors", "json", "-data", "short.npy", "-alignment", "end"},
			map[string]any{"kind": "alignment", "instance": null, "feature": null, "timestep": null, "value": null, "count": num(3), "lengths": []any{num(2), num(4)}, "alignment": "end"}},
		{"repeated name", explain("x.npy", "-feature-names", "dup.json"), map[string]any{"kind": "feature-names", "instance": null, "feature": num(1), "timestep": null}},
		{"unobserved instance", explain("x.npy", "-mask", "mask-empty.npy"), map[string]any{"kind": "unobserved-instance", "instance": num(2), "feature": null, "timestep": null}},
		{"label", explain("x.npy", "-targets", "labels.npy"), map[string]any{"kind": "target", "instance": num(2), "value": "2"}},
		{"model", explain("x.npy"), map[string]any{"kind": "model", "instance": null}},
		{"usage after -errors json", []string{"explain", "-errors", "json", "-bogus"}, map[string]any{"kind": "usage"}},
		{"other", []string{"describe", "-errors", "json", "-data", "nowhere.npy"}, map[string]any{"kind": "error"}},
	} {
		obj, text := errorLines(t, tc.args...)
		if obj == nil {
			t.Errorf("%s: no JSON line before %q", tc.name, text)
			continue
		}
		for _, k := range []string{"kind", "instance", "feature", "timestep", "value", "count", "lengths", "alignment", "message", "detail"} {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s: field %q is absent from %v", tc.name, k, obj)
			}
		}
		for k, v := range tc.want {
			if !reflect.DeepEqual(obj[k], v) {
				t.Errorf("%s: %s = %#v, want %#v (%v)", tc.name, k, obj[k], v, text)
			}
		}
		if d, _ := obj["detail"].(string); d == "" || !strings.Contains(text, d) && tc.want["kind"] != "usage" {
			t.Errorf("%s: detail %q is not part of the message %q", tc.name, d, text)
		}
	}
	if obj, text := errorLines(t, "describe", "-data", "inf.npy"); obj != nil {
		t.Errorf("without -errors json: a JSON line before %q", text)
	}
	if _, text := errorLines(t, "describe", "-errors", "xml", "-data", "x.npy"); !strings.Contains(text, `invalid value "xml" for flag -errors: want text or json`) {
		t.Errorf("-errors xml: %s", text)
	}
}

// TestErrorsDocKinds checks that docs/errors.md lists exactly the kinds
// the code reports: tempora.DataErrorKinds in its table of data errors, in
// that order, and the command line's own kinds in the other.
func TestErrorsDocKinds(t *testing.T) {
	b, err := os.ReadFile("../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	var data, other []string
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (.*)$")
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		switch strings.Count(m[2], "|") {
		case 3: // kind | input | fields set | the error
			data = append(data, m[1])
		case 1: // kind | the error
			other = append(other, m[1])
		}
	}
	var want []string
	for _, k := range tempora.DataErrorKinds() {
		want = append(want, string(k))
	}
	if !slices.Equal(data, want) {
		t.Errorf("docs/errors.md lists the data kinds %q, the code has %q", data, want)
	}
	if want := []string{kindModel, kindUsage, kindInterrupted, kindOther}; !slices.Equal(other, want) {
		t.Errorf("docs/errors.md lists the other kinds %q, the code has %q", other, want)
	}
}

// TestErrorsJSONPrediction: a prediction that is not finite names the
// data's instance where the explainer predicted the data's instances in
// order (TIME's baseline), and no instance where the batch held samples
// (LIME's perturbations of one instance).
func TestErrorsJSONPrediction(t *testing.T) {
	t.Chdir(t.TempDir())
	badInputFixtures(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(badModelEnv, "NaN") // every prediction
	cmd := "'" + strings.ReplaceAll(exe, "'", `'\''`) + "' -test.run=^$"
	for _, tc := range []struct {
		method   string
		instance any
	}{{"TIME", float64(0)}, {"LIME", nil}} {
		obj, text := errorLines(t, "explain", "-errors", "json", "-data", "x.npy", "-targets", "y.npy", "-task", "regression",
			"-model-cmd", cmd, "-method", tc.method, "-model-timeout", "1m")
		if obj["kind"] != "prediction" || obj["value"] != "NaN" || obj["instance"] != tc.instance {
			t.Errorf("%s: kind %v value %v instance %v, want prediction NaN at %v (%s)", tc.method, obj["kind"], obj["value"], obj["instance"], tc.instance, text)
		}
	}
}
