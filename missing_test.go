package tempora

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// observeFixture returns 3 instances × 2 features × 4 timesteps with gaps
// and padding at either end.
func observeFixture(t *testing.T) *Tensor {
	t.Helper()
	nan := math.NaN()
	x, err := TensorFrom(3, 2, 4, []float64{
		// instance 0: full length, one gap in feature 1
		1, 2, 3, 4,
		5, nan, 7, 8,
		// instance 1: length 2 when start-aligned (last observed at t = 1)
		1, 2, nan, nan,
		nan, 3, nan, nan,
		// instance 2: observed at t = 2, 3 only
		nan, nan, 1, 2,
		nan, nan, 3, nan,
	})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestObserve(t *testing.T) {
	x := observeFixture(t)
	for _, tc := range []struct {
		align   Alignment
		support []Window
		missing []int
		cells   int
	}{
		// Start-aligned, instance 2 has [0, 3] with its first two steps
		// missing in both features.
		{AlignStart, []Window{{0, 3}, {0, 1}, {0, 3}}, []int{2, 1 + 1 + 3}, 10},
		// End-aligned, instance 1 has [0, 3] (its first observation is at
		// 0) and instance 2 has [2, 3].
		{AlignEnd, []Window{{0, 3}, {0, 3}, {2, 3}}, []int{2, 1 + 3 + 1}, 10},
	} {
		ds := &Dataset{X: x, Y: []float64{0, 1, 2}, Alignment: tc.align}
		o, err := ds.Observe(1)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range tc.support {
			if o.Support[i] != w {
				t.Errorf("%v: support of instance %d = %v, want %v", tc.align, i, o.Support[i], w)
			}
		}
		for j, n := range tc.missing {
			if o.Missing[j] != n {
				t.Errorf("%v: feature %d has %d missing cells, want %d", tc.align, j, o.Missing[j], n)
			}
		}
		if o.Cells != tc.cells {
			t.Errorf("%v: %d cells, want %d", tc.align, o.Cells, tc.cells)
		}
		if o.Span[0] != (Window{0, 3}) || o.Span[1] != (Window{0, 3}) {
			t.Errorf("%v: spans %v", tc.align, o.Span)
		}
		if o.Complete() {
			t.Errorf("%v: complete", tc.align)
		}
	}
	full := &Dataset{X: NewTensor(2, 1, 3), Y: []float64{0, 0}}
	o, err := full.Observe(1)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Complete() || o.VariableLength() {
		t.Errorf("zero tensor: complete %v, variable length %v", o.Complete(), o.VariableLength())
	}
	if lo, med, hi := o.LengthQuantiles(); lo != 3 || med != 3 || hi != 3 {
		t.Errorf("length quantiles %d %d %d", lo, med, hi)
	}
}

// TestExplanationDataSummary follows the data summary from the data to the
// JSON: complete data has none, and its explanation's JSON is the golden
// file's, byte for byte; data with missing values has each instance's
// length, each feature's missing rate and each cell's observed share,
// start- and end-aligned, and they survive the round trip.
func TestExplanationDataSummary(t *testing.T) {
	x := observeFixture(t)
	// Observed shares do not depend on the alignment: padding and missing
	// cells alike are not observed.
	observed := []float64{
		2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3,
		1.0 / 3, 1.0 / 3, 2.0 / 3, 1.0 / 3,
	}
	full := NewTensor(3, 2, 4)
	for k := range full.Data {
		full.Data[k] = float64(k % 7)
	}
	for _, tc := range []struct {
		name  string
		x     *Tensor
		align Alignment
		want  *DataSummary // nil: no summary
	}{
		{"complete", full, AlignStart, nil},
		{"complete, end-aligned", full, AlignEnd, nil},
		// Instance 1 ends at t = 1; instance 2's first two steps are
		// missing in both features. 10 cells inside the sequences, 2 of
		// feature 0's and 5 of feature 1's missing.
		{"start-aligned", x, AlignStart, &DataSummary{Lengths: []int{4, 2, 4}, MissingRate: []float64{2.0 / 10, 5.0 / 10}, Observed: observed}},
		// Instance 2 starts at t = 2; instance 1's last two steps are
		// missing.
		{"end-aligned", x, AlignEnd, &DataSummary{Lengths: []int{4, 4, 2}, MissingRate: []float64{2.0 / 10, 5.0 / 10}, Observed: observed}},
	} {
		ds := &Dataset{X: tc.x, Y: []float64{0, 1, 2}, Alignment: tc.align}
		o, err := ds.Observe(1)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := o.Summary()
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: summary %+v, want %+v", tc.name, got, tc.want)
		}
		e := NewExplanation("TIME", ds)
		e.Data = got
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(b, &members); err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"lengths", "missing_rate", "observed"} {
			if _, ok := members[m]; ok != (tc.want != nil) {
				t.Errorf("%s: member %q written: %v", tc.name, m, ok)
			}
		}
		var back Explanation
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Data, tc.want) {
			t.Errorf("%s: decoded summary %+v, want %+v", tc.name, back.Data, tc.want)
		}
		if tc.want == nil {
			continue
		}
		// The JSON spells them as the summary has them: observed as D
		// rows of L, like cells.
		for m, want := range map[string]any{"lengths": tc.want.Lengths, "missing_rate": tc.want.MissingRate,
			"observed": [][]float64{observed[:4], observed[4:]}} {
			w, _ := json.Marshal(want)
			if string(members[m]) != string(w) {
				t.Errorf("%s: %q is %s, want %s", tc.name, m, members[m], w)
			}
		}
	}
	// A complete dataset's explanation is byte for byte what it was
	// before the summary existed: the golden file.
	o, err := (&Dataset{X: full, Y: []float64{0, 1, 2}}).Observe(1)
	if err != nil {
		t.Fatal(err)
	}
	e := sampleExplanation()
	e.Data = o.Summary()
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "explanation.json", append(b, '\n'))
}

