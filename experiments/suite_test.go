package experiments

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/builtins"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

func TestSuiteItems(t *testing.T) {
	for _, c := range []struct {
		o        Options
		items    int
		settings []string // distinct setting keys, in order
		outputs  []string // outputs of the first problem's items
		problems int      // distinct problem seeds
	}{
		{
			o:     Options{Suite: "table1"},
			items: 100 * 6, settings: []string{""},
			outputs:  []string{"TIME", "TIME-n", "LIME", "SAGE", "SAGE-m", "SAGE-z", "PERM", "PERM-f"},
			problems: 100,
		},
		{
			o:     Options{Suite: "table1", Quick: true},
			items: 3 * 6, settings: []string{"instances=200"},
			outputs:  []string{"TIME", "TIME-n", "LIME", "SAGE", "SAGE-m", "SAGE-z", "PERM", "PERM-f"},
			problems: 3,
		},
		{
			o:     Options{Suite: "table-s2", Models: 5, Methods: []string{"PERM-f", "TIME"}},
			items: 5 * 2, settings: []string{""}, outputs: []string{"PERM-f", "TIME"}, problems: 5,
		},
		{
			// One problem per model, analysed at 7 sizes.
			o:     Options{Suite: "testsize-regression"},
			items: 100 * 7,
			settings: []string{"instances=100", "instances=200", "instances=400", "instances=800",
				"instances=1600", "instances=3200", "instances=6400"},
			outputs: []string{"TIME"}, problems: 100,
		},
		{
			o:        Options{Suite: "testsize-classification", Quick: true},
			items:    3 * 5,
			settings: []string{"instances=100", "instances=200", "instances=400", "instances=800", "instances=1600"},
			outputs:  []string{"TIME"}, problems: 3,
		},
		{
			// γ and α do not change the problem; noise does.
			o:     Options{Suite: "grid", Grid: "noise=0,1;gamma=0.95,0.99", Models: 3},
			items: 2 * 2 * 3, settings: []string{"noise=0/gamma=0.95", "noise=0/gamma=0.99", "noise=1/gamma=0.95", "noise=1/gamma=0.99"},
			outputs: []string{"TIME", "TIME-n"}, problems: 2 * 3,
		},
	} {
		name := c.o.Suite
		items, err := Items(c.o)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(items) != c.items {
			t.Errorf("%s: %d items, want %d", name, len(items), c.items)
		}
		var keys []string
		problems := map[uint64]ProblemSpec{}
		explainers := map[uint64]bool{}
		for i, it := range items {
			if it.Index != i {
				t.Errorf("%s: item %d has index %d", name, i, it.Index)
			}
			if k := it.Setting.Key(); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			if p, ok := problems[it.ProblemSeed]; ok && p != it.Setting.Problem {
				t.Errorf("%s: problem seed %d used for two problem specs", name, it.ProblemSeed)
			}
			problems[it.ProblemSeed] = it.Setting.Problem
			if explainers[it.ExplainerSeed] {
				t.Errorf("%s: explainer seed of item %d reused", name, i)
			}
			explainers[it.ExplainerSeed] = true
		}
		slices.Sort(keys)
		want := slices.Clone(c.settings)
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			t.Errorf("%s: settings %q, want %q", name, keys, want)
		}
		var outs []string
		for _, it := range items {
			if it.Model != 0 || it.Setting.Key() != items[0].Setting.Key() {
				break
			}
			outs = append(outs, it.Outputs...)
		}
		if !slices.Equal(outs, c.outputs) {
			t.Errorf("%s: outputs %q, want %q", name, outs, c.outputs)
		}
		if len(problems) != c.problems {
			t.Errorf("%s: %d distinct problems, want %d", name, len(problems), c.problems)
		}
	}
}

