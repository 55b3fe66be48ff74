package explain_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/explain"
)

func TestParseHierarchy(t *testing.T) {
	names := []string{"hr", "bp", "temp", "3", "rr"}
	for _, tc := range []struct {
		name  string
		json  string
		names []string
		want  *explain.Hierarchy
	}{
		{
			name: "single root", names: names,
			json: `{"name": "all", "children": [{"name": "vitals", "features": ["hr", "bp"]}, {"name": "rest", "features": [2, "rr"]}]}`,
			want: &explain.Hierarchy{Groups: []*explain.Group{{Name: "all", Children: []*explain.Group{
				{Name: "vitals", Features: []int{0, 1}}, {Name: "rest", Features: []int{2, 4}},
			}}}},
		},
		{
			// "3" is the name of feature 3; "1" is not a name, so it is an index.
			name: "top-level array, names before indices", names: names,
			json: ` [{"name": "a", "features": ["3", "1"]}, {"name": "b", "features": [0], "children": [{"name": "c", "features": ["temp"]}]}] `,
			want: &explain.Hierarchy{Groups: []*explain.Group{
				{Name: "a", Features: []int{3, 1}},
				{Name: "b", Features: []int{0}, Children: []*explain.Group{{Name: "c", Features: []int{2}}}},
			}},
		},
		{
			name: "no names: indices only", names: nil,
			json: `[{"name": "a", "features": [7, "12"]}]`,
			want: &explain.Hierarchy{Groups: []*explain.Group{{Name: "a", Features: []int{7, 12}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := explain.ParseHierarchy(strings.NewReader(tc.json), tc.names)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(h, tc.want) {
				t.Errorf("got %+v, want %+v", h, tc.want)
			}
		})
	}
}

func TestParseHierarchyErrors(t *testing.T) {
	names := []string{"hr", "bp", "temp"}
	for _, tc := range []struct {
		name, json, want string
	}{
		{"malformed", `{"name": "a", "features": [0,}`, "malformed hierarchy JSON"},
		{"not JSON", `hello`, "malformed hierarchy JSON"},
		{"trailing data", `{"name": "a", "features": [0]} {"name": "b"}`, "data after the top-level value"},
		{"unknown field", `{"name": "a", "feature": [0]}`, `unknown field "feature"`},
		{"wrong type", `{"name": 3, "features": [0]}`, "malformed hierarchy JSON"},
		{"unknown name", `{"name": "a", "features": ["hr", "pulse"]}`, `group "a" lists unknown feature "pulse"`},
		{"index out of range", `{"name": "a", "features": [3]}`, `group "a" lists feature 3, data has 3 features`},
		{"string index out of range", `{"name": "a", "features": ["5"]}`, `group "a" lists feature 5, data has 3 features`},
		{"negative index", `{"name": "a", "features": [-1]}`, `group "a" lists feature -1`},
		{"fractional index", `{"name": "a", "features": [1.5]}`, `group "a" lists feature 1.5`},
		{"object as feature", `{"name": "a", "features": [{"x": 1}]}`, `group "a" lists feature {"x": 1}`},
		{"twice in a group", `{"name": "a", "features": ["hr", 0]}`, `group "a" lists feature 0 ("hr") twice`},
		{"twice across groups", `[{"name": "a", "features": [1]}, {"name": "b", "children": [{"name": "c", "features": ["bp"]}]}]`, `feature 1 ("bp") in both group "a" and group "c"`},
		{"empty group", `[{"name": "a", "features": [0]}, {"name": "b", "features": []}]`, `group "b" is empty`},
		{"empty nested group", `{"name": "a", "children": [{"name": "b"}]}`, `group "b" is empty`},
		{"no name", `[{"features": [0]}]`, "group at top-level position 0 has no name"},
		{"duplicate names", `{"name": "a", "features": [0], "children": [{"name": "a", "features": [1]}]}`, `two groups named "a"`},
		{"empty array", `[]`, "hierarchy has no groups"},
		{"empty input", ``, "malformed hierarchy JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := explain.ParseHierarchy(strings.NewReader(tc.json), names)
			if err == nil || !strings.HasPrefix(err.Error(), "explain: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
