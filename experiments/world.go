package experiments

import (
	"context"
	"fmt"
	"slices"

	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/synth"
)

// A World is a family of synthetic problems with known truth. Each world
// is declared once, beside its suite: its type holds the parameters that
// select one of its problems (a comparable value, so that equal specs mean
// equal problems), Generate makes the problem and its truth, and its
// suite lists its axes (sweep). The nil World of a ProblemSpec is
// synth.Generate's world (the paper's, made irregular when the spec asks),
// the only one with a saved form (WriteProblems).
type World interface {
	// Name names the world in messages.
	Name() string
	// Generate makes the problem of spec, with its ground truth, from
	// seed.
	Generate(ctx context.Context, spec ProblemSpec, seed uint64) (*Problem, error)
}

// generated is synth.Generate's world, the nil World.
type generated struct{}

func (generated) Name() string { return "synth" }

func (generated) Generate(_ context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
	cfg, err := synthConfig(spec)
	if err != nil {
		return nil, err
	}
	p, err := synth.Generate(cfg, seed)
	if err != nil {
		return nil, err
	}
	return &Problem{Data: p.Data, Model: p.Model, Truth: truthOf(p.Truth), held: p.Model.Held}, nil
}

// world returns spec's world (generated for nil).
func (spec ProblemSpec) world() World {
	if spec.World == nil {
		return generated{}
	}
	return spec.World
}

// synthesise generates the problem of spec in its world.
func synthesise(ctx context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
	return spec.world().Generate(ctx, spec, seed)
}

// A view presents a setting's problem otherwise than its world generated
// it (scored against another truth, padded with zeros) without changing
// the problem: settings that differ only in their view analyse the same
// problems. The nil view presents the problem as generated.
type view interface {
	apply(*Problem) (*Problem, error)
	// unsaved says why problems so presented cannot be written
	// (WriteProblems).
	unsaved() string
}

// An axis is one parameter of a suite's settings: its name in records,
// its values, and how a value sets a setting. A problem axis changes the
// problem, so settings with different values analyse different problems;
// any other axis (a method parameter, a view) keeps the problem.
type axis struct {
	name    string
	values  []string
	problem bool
	set     func(s *Setting, value string) error
}

// sweep returns the settings of the cross product of axes around base, the
// first axis varying slowest: each setting's parameters are its axes'
// values in order, and its problem key is that of its problem axes.
func sweep(base Setting, axes []axis) ([]Setting, error) {
	var out []Setting
	var rec func(i int, s Setting) error
	rec = func(i int, s Setting) error {
		if i == len(axes) {
			var pk []record.Param
			for k, p := range s.Params {
				if axes[k].problem {
					pk = append(pk, p)
				}
			}
			s.problemKey = paramKey(pk)
			out = append(out, s)
			return nil
		}
		a := axes[i]
		for _, v := range a.values {
			t := s
			t.Params = append(slices.Clone(s.Params), record.Param{Key: a.name, Value: v})
			if err := a.set(&t, v); err != nil {
				return err
			}
			if err := rec(i+1, t); err != nil {
				return err
			}
		}
		return nil
	}
	if err := rec(0, base); err != nil {
		return nil, err
	}
	return out, nil
}

// worldAxis is a problem axis of world W: set reads a value into W's
// parameters.
func worldAxis[W World](name string, values []string, set func(w *W, value string) error) axis {
	return axis{name: name, values: values, problem: true, set: func(s *Setting, v string) error {
		w, _ := s.Problem.World.(W)
		if err := set(&w, v); err != nil {
			return fmt.Errorf("experiments: %s=%s: %w", name, v, err)
		}
		s.Problem.World = w
		return nil
	}}
}

// paramAxis sweeps a grid parameter (applyParam): a problem parameter of
// ProblemParams or else a method parameter.
func paramAxis(name string, values ...string) axis {
	return axis{name: name, values: values, problem: isProblemParam(name), set: func(s *Setting, v string) error {
		return applyParam(s, record.Param{Key: name, Value: v})
	}}
}

// methodAxis sweeps the method parameter param under the name name.
func methodAxis(name, param string, values ...string) axis {
	return axis{name: name, values: values, set: func(s *Setting, v string) error {
		s.Method = append(slices.Clone(s.Method), record.Param{Key: param, Value: v})
		return nil
	}}
}

// viewAxis sweeps the views that of returns for values.
func viewAxis(name string, values []string, of func(value string) (view, error)) axis {
	return axis{name: name, values: values, set: func(s *Setting, v string) error {
		w, err := of(v)
		s.view = w
		return err
	}}
}
