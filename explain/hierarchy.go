package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// Hierarchy is a user's tree of feature groups. TIME tests the top-level
// Groups as one family; the members of a rejected group (its Features, each
// tested alone, and its Children, each tested jointly) form the next family,
// and so on down. Features that appear nowhere in the hierarchy are not
// tested.
//
// A nil *Hierarchy means the flat hierarchy: every feature is tested alone
// in a single family.
type Hierarchy struct {
	Groups []*Group
}

// Group is a named set of features tested jointly: one instance permutation
// (or timestep permutation) moves all of its members together. Its members
// are its own Features and the members of its Children. A group must have
// a non-empty name, unique in its hierarchy, and at least one feature or
// child; a feature may appear only once in a whole hierarchy.
type Group struct {
	Name     string
	Features []int
	Children []*Group
}

// members returns the sorted features of g and its descendants.
func (g *Group) members() []int {
	var out []int
	var walk func(*Group)
	walk = func(g *Group) {
		out = append(out, g.Features...)
		for _, c := range g.Children {
			walk(c)
		}
	}
	walk(g)
	slices.Sort(out)
	return out
}

// validate checks the hierarchy against d features (d < 0: unknown, only
// non-negativity is checked) with optional names for messages.
func (h *Hierarchy) validate(d int, names []string) error {
	if len(h.Groups) == 0 {
		return fmt.Errorf("explain: hierarchy has no groups")
	}
	featName := func(j int) string {
		if j >= 0 && j < len(names) {
			return fmt.Sprintf("%d (%q)", j, names[j])
		}
		return strconv.Itoa(j)
	}
	owner := map[int]string{}
	seen := map[string]bool{}
	var walk func(g *Group, path string) error
	walk = func(g *Group, path string) error {
		if g == nil {
			return fmt.Errorf("explain: hierarchy has a nil group at %s", path)
		}
		if g.Name == "" {
			return fmt.Errorf("explain: hierarchy group at %s has no name", path)
		}
		if seen[g.Name] {
			return fmt.Errorf("explain: hierarchy has two groups named %q", g.Name)
		}
		seen[g.Name] = true
		if len(g.Features) == 0 && len(g.Children) == 0 {
			return fmt.Errorf("explain: hierarchy group %q is empty (no features or children)", g.Name)
		}
		for _, j := range g.Features {
			if j < 0 || (d >= 0 && j >= d) {
				return fmt.Errorf("explain: hierarchy group %q lists feature %d, data has %d features", g.Name, j, d)
			}
			if o, ok := owner[j]; ok {
				if o == g.Name {
					return fmt.Errorf("explain: hierarchy group %q lists feature %s twice", g.Name, featName(j))
				}
				return fmt.Errorf("explain: hierarchy lists feature %s in both group %q and group %q", featName(j), o, g.Name)
			}
			owner[j] = g.Name
		}
		for k, c := range g.Children {
			if err := walk(c, fmt.Sprintf("child %d of %q", k, g.Name)); err != nil {
				return err
			}
		}
		return nil
	}
	for k, g := range h.Groups {
		if err := walk(g, fmt.Sprintf("top-level position %d", k)); err != nil {
			return err
		}
	}
	return nil
}

// jsonGroup is the JSON form of a Group.
type jsonGroup struct {
	Name     string            `json:"name"`
	Features []json.RawMessage `json:"features"`
	Children []jsonGroup       `json:"children"`
}

// ReadHierarchyFile reads a hierarchy (see ParseHierarchy) from the file
// path, which must be a regular file (see package safefile: a named pipe
// or a device is refused at once) of at most safefile.HierarchyLimit bytes.
// An error opening or reading the file is an *fs.PathError naming path;
// any other is ParseHierarchy's.
func ReadHierarchyFile(path string, featureNames []string) (*Hierarchy, error) {
	r, err := safefile.OpenLimited(path, safefile.HierarchyLimit, "a hierarchy file")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h, err := ParseHierarchy(r, featureNames)
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return nil, pe
	}
	return h, err
}