func TestSuiteSettings(t *testing.T) {
	ss, err := mustSuite(t, "table1").Settings(false, "")
	if err != nil || len(ss) != 1 {
		t.Fatal(ss, err)
	}
	want := ProblemSpec{Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5, Task: tempora.Classification, Noise: "auto"}
	if ss[0].Problem != want || len(ss[0].Params) != 0 || ss[0].Params == nil {
		t.Errorf("table1: %+v, want problem %+v and an empty (non-nil) parameter list", ss[0], want)
	}
	ss, _ = mustSuite(t, "table-s2").Settings(false, "")
	if p := ss[0].Problem; p.Features != 30 || p.FractionRelevant != 0.33 || p.Instances != 1000 {
		t.Errorf("table-s2 problem %+v", p)
	}
	ss, _ = mustSuite(t, "testsize-regression").Settings(false, "")
	for _, s := range ss {
		p := s.Problem
		if p.Instances != 6400 || p.Features != 30 || p.Timesteps != 50 || p.Task != tempora.Regression || p.Noise != "auto" {
			t.Errorf("testsize-regression %s: problem %+v", s.Key(), p)
		}
		if s.Params[0].Value != strings.TrimPrefix(s.Key(), "instances=") || s.Head == 0 {
			t.Errorf("testsize-regression %s: head %d", s.Key(), s.Head)
		}
	}
	// Two methods of one problem and setting have different explainer
	// seeds, and adding methods or models does not change existing seeds.
	a, _ := Items(Options{Suite: "table1", Models: 2, Methods: []string{"LIME"}})
	b, _ := Items(Options{Suite: "table1", Models: 3, Methods: []string{"TIME", "LIME"}})
	for _, x := range a {
		i := slices.IndexFunc(b, func(y Item) bool { return y.Model == x.Model && y.Method == x.Method })
		if i < 0 || b[i].ExplainerSeed != x.ExplainerSeed || b[i].ProblemSeed != x.ProblemSeed {
			t.Errorf("model %d %s: seeds changed when methods and models were added", x.Model, x.Method)
		}
	}
}

