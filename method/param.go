package method

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Param is one typed parameter of a method. Its type is the type of
// Default: int, float64, bool, time.Duration or string.
//
// A parameter is given as text (a flag of "tempora explain", a value of a
// grid axis) and parsed by its type: integers and floats as Go literals,
// booleans as strconv.ParseBool does, durations as time.ParseDuration does
// ("90s", "2m"), strings as they are.
type Param struct {
	// Name is the flag and grid-axis name: a lower-case letter, then
	// lower-case letters, digits and '-'.
	Name string
	// Doc is a one-line description for help texts.
	Doc string
	// Default is the value when none is given.
	Default any
	// Quick, if non-nil, is the default at the benchmark's quick scale
	// (smaller budgets for smoke tests); it has Default's type.
	Quick any
	// Range, for int, float64 and time.Duration parameters, is the interval
	// of valid values in the usual notation: "[1, inf)", "(0, 1)",
	// "[0, 100]"; durations are compared in seconds. Empty means any value
	// (floats must still be finite). Defaults must lie in the range.
	Range string
	// Deprecated, if not empty, marks a deprecated spelling of another
	// parameter and says what to use instead ("tests=fixed"): help texts
	// show it as such, and it is left out of Describe unless given.
	Deprecated string
}

// Kind is the type of a parameter.
type Kind int

// The kinds of parameters.
const (
	Invalid Kind = iota
	Int
	Float
	Bool
	Duration
	String
)

// String returns the kind's name as help texts show it: "int", "float",
// "bool", "duration" or "string".
func (k Kind) String() string {
	switch k {
	case Int:
		return "int"
	case Float:
		return "float"
	case Bool:
		return "bool"
	case Duration:
		return "duration"
	case String:
		return "string"
	}
	return "invalid"
}

// Kind returns the parameter's kind, from the type of Default.
func (p *Param) Kind() Kind { return kindOf(p.Default) }

func kindOf(v any) Kind {
	switch v.(type) {
	case int:
		return Int
	case float64:
		return Float
	case bool:
		return Bool
	case time.Duration:
		return Duration
	case string:
		return String
	}
	return Invalid
}

var paramNameRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

func (p *Param) check() error {
	if !paramNameRE.MatchString(p.Name) {
		return fmt.Errorf("bad parameter name %q (want a lower-case letter, then lower-case letters, digits or '-')", p.Name)
	}
	k := p.Kind()
	if k == Invalid {
		return fmt.Errorf("parameter %s: default %v (%T) is not an int, float64, bool, time.Duration or string", p.Name, p.Default, p.Default)
	}
	if strings.ContainsAny(p.Doc, "\n") {
		return fmt.Errorf("parameter %s: Doc must be one line", p.Name)
	}
	if p.Range != "" {
		if k != Int && k != Float && k != Duration {
			return fmt.Errorf("parameter %s: a %s parameter has no range", p.Name, k)
		}
		if _, err := parseRange(p.Range); err != nil {
			return fmt.Errorf("parameter %s: %w", p.Name, err)
		}
	}
	for _, d := range []struct {
		what string
		v    any
	}{{"default", p.Default}, {"quick default", p.Quick}} {
		if d.v == nil && d.what == "quick default" {
			continue
		}
		if kindOf(d.v) != k {
			return fmt.Errorf("parameter %s: %s %v is a %T, the default a %T", p.Name, d.what, d.v, d.v, p.Default)
		}
		if err := p.inRange(d.v); err != nil {
			return fmt.Errorf("parameter %s: %s: %w", p.Name, d.what, err)
		}
	}
	return nil
}

// interval is a parsed Range.
type interval struct {
	lo, hi         float64
	loOpen, hiOpen bool
}

var rangeRE = regexp.MustCompile(`^([\[(])\s*([^,\s]+)\s*,\s*([^,\s\])]+)\s*([\])])$`)

func parseRange(s string) (interval, error) {
	m := rangeRE.FindStringSubmatch(s)
	if m == nil {
		return interval{}, fmt.Errorf("range %q is not an interval such as [1, inf) or (0, 1)", s)
	}
	bound := func(b string) (float64, error) {
		switch b {
		case "inf", "+inf", "∞", "+∞":
			return math.Inf(1), nil
		case "-inf", "-∞", "−∞":
			return math.Inf(-1), nil
		}
		return strconv.ParseFloat(b, 64)
	}
	lo, err1 := bound(m[2])
	hi, err2 := bound(m[3])
	if err1 != nil || err2 != nil || math.IsNaN(lo) || math.IsNaN(hi) || lo > hi {
		return interval{}, fmt.Errorf("range %q has bad bounds", s)
	}
	return interval{lo: lo, hi: hi, loOpen: m[1] == "(", hiOpen: m[4] == ")"}, nil
}

func (r interval) contains(x float64) bool {
	if x < r.lo || x > r.hi || (r.loOpen && x == r.lo) || (r.hiOpen && x == r.hi) {
		return false
	}
	return true
}