func TestObserveErrors(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		data []float64
		want string
	}{
		{"empty instance", []float64{1, 2, nan, nan, nan, nan, nan, nan}, "instance 1 has no observed value"},
		{"feature never observed", []float64{1, 2, nan, nan, 3, 4, nan, nan}, `feature 1 ("b") is never observed`},
		{"inf", []float64{1, 2, 3, math.Inf(1), 5, 6, 7, 8}, `instance 0, feature 1 ("b"), timestep 1 is +Inf`},
	} {
		x, _ := TensorFrom(2, 2, 2, tc.data)
		ds := &Dataset{X: x, Y: []float64{0, 1}, FeatureNames: []string{"a", "b"}}
		if _, err := ds.Observe(1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	x, _ := TensorFrom(1, 1, 2, []float64{nan, 1})
	if err := (&Dataset{X: x, Y: []float64{0}}).Validate(1); err == nil || !strings.Contains(err.Error(), "is NaN (a missing value)") {
		t.Errorf("Validate on missing data: %v", err)
	}
	if _, err := (&Dataset{X: x, Y: []float64{0}, Alignment: 7}).Observe(1); err == nil || !strings.Contains(err.Error(), "invalid alignment") {
		t.Errorf("bad alignment: %v", err)
	}
}

func TestAlignmentText(t *testing.T) {
	for _, a := range []Alignment{AlignStart, AlignEnd} {
		b, err := a.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Alignment
		if err := back.UnmarshalText(b); err != nil || back != a {
			t.Errorf("%v: round trip gave %v, %v", a, back, err)
		}
	}
	if _, err := ParseAlignment("middle"); err == nil {
		t.Error("ParseAlignment accepted middle")
	}
	// The JSON of an explanation names the alignment only when it is "end".
	for _, tc := range []struct {
		a    Alignment
		want bool
	}{{AlignStart, false}, {AlignEnd, true}} {
		e := NewExplanation("X", &Dataset{X: NewTensor(1, 1, 1), Y: []float64{0}, Alignment: tc.a})
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), `"alignment":"end"`); got != tc.want {
			t.Errorf("%v: JSON %s", tc.a, b)
		}
		var back Explanation
		if err := json.Unmarshal(b, &back); err != nil || back.Alignment != tc.a {
			t.Errorf("%v: decoded alignment %v, %v", tc.a, back.Alignment, err)
		}
	}
}

