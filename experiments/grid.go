package experiments

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/synth"
)

// GridParam is a problem parameter the grid suite can sweep.
type GridParam struct{ Name, Doc string }

// ProblemParams are the parameters of the synthesised problem that the grid
// suite can sweep. A grid axis with any other name sweeps the parameter of
// that name of every method run that has one (e.g. permutations, gamma,
// alpha), on the same problems.
var ProblemParams = []GridParam{
	{"features", "number of features D"},
	{"timesteps", "sequence length L"},
	{"instances", "number of instances M"},
	{"relevant", "fraction of relevant features"},
	{"task", "regression or classification"},
	{"noise", "noise multiplier β of the irrelevant features, or auto"},
	{"window-independent", "window-independent sequences (true/false)"},
	{"missing-rate", "irregular world: expected fraction of missing cells, in [0, 0.95]"},
	{"length-spread", "irregular world: lengths uniform between ⌈L/spread⌉ and L (≥ 1)"},
	{"alignment", "irregular world: start or end"},
	{"missing-mechanism", "irregular world: mcar or mnar"},
}

func isProblemParam(name string) bool {
	return slices.ContainsFunc(ProblemParams, func(g GridParam) bool { return g.Name == name })
}

var gridNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// parseGrid parses a sweep specification "name=v1,v2;name=v3" into its
// axes, in order, checking the names and values of problem parameters.
// Any other name is taken as a method parameter; its values are checked
// when a run knows its methods.
func parseGrid(spec string) ([][]record.Param, error) {
	var axes [][]record.Param
	seen := map[string]bool{}
	for part := range strings.SplitSeq(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, vals, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("experiments: grid part %q is not name=v1,v2,…", part)
		}
		if !gridNameRE.MatchString(name) {
			return nil, fmt.Errorf("experiments: bad grid parameter name %q", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("experiments: grid parameter %q given twice", name)
		}
		seen[name] = true
		var axis []record.Param
		for v := range strings.SplitSeq(vals, ",") {
			v = strings.TrimSpace(v)
			p := record.Param{Key: name, Value: v}
			var s Setting
			if err := applyParam(&s, p); err != nil {
				return nil, err
			}
			if slices.Contains(axis, p) {
				return nil, fmt.Errorf("experiments: grid value %s=%s given twice", name, v)
			}
			axis = append(axis, p)
		}
		axes = append(axes, axis)
	}
	if len(axes) == 0 {
		return nil, fmt.Errorf("experiments: empty grid specification %q", spec)
	}
	return axes, nil
}

// applyParam sets one grid parameter on a setting: a problem parameter, or
// else a method parameter (checked against the run's methods later). Every
// error is one line starting with "experiments: grid ": a value is a
// record name (record.CheckName), so it holds no line break.
func applyParam(s *Setting, p record.Param) error {
	if p.Value == "" {
		return fmt.Errorf("experiments: grid parameter %s has an empty value", p.Key)
	}
	if err := record.CheckName(p.Value); err != nil {
		return fmt.Errorf("experiments: grid value of %s: %w", p.Key, err)
	}
	atLeast := func(lo int, what string) (int, error) {
		n, err := strconv.Atoi(p.Value)
		if err != nil || n < lo {
			return 0, fmt.Errorf("experiments: grid %s=%s, want an integer ≥ %d (%s)", p.Key, p.Value, lo, what)
		}
		return n, nil
	}
	var err error
	switch p.Key {
	case "features":
		s.Problem.Features, err = atLeast(1, "a problem has at least one feature")
	case "timesteps":
		s.Problem.Timesteps, err = atLeast(2, "every window has at least two timesteps")
	case "instances":
		s.Problem.Instances, err = atLeast(2, "a problem is calibrated on at least two instances")
	case "relevant":
		f, e := strconv.ParseFloat(p.Value, 64)
		if e != nil || !(f > 0 && f <= 1) {
			err = fmt.Errorf("experiments: grid relevant=%s, want a fraction in (0, 1]", p.Value)
		}
		s.Problem.FractionRelevant = f
	case "task":
		s.Problem.Task, err = tempora.ParseTask(p.Value)
		if err != nil {
			err = fmt.Errorf("experiments: grid task=%s, want regression or classification", p.Value)
		}
	case "noise":
		if _, e := synth.ParseNoise(p.Value); e != nil {
			err = fmt.Errorf("experiments: grid noise=%s, want auto or a finite number ≥ 0", p.Value)
		}
		s.Problem.Noise = p.Value
	case "window-independent":
		s.Problem.WindowIndependent, err = strconv.ParseBool(p.Value)
		if err != nil {
			err = fmt.Errorf("experiments: grid window-independent=%s, want true or false", p.Value)
		}
	case "missing-rate":
		f, e := strconv.ParseFloat(p.Value, 64)
		if e != nil || !(f >= 0 && f <= synth.MaxMissingRate) {
			err = fmt.Errorf("experiments: grid missing-rate=%s, want a fraction in [0, %v]", p.Value, synth.MaxMissingRate)
		}
		s.Problem.MissingRate = f
	case "length-spread":
		f, e := strconv.ParseFloat(p.Value, 64)
		if e != nil || !(f >= 1) || math.IsInf(f, 0) {
			err = fmt.Errorf("experiments: grid length-spread=%s, want a finite number ≥ 1", p.Value)
		}
		s.Problem.LengthSpread = f
	case "alignment":
		if _, e := tempora.ParseAlignment(p.Value); e != nil {
			err = fmt.Errorf("experiments: grid alignment=%s, want start or end", p.Value)
		}
		s.Problem.Alignment = p.Value
	case "missing-mechanism":
		if _, e := synth.ParseMechanism(p.Value); e != nil {
			err = fmt.Errorf("experiments: grid missing-mechanism=%s, want mcar or mnar", p.Value)
		}
		s.Problem.Mechanism = p.Value
	default:
		s.Method = append(slices.Clone(s.Method), p)
	}
	return err
}

// gridSettings expands a grid specification into the cross product of its
// axes (the first axis varies slowest), around the Table 1 problem.
func gridSettings(quick bool, spec string) ([]Setting, error) {
	grid, err := parseGrid(spec)
	if err != nil {
		return nil, err
	}
	var axes []axis
	for _, a := range grid {
		vals := make([]string, len(a))
		for i, p := range a {
			vals[i] = p.Value
		}
		axes = append(axes, paramAxis(a[0].Key, vals...))
	}
	if quick && !slices.ContainsFunc(grid, func(a []record.Param) bool { return a[0].Key == "instances" }) {
		axes = append(axes, paramAxis("instances", strconv.Itoa(quickTableInstances)))
	}
	return sweep(Setting{Problem: table1Problem, Quick: quick}, axes)
}