func mustSuite(t *testing.T, name string) *Suite {
	t.Helper()
	s, err := LookupSuite(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseGrid(t *testing.T) {
	axes, err := parseGrid(" noise = 0, 0.5 ; window-independent=true,false;alpha=0.05")
	if err != nil {
		t.Fatal(err)
	}
	if len(axes) != 3 || len(axes[0]) != 2 || axes[0][1] != (record.Param{Key: "noise", Value: "0.5"}) || axes[2][0].Value != "0.05" {
		t.Errorf("parseGrid = %v", axes)
	}
	ss, err := gridSettings(false, "features=4;timesteps=6;instances=50;task=regression;permutations=7;relevant=0.25;window-independent=true;gamma=0.9;alpha=0.2;noise=0.3")
	if err != nil {
		t.Fatal(err)
	}
	s := ss[0]
	want := ProblemSpec{Instances: 50, Features: 4, Timesteps: 6, FractionRelevant: 0.25, Task: tempora.Regression, Noise: "0.3", WindowIndependent: true}
	wantMethod := []record.Param{{Key: "permutations", Value: "7"}, {Key: "gamma", Value: "0.9"}, {Key: "alpha", Value: "0.2"}}
	if s.Problem != want || !slices.Equal(s.Method, wantMethod) {
		t.Errorf("grid setting %+v, want problem %+v and method parameters %v", s, want, wantMethod)
	}
	// At quick scale an unswept instance count shrinks and is recorded.
	ss, _ = gridSettings(true, "gamma=0.9")
	if ss[0].Problem.Instances != quickTableInstances || ss[0].Key() != "gamma=0.9/instances=200" {
		t.Errorf("quick grid setting %s with %d instances", ss[0].Key(), ss[0].Problem.Instances)
	}
	for _, bad := range []string{"", "noise", "noise=", "Foo=1", "noise=1;noise=2", "noise=1,1",
		"features=0", "features=2.5", "task=ranking", "window-independent=maybe", "noise=-1", "noise=a/b"} {
		if _, err := parseGrid(bad); err == nil {
			t.Errorf("parseGrid(%q): no error", bad)
		}
	}
	// Found by FuzzParseGrid: the root package's error leaked out unwrapped,
	// a line break made a multi-line error, and a non-finite noise (or a
	// size synth rejects) passed the grid and failed the run.
	for _, c := range []struct{ spec, want string }{
		{"task=0", "experiments: grid task=0, want regression or classification"},
		{"features=1\n2", `experiments: grid value of features: "1\n2" contains a control character (a name must not contain white space, control characters, '/', '=' or '\')`},
		{"noise=NaN", "experiments: grid noise=NaN, want auto or a finite number ≥ 0"},
		{"noise=0,inf", "experiments: grid noise=inf, want auto or a finite number ≥ 0"},
		{"instances=1", "experiments: grid instances=1, want an integer ≥ 2 (a problem is calibrated on at least two instances)"},
		{"timesteps=1", "experiments: grid timesteps=1, want an integer ≥ 2 (every window has at least two timesteps)"},
		{"relevant=1.00000001", "experiments: grid relevant=1.00000001, want a fraction in (0, 1]"},
		{"gamma=a\\b", `experiments: grid value of gamma: "a\\b" contains '\\' (a name must not contain white space, control characters, '/', '=' or '\')`},
	} {
		if _, err := parseGrid(c.spec); err == nil || err.Error() != c.want {
			t.Errorf("parseGrid(%q) = %v,\nwant %s", c.spec, err, c.want)
		}
	}
	// Method parameters are checked against the methods run: the name must
	// belong to one of them, and every method that has it must accept the
	// value.
	for _, c := range []struct {
		grid    string
		methods []string
		ok      bool
	}{
		{"gamma=0.9", []string{"TIME"}, true},
		{"gamma=1", []string{"TIME"}, false},
		{"alpha=0", []string{"TIME", "PERM"}, false},
		{"gamma=0.9", []string{"LIME"}, false},
		{"foo=1", []string{"TIME"}, false},
		{"samples=500", []string{"TIME", "lime"}, true},
		{"permutations=10", []string{"perm-f"}, true},
		{"max-time=5s", []string{"SAGE-z"}, true},
		{"max-time=5", []string{"SAGE-z"}, false},
	} {
		_, err := Items(Options{Suite: "grid", Grid: c.grid, Methods: c.methods})
		if (err == nil) != c.ok {
			t.Errorf("grid %q with %v: error %v, want ok %v", c.grid, c.methods, err, c.ok)
		}
	}
}

func TestShardsPartition(t *testing.T) {
	items, err := Items(Options{Suite: "table1", Models: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, 5, 13} {
		seen := map[string]int{}
		for i := range n {
			sh := Shard{I: i, N: n}
			for _, it := range items {
				if !sh.has(it.Index) {
					continue
				}
				for _, k := range it.keys("table1") {
					seen[k]++
				}
			}
		}
		if len(seen) != 7*8 {
			t.Errorf("%d shards cover %d records, want %d", n, len(seen), 7*8)
		}
		for k, c := range seen {
			if c != 1 {
				t.Errorf("%d shards: %s in %d shards", n, k, c)
			}
		}
	}
	// TIME and TIME-n, PERM and PERM-f are one item each.
	for _, it := range items {
		switch it.Method {
		case "TIME":
			if !slices.Equal(it.Outputs, []string{"TIME", "TIME-n"}) {
				t.Errorf("TIME item outputs %v", it.Outputs)
			}
		case "PERM":
			if !slices.Equal(it.Outputs, []string{"PERM", "PERM-f"}) {
				t.Errorf("PERM item outputs %v", it.Outputs)
			}
		}
	}
	for _, s := range []string{"1/1", "-1/2", "2", "a/b", "0/0"} {
		if _, err := ParseShard(s); err == nil {
			t.Errorf("ParseShard(%q): no error", s)
		}
	}
	if sh, err := ParseShard("3/4"); err != nil || sh != (Shard{I: 3, N: 4}) || sh.String() != "3/4" {
		t.Errorf("ParseShard(3/4) = %v, %v", sh, err)
	}
}

// TestSuiteTestMode checks which permutation tests each suite's TIME and
// PERM run: the paper's fixed-P tests in the suites that reproduce the
// paper, sequential tests in the grid suite unless an axis says otherwise.
func TestSuiteTestMode(t *testing.T) {
	var timeM, perm *method.Method
	for _, m := range builtins.Methods() {
		switch m.Name {
		case "TIME":
			timeM = &m
		case "PERM":
			perm = &m
		}
	}
	for _, tc := range []struct {
		suite, grid string
		sequential  bool
	}{
		{"table1", "", false},
		{"table-s2", "", false},
		{"testsize-regression", "", false},
		{"testsize-classification", "", false},
		{"grid", "noise=0.5", true},
		{"grid", "sequential=false", false},
		{"grid", "tests=fixed", false},
	} {
		s, err := LookupSuite(tc.suite)
		if err != nil {
			t.Fatal(err)
		}
		settings, err := s.Settings(true, tc.grid)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range settings {
			for _, m := range []*method.Method{timeM, perm} {
				v, err := st.values(m)
				if err != nil {
					t.Fatal(err)
				}
				tests, err := builtins.TestsOf(m, v)
				if err != nil {
					t.Fatal(err)
				}
				if got := tests != explain.FixedTests; got != tc.sequential {
					t.Errorf("suite %s, grid %q, setting %q: %s tests=%v, want sequential %v", tc.suite, tc.grid, st.Key(), m.Name, tests, tc.sequential)
				}
				if got := v.Int("permutations"); got != 0 {
					t.Errorf("suite %s: %s permutations=%d, want 0 (automatic: 50 when fixed)", tc.suite, m.Name, got)
				}
			}
		}
	}
}

// TestQuickScaleTime checks what the comment on the quick scale says: each
// paper suite (every suite with an expected time) runs in under a minute at
// quick scale, by its QuickTime ("about N s").
func TestQuickScaleTime(t *testing.T) {
	for _, s := range Suites {
		if s.QuickTime == "" {
			continue
		}
		var sec int
		if _, err := fmt.Sscanf(s.QuickTime, "about %d s", &sec); err != nil || sec >= 60 {
			t.Errorf("suite %s: QuickTime %q, want about N s with N < 60 (or update the comment on the quick scale)", s.Name, s.QuickTime)
		}
	}
}