// ParseHierarchy reads a feature hierarchy in JSON. The document is either
// one group object, which becomes the only top-level group (so the user's
// root is itself tested, as a family of one), or an array of group objects,
// which form the top-level family. A group object has a "name", an optional
// list "features" of the features it holds directly, and an optional list
// "children" of subgroups:
//
//	{"name": "all", "children": [
//	    {"name": "vitals", "features": ["heart rate", "3"]},
//	    {"name": "labs", "features": [4, 5]}
//	]}
//
// A feature is given by name (a string equal to one of featureNames) or by
// 0-based index (a JSON integer, or a string of decimal digits that is not
// a feature name). featureNames lists the names of the data's features,
// e.g. tempora.Dataset.FeatureNames; if it is nil only indices are
// accepted, and they are range-checked when the hierarchy is used.
//
// ParseHierarchy returns an error for malformed JSON, unknown fields, a
// group without a name or without features and children, a repeated group
// name, an unknown feature, or a feature listed twice, and reads at most
// safefile.HierarchyLimit bytes of r.
func ParseHierarchy(r io.Reader, featureNames []string) (*Hierarchy, error) {
	b, err := io.ReadAll(io.LimitReader(r, safefile.HierarchyLimit+1))
	if err != nil {
		return nil, fmt.Errorf("explain: reading hierarchy: %w", err)
	}
	if len(b) > safefile.HierarchyLimit {
		return nil, fmt.Errorf("explain: hierarchy of more than %s", safefile.Size(safefile.HierarchyLimit))
	}
	b = bytes.TrimSpace(b)
	var top []jsonGroup
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if len(b) > 0 && b[0] == '[' {
		err = dec.Decode(&top)
	} else {
		var g jsonGroup
		err = dec.Decode(&g)
		top = []jsonGroup{g}
	}
	if err != nil {
		return nil, fmt.Errorf("explain: malformed hierarchy JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("explain: malformed hierarchy JSON: data after the top-level value")
	}
	byName := make(map[string]int, len(featureNames))
	for j, n := range featureNames {
		byName[n] = j
	}
	var conv func(jg jsonGroup) (*Group, error)
	conv = func(jg jsonGroup) (*Group, error) {
		g := &Group{Name: jg.Name}
		for _, raw := range jg.Features {
			j, err := resolveFeature(raw, byName, featureNames, jg.Name)
			if err != nil {
				return nil, err
			}
			g.Features = append(g.Features, j)
		}
		for _, jc := range jg.Children {
			c, err := conv(jc)
			if err != nil {
				return nil, err
			}
			g.Children = append(g.Children, c)
		}
		return g, nil
	}
	h := &Hierarchy{}
	for _, jg := range top {
		g, err := conv(jg)
		if err != nil {
			return nil, err
		}
		h.Groups = append(h.Groups, g)
	}
	d := -1
	if featureNames != nil {
		d = len(featureNames)
	}
	if err := h.validate(d, featureNames); err != nil {
		return nil, err
	}
	return h, nil
}

func resolveFeature(raw json.RawMessage, byName map[string]int, names []string, group string) (int, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if j, ok := byName[s]; ok {
			return j, nil
		}
		if j, err := strconv.Atoi(s); err == nil && j >= 0 && isDigits(s) {
			if names != nil && j >= len(names) {
				return 0, fmt.Errorf("explain: hierarchy group %q lists feature %d, data has %d features", group, j, len(names))
			}
			return j, nil
		}
		return 0, fmt.Errorf("explain: hierarchy group %q lists unknown feature %q", group, s)
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err == nil {
		j, err := strconv.Atoi(n.String())
		if err != nil || j < 0 {
			return 0, fmt.Errorf("explain: hierarchy group %q lists feature %s, want a name or a non-negative integer index", group, n)
		}
		if names != nil && j >= len(names) {
			return 0, fmt.Errorf("explain: hierarchy group %q lists feature %d, data has %d features", group, j, len(names))
		}
		return j, nil
	}
	// The raw value is an object or an array; JSON strings hold no line
	// breaks, so joining its fields makes it one line.
	return 0, fmt.Errorf("explain: hierarchy group %q lists feature %s, want a name or an index", group, strings.Join(strings.Fields(string(raw)), " "))
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// node is a feature or a group in the test hierarchy.
type node struct {
	key      string // stream key prefix
	name     string
	members  []int
	children []*node // the family tested when this node is rejected
	res      *tempora.FeatureResult
	// index is the feature's index, or for a group −1 − its index in the
	// explanation's Groups.
	index int
}

func (n *node) test(kind string, w tempora.Window, k Perturbation, p int, stop Stop) Test {
	return Test{Features: n.members, Window: w, Kind: k, Permutations: p, Key: n.key + "/" + kind, Stop: stop}
}

// unit is what TIME's window stages explain: a node on one loss, the
// whole model's or one output's, whose results go to res (the node's own
// for the whole model, its entry in the explanation's per-output results
// otherwise).
type unit struct {
	*node
	out Output
	res *tempora.FeatureResult
}

// test is node.test scored on the unit's loss.
func (u unit) test(kind string, w tempora.Window, k Perturbation, p int, stop Stop) Test {
	t := u.node.test(kind, w, k, p, stop)
	t.Output = u.out
	return t
}

// wholeUnits returns the units of nodes on the whole model's loss.
func wholeUnits(nodes []*node) []unit {
	out := make([]unit, len(nodes))
	for i, n := range nodes {
		out[i] = unit{node: n, out: WholeModel, res: n.res}
	}
	return out
}

// buildNodes returns the top family and fills ex.Groups (pre-order) for a
// hierarchy.
func (c TIME) buildNodes(ex *tempora.Explanation, data *tempora.Dataset) ([]*node, error) {
	d := data.X.D
	featNode := func(j int) *node {
		return &node{key: "time/feature/" + strconv.Itoa(j), name: fmt.Sprintf("feature %q", data.Name(j)), members: []int{j}, res: &ex.Features[j], index: j}
	}
	if c.Hierarchy == nil {
		top := make([]*node, d)
		for j := range top {
			top[j] = featNode(j)
		}
		return top, nil
	}
	if err := c.Hierarchy.validate(d, data.FeatureNames); err != nil {
		return nil, err
	}
	// Count groups first so that result pointers into ex.Groups stay valid.
	var count func(g *Group) int
	count = func(g *Group) int {
		n := 1
		for _, ch := range g.Children {
			n += count(ch)
		}
		return n
	}
	total := 0
	for _, g := range c.Hierarchy.Groups {
		total += count(g)
	}
	ex.Groups = make([]tempora.FeatureResult, 0, total)
	covered := make([]bool, d)
	var build func(g *Group) *node
	build = func(g *Group) *node {
		r := tempora.NewFeatureResult(-1, g.Name)
		r.Members = g.members()
		ex.Groups = append(ex.Groups, r)
		n := &node{key: "time/group/" + strconv.Quote(g.Name), name: fmt.Sprintf("group %q", g.Name), members: r.Members, res: &ex.Groups[len(ex.Groups)-1], index: -len(ex.Groups)}
		for _, j := range g.Features {
			covered[j] = true
			n.children = append(n.children, featNode(j))
		}
		for _, ch := range g.Children {
			n.children = append(n.children, build(ch))
		}
		return n
	}
	var top []*node
	for _, g := range c.Hierarchy.Groups {
		top = append(top, build(g))
	}
	var missing []int
	for j, ok := range covered {
		if !ok {
			missing = append(missing, j)
		}
	}
	if len(missing) > 0 {
		ex.Warnings = append(ex.Warnings, fmt.Sprintf("features %v are not in the hierarchy and were not tested", missing))
	}
	return top, nil
}
