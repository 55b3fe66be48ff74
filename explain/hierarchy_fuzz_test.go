package explain

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// hierarchyJSON writes h in the JSON form ParseHierarchy reads, with
// features as indices (for the round trip of FuzzParseHierarchy).
func hierarchyJSON(h *Hierarchy) []byte {
	type group struct {
		Name     string  `json:"name"`
		Features []int   `json:"features,omitempty"`
		Children []group `json:"children,omitempty"`
	}
	var conv func(g *Group) group
	conv = func(g *Group) group {
		out := group{Name: g.Name, Features: g.Features}
		for _, c := range g.Children {
			out.Children = append(out.Children, conv(c))
		}
		return out
	}
	top := make([]group, len(h.Groups))
	for k, g := range h.Groups {
		top[k] = conv(g)
	}
	b, err := json.Marshal(top)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzParseHierarchy feeds ParseHierarchy an arbitrary document and an
// arbitrary list of feature names (one per line; none for ""). Seeds are in
// testdata/fuzz/FuzzParseHierarchy and below. Properties: no panic; a
// one-line error with the "explain: " prefix; on success a hierarchy that
// passes its own validation, whose features are in range when names are
// given, and which, written back as JSON with indices, parses to the same
// hierarchy.
func FuzzParseHierarchy(f *testing.F) {
	const names = "heart rate\nbp\nspo2\n3\nna\nk"
	for _, doc := range []string{
		`{"name": "all", "children": [{"name": "vitals", "features": ["heart rate", "3"]}, {"name": "labs", "features": [4, 5]}]}`,
		`[{"name": "a", "features": [0]}, {"name": "b", "features": [1, 2]}]`,
		`{"name": "x", "features": ["bp", 1]}`,
		`{"name": "", "features": [0]}`,
		`[]`,
		`{"name": "a", "features": [{"nested": true}]}`,
		"{\"name\": \"a\", \"features\": [{\"x\":\n1}]}",
		`{"name": "a", "features": [1e400, -1, 1.5, "07"]}`,
		`{"name": "a", "children": [{"name": "a", "features": [0]}]} {}`,
	} {
		f.Add([]byte(doc), names)
		f.Add([]byte(doc), "")
	}
	f.Fuzz(func(t *testing.T, doc []byte, namesText string) {
		var featureNames []string
		if namesText != "" {
			featureNames = strings.Split(namesText, "\n")
		}
		h, err := ParseHierarchy(bytes.NewReader(doc), featureNames)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "explain: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q is not one line with the explain: prefix", msg)
			}
			return
		}
		d := -1
		if featureNames != nil {
			d = len(featureNames)
		}
		if err := h.validate(d, featureNames); err != nil {
			t.Fatalf("parsed hierarchy fails validation: %v", err)
		}
		b := hierarchyJSON(h)
		h2, err := ParseHierarchy(bytes.NewReader(b), featureNames)
		if err != nil {
			t.Fatalf("reparsing %s: %v", b, err)
		}
		if !reflect.DeepEqual(h, h2) {
			t.Fatalf("round trip through %s changed the hierarchy", b)
		}
	})
}
