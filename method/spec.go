package method

import "time"

// Value is the type of a parameter's value.
type Value interface {
	int | float64 | bool | time.Duration | string
}

// Spec declares one parameter of a method once, as typed data: its name,
// help text, default, quick-scale default and valid range. Param gives the
// data form that tables, flags, grid axes, help texts and records use, and
// Get reads the parameter's value in the method's constructor, so that no
// parameter is named twice:
//
//	var samples = method.Spec[int]{Name: "samples", Doc: "samples per instance", Default: 100, Range: "[2, inf)"}
//
//	m := method.Method{Name: "X", Params: method.Params(samples),
//		New: func(c method.Config) (tempora.Explainer, error) { return X{Samples: samples.Get(c.Values)}, nil }}
type Spec[T Value] struct {
	// Name, Doc, Range and Deprecated are those of Param.
	Name       string
	Doc        string
	Range      string
	Deprecated string
	// Default is the value when none is given.
	Default T
	// Quick, if non-nil, is the default at the benchmark's quick scale
	// (Go 1.26: Quick: new(1000)).
	Quick *T
}

// Param returns the parameter's data form.
func (s Spec[T]) Param() Param {
	p := Param{Name: s.Name, Doc: s.Doc, Default: s.Default, Range: s.Range, Deprecated: s.Deprecated}
	if s.Quick != nil {
		p.Quick = *s.Quick
	}
	return p
}

// Get returns the parameter's value in v. Like Values' getters it panics
// when the method has no parameter of that name and type, a bug in the
// method's declaration that Method.Check cannot see but the contract tests
// of package explainertest catch.
func (s Spec[T]) Get(v Values) T {
	var zero T
	return v.get(s.Name, kindOf(zero)).(T)
}

// Declaration is a declared parameter: a Spec of any type.
type Declaration interface {
	Param() Param
}

// Params returns the data form of the declared parameters, in order: a
// method's Params.
func Params(ds ...Declaration) []Param {
	ps := make([]Param, len(ds))
	for i, d := range ds {
		ps[i] = d.Param()
	}
	return ps
}
