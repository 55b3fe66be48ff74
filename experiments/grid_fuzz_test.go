package experiments

import (
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/synth"
)

// FuzzParseGrid feeds parseGrid (the -grid flag of the grid suite) an
// arbitrary specification. Seeds are in testdata/fuzz/FuzzParseGrid and
// below. Properties: no panic; a one-line error with the "experiments: "
// prefix; on success, axes with distinct known names and distinct
// non-empty values, which written back as a specification parse to the
// same axes; and, for grids of at most maxFuzzSettings settings, the grid
// suite's settings are exactly the cross product of the axes, in order,
// each with distinct keys.
func FuzzParseGrid(f *testing.F) {
	for _, s := range []string{
		"noise=0,0.5;gamma=0.95,0.99",
		"instances=100,200; features=5 ;task=regression,classification",
		"window-independent=true,false;relevant=0.2;alpha=0.05;permutations=20,50",
		"noise=auto,0;timesteps=10",
		"task=0", "features=1\n2", "noise=NaN", "noise=0,inf", "noise=0,0", "gamma=1", "bogus=1", "features", ";;", "", "features=1;features=2", "noise=a/b",
	} {
		f.Add(s)
	}
	const maxFuzzSettings = 4096
	f.Fuzz(func(t *testing.T, spec string) {
		axes, err := parseGrid(spec)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "experiments: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q is not one line with the experiments: prefix", msg)
			}
			return
		}
		if len(axes) == 0 {
			t.Fatal("no axes and no error")
		}
		for _, axis := range axes {
			for _, p := range axis {
				// A value the grid accepts must be one the run accepts.
				if p.Key == "noise" && p.Value != "auto" {
					if _, err := synth.ParseNoise(p.Value); err != nil {
						t.Fatalf("grid accepts noise=%s, synth rejects it: %v", p.Value, err)
					}
				}
			}
		}
		names := map[string]bool{}
		var parts []string
		n := 1
		for _, axis := range axes {
			if len(axis) == 0 {
				t.Fatalf("empty axis in %v", axes)
			}
			name := axis[0].Key
			if names[name] || !isGridParam(name) {
				t.Fatalf("axis name %q repeated or unknown", name)
			}
			names[name] = true
			values := map[string]bool{}
			var vs []string
			for _, p := range axis {
				if p.Key != name || p.Value == "" || values[p.Value] {
					t.Fatalf("axis %q has value %+v", name, p)
				}
				values[p.Value] = true
				vs = append(vs, p.Value)
			}
			parts = append(parts, name+"="+strings.Join(vs, ","))
			if n <= maxFuzzSettings {
				n *= len(axis)
			}
		}
		again, err := parseGrid(strings.Join(parts, ";"))
		if err != nil || len(again) != len(axes) {
			t.Fatalf("reparsing %q: %v, %v", strings.Join(parts, ";"), again, err)
		}
		for i := range axes {
			if len(again[i]) != len(axes[i]) {
				t.Fatalf("reparsing axis %d: %v, want %v", i, again[i], axes[i])
			}
			for k := range axes[i] {
				if again[i][k] != axes[i][k] {
					t.Fatalf("reparsing axis %d: %v, want %v", i, again[i], axes[i])
				}
			}
		}
		if n > maxFuzzSettings {
			return
		}
		grid, err := LookupSuite("grid")
		if err != nil {
			t.Fatal(err)
		}
		settings, err := grid.Settings(true, spec)
		if err != nil {
			t.Fatalf("Settings of a valid grid: %v", err)
		}
		if len(settings) != n {
			t.Fatalf("%d settings for a %d-setting grid", len(settings), n)
		}
		keys := map[string]bool{}
		for k, s := range settings {
			// Setting k takes value (k / stride) mod len(axis) of each
			// axis, the last axis varying fastest.
			stride := n
			for i, axis := range axes {
				stride /= len(axis)
				if want := axis[(k/stride)%len(axis)]; s.Params[i] != want {
					t.Fatalf("setting %d: param %d is %+v, want %+v", k, i, s.Params[i], want)
				}
			}
			if keys[s.Key()] {
				t.Fatalf("two settings with key %q", s.Key())
			}
			keys[s.Key()] = true
		}
	})
}

// isGridParam reports whether name may name a grid axis: a problem
// parameter, or any well-formed name (a method parameter, checked when a
// run knows its methods).
func isGridParam(name string) bool {
	return isProblemParam(name) || gridNameRE.MatchString(name)
}