// inRange checks a value of the parameter's kind against its range (and
// floats for finiteness).
func (p *Param) inRange(v any) error {
	var x float64
	switch v := v.(type) {
	case int:
		x = float64(v)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%v is not a finite number", v)
		}
		x = v
	case time.Duration:
		x = v.Seconds()
	default:
		return nil
	}
	if p.Range == "" {
		return nil
	}
	r, err := parseRange(p.Range)
	if err != nil {
		return err
	}
	if !r.contains(x) {
		return fmt.Errorf("%v is outside %s", v, p.Range)
	}
	return nil
}

// Parse parses s as a value of the parameter and checks its range. The
// error is one line naming the parameter, its type and its range.
func (p *Param) Parse(s string) (any, error) {
	var v any
	var err error
	switch p.Kind() {
	case Int:
		v, err = strconv.Atoi(strings.TrimSpace(s))
	case Float:
		v, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
	case Bool:
		v, err = strconv.ParseBool(strings.TrimSpace(s))
	case Duration:
		v, err = time.ParseDuration(strings.TrimSpace(s))
	case String:
		v = s
	default:
		err = fmt.Errorf("invalid parameter")
	}
	if err == nil {
		err = p.inRange(v)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %q: want %s", p.Name, s, p.Want())
	}
	return v, nil
}

// Want describes the valid values: "an int in [1, inf)", "a bool", ….
func (p *Param) Want() string {
	k := p.Kind()
	a := "a"
	if k == Int {
		a = "an"
	}
	if p.Range != "" {
		return fmt.Sprintf("%s %s in %s", a, k, p.Range)
	}
	return a + " " + k.String()
}

// Format returns v (a value of the parameter's kind) as text that Parse
// reads back.
func Format(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case time.Duration:
		return v.String()
	}
	return fmt.Sprint(v)
}

// Values holds the values of a method's parameters, as its constructor
// receives them (Config.Values). Its zero value holds none. The typed
// getters panic when the method has no parameter of that name and type:
// that is a bug in the constructor, which the contract tests of package
// explainertest catch.
type Values struct {
	method string
	params []Param
	vals   []any
	given  []bool
}

func newValues(method string, params []Param, given map[string]string, quick bool) (Values, error) {
	names := make([]string, 0, len(given))
	for n := range given {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if !slices.ContainsFunc(params, func(p Param) bool { return p.Name == n }) {
			return Values{}, fmt.Errorf("method: %s has no parameter %q", method, n)
		}
	}
	v := Values{method: method, params: params, vals: make([]any, len(params)), given: make([]bool, len(params))}
	for i := range params {
		p := &params[i]
		s, ok := given[p.Name]
		switch {
		case ok:
			x, err := p.Parse(s)
			if err != nil {
				return Values{}, fmt.Errorf("method: %s: %w", method, err)
			}
			v.vals[i], v.given[i] = x, true
		case quick && p.Quick != nil:
			v.vals[i] = p.Quick
		default:
			v.vals[i] = p.Default
		}
	}
	return v, nil
}

func (v Values) get(name string, k Kind) any {
	for i, p := range v.params {
		if p.Name == name {
			if p.Kind() != k {
				panic(fmt.Sprintf("method: %s: parameter %s is a %s, not a %s", v.method, name, p.Kind(), k))
			}
			return v.vals[i]
		}
	}
	panic(fmt.Sprintf("method: %s has no parameter %q", v.method, name))
}

// Int returns the value of an int parameter.
func (v Values) Int(name string) int { return v.get(name, Int).(int) }

// Float returns the value of a float64 parameter.
func (v Values) Float(name string) float64 { return v.get(name, Float).(float64) }

// Bool returns the value of a bool parameter.
func (v Values) Bool(name string) bool { return v.get(name, Bool).(bool) }

// Duration returns the value of a time.Duration parameter.
func (v Values) Duration(name string) time.Duration { return v.get(name, Duration).(time.Duration) }

// String returns the value of a string parameter.
func (v Values) String(name string) string { return v.get(name, String).(string) }

// Given reports whether the named parameter was given rather than
// defaulted.
func (v Values) Given(name string) bool {
	for i, p := range v.params {
		if p.Name == name {
			return v.given[i]
		}
	}
	return false
}

// Describe returns the values as "name=value" pairs separated by commas,
// in parameter order, leaving out empty strings and deprecated parameters
// not given: "permutations=50, alpha=0.1, gamma=0.99".
func (v Values) Describe() string {
	var parts []string
	for i, p := range v.params {
		if s, ok := v.vals[i].(string); ok && s == "" {
			continue
		}
		if p.Deprecated != "" && !v.given[i] {
			continue
		}
		parts = append(parts, p.Name+"="+Format(v.vals[i]))
	}
	return strings.Join(parts, ", ")
}
