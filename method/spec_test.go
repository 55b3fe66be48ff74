package method

import (
	"testing"
	"time"
)

// TestSpec checks that a declaration's data form carries every field and
// that Get reads given, default and quick-scale values by type.
func TestSpec(t *testing.T) {
	n := Spec[int]{Name: "n", Doc: "count", Default: 5, Quick: new(2), Range: "[1, inf)"}
	d := Spec[time.Duration]{Name: "budget", Doc: "time", Default: time.Second}
	s := Spec[string]{Name: "file", Doc: "path"}
	ps := Params(n, d, s)
	if len(ps) != 3 || ps[0].Name != "n" || ps[0].Doc != "count" || ps[0].Default != 5 || ps[0].Quick != 2 || ps[0].Range != "[1, inf)" {
		t.Fatalf("Params: %+v", ps)
	}
	if ps[1].Quick != nil || ps[1].Kind() != Duration || ps[2].Kind() != String || ps[2].Default != "" {
		t.Fatalf("Params: %+v", ps)
	}
	m := Method{Name: "X", Params: ps}
	for _, tc := range []struct {
		given  map[string]string
		quick  bool
		n      int
		budget time.Duration
	}{
		{nil, false, 5, time.Second},
		{nil, true, 2, time.Second},
		{map[string]string{"n": "9", "budget": "90s"}, true, 9, 90 * time.Second},
	} {
		v, err := m.Values(tc.given, tc.quick)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Get(v); got != tc.n {
			t.Errorf("%v quick=%v: n = %d, want %d", tc.given, tc.quick, got, tc.n)
		}
		if got := d.Get(v); got != tc.budget {
			t.Errorf("%v quick=%v: budget = %v, want %v", tc.given, tc.quick, got, tc.budget)
		}
		if got := s.Get(v); got != "" {
			t.Errorf("file = %q", got)
		}
	}
	// A declaration of the wrong type is a bug in the method: Get panics.
	defer func() {
		if recover() == nil {
			t.Error("Get of an int parameter as a float did not panic")
		}
	}()
	v, _ := m.Values(nil, false)
	Spec[float64]{Name: "n"}.Get(v)
}