func TestPermuteWithMissing(t *testing.T) {
	nan := math.NaN()
	same := func(a, b []float64) bool {
		for k := range a {
			if a[k] != b[k] && !(a[k] != a[k] && b[k] != b[k]) {
				return false
			}
		}
		return len(a) == len(b)
	}
	// 3 instances × 1 feature × 4 timesteps, start-aligned lengths 4, 2, 3.
	src, _ := TensorFrom(3, 1, 4, []float64{
		1, 2, nan, 4,
		5, 6, nan, nan,
		7, nan, 9, nan,
	})
	support := []Window{{0, 3}, {0, 1}, {0, 2}}
	dst := src.Clone()
	PermuteInstancesWithin(dst, src, []int{0}, 0, 3, []int{1, 2, 0}, support)
	want := []float64{
		5, 6, nan, nan, // instance 1's cells, its padding included, inside support [0, 3]
		7, nan, nan, nan, // instance 2's first two cells; the rest is padding
		1, 2, nan, nan, // instance 0's first three cells; its 4 is dropped
	}
	if !same(dst.Data, want) {
		t.Errorf("PermuteInstancesWithin = %v, want %v", dst.Data, want)
	}
	// A window inside the supports.
	dst = src.Clone()
	PermuteInstancesWithin(dst, src, []int{0}, 1, 2, []int{2, 0, 1}, support)
	want = []float64{1, nan, 9, 4, 5, 2, nan, nan, 7, 6, nan, nan}
	if !same(dst.Data, want) {
		t.Errorf("PermuteInstancesWithin on [1, 2] = %v, want %v", dst.Data, want)
	}

	// Within-window: observed offsets of instance 0 in [0, 3] are 0, 1, 3;
	// order 3, 2, 0, 1 induces 3, 0, 1 on them.
	dst = src.Clone()
	PermuteTimestepsObserved(dst, src, []int{0}, 0, 3, []int{3, 2, 0, 1})
	want = []float64{4, 1, nan, 2, 5, 6, nan, nan, 9, nan, 7, nan}
	if !same(dst.Data, want) {
		t.Errorf("PermuteTimestepsObserved = %v, want %v", dst.Data, want)
	}
	// On complete data both are the dense operations.
	x := NewTensor(4, 2, 5)
	for k := range x.Data {
		x.Data[k] = float64(k)
	}
	full := []Window{{0, 4}, {0, 4}, {0, 4}, {0, 4}}
	a, b := x.Clone(), x.Clone()
	PermuteInstances(a, x, []int{1}, 1, 3, []int{3, 0, 2, 1})
	PermuteInstancesWithin(b, x, []int{1}, 1, 3, []int{3, 0, 2, 1}, full)
	if !same(a.Data, b.Data) {
		t.Error("PermuteInstancesWithin differs from PermuteInstances on complete data")
	}
	a, b = x.Clone(), x.Clone()
	PermuteTimesteps(a, x, []int{0, 1}, 1, 4, []int{2, 0, 3, 1})
	PermuteTimestepsObserved(b, x, []int{0, 1}, 1, 4, []int{2, 0, 3, 1})
	if !same(a.Data, b.Data) {
		t.Error("PermuteTimestepsObserved differs from PermuteTimesteps on complete data")
	}
}

// TestPermuteTimestepsObservedUniform checks that the induced permutation of
// a series' observed positions is uniform when order is: over all 4! orders
// of a window with 3 observed positions, each of the 3! arrangements
// appears 4!/3! = 4 times (exact, so no tolerance).
func TestPermuteTimestepsObservedUniform(t *testing.T) {
	nan := math.NaN()
	src, _ := TensorFrom(1, 1, 4, []float64{1, nan, 2, 3})
	counts := map[[3]float64]int{}
	var perm func(p []int, k int)
	perm = func(p []int, k int) {
		if k == len(p) {
			dst := src.Clone()
			PermuteTimestepsObserved(dst, src, []int{0}, 0, 3, p)
			counts[[3]float64{dst.Data[0], dst.Data[2], dst.Data[3]}]++
			if dst.Data[1] == dst.Data[1] {
				t.Fatalf("order %v filled the missing cell: %v", p, dst.Data)
			}
			return
		}
		for i := k; i < len(p); i++ {
			p[k], p[i] = p[i], p[k]
			perm(p, k+1)
			p[k], p[i] = p[i], p[k]
		}
	}
	perm([]int{0, 1, 2, 3}, 0)
	if len(counts) != 6 {
		t.Fatalf("%d arrangements, want 6: %v", len(counts), counts)
	}
	for a, n := range counts {
		if n != 4 {
			t.Errorf("arrangement %v appears %d times, want 4", a, n)
		}
	}
}

// TestObserveWrongAlignment: data padded at one end read with the other
// alignment is refused, and gaps alone are not mistaken for padding.
func TestObserveWrongAlignment(t *testing.T) {
	nan := math.NaN()
	// Start-aligned sequences of lengths 4, 2, 3 (1 feature).
	startPadded := []float64{1, 2, 3, 4, 5, 6, nan, nan, 7, 8, 9, nan}
	// The same, end-aligned.
	endPadded := []float64{1, 2, 3, 4, nan, nan, 5, 6, nan, 7, 8, 9}
	// Gaps only: every sequence has both ends.
	gappy := []float64{1, nan, 3, 4, 5, 6, nan, 8, 7, nan, nan, 9}
	for _, tc := range []struct {
		name string
		data []float64
		a    Alignment
		want string
	}{
		{"start-padded read as end", startPadded, AlignEnd, "lines up the sequences' starts"},
		{"end-padded read as start", endPadded, AlignStart, "lines up the sequences' ends"},
		{"start-padded read as start", startPadded, AlignStart, ""},
		{"end-padded read as end", endPadded, AlignEnd, ""},
		{"gaps read as start", gappy, AlignStart, ""},
		{"gaps read as end", gappy, AlignEnd, ""},
	} {
		x, _ := TensorFrom(3, 1, 4, tc.data)
		_, err := (&Dataset{X: x, Y: []float64{0, 1, 2}, Alignment: tc.a}).Observe(1)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
