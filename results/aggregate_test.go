package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
)

// tol is the tolerance for comparing statistics computed two ways: both are
// sums of a handful of doubles, so they agree to a few ulps.
const tol = 1e-12

func close(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

func TestSummarize(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		xs                       []float64
		mean, sd, median, lo, hi float64
		min, max                 float64
	}{
		{xs: nil, mean: nan, sd: nan, median: nan, lo: nan, hi: nan, min: nan, max: nan},
		{xs: []float64{0.7}, mean: 0.7, sd: nan, median: 0.7, lo: nan, hi: nan, min: 0.7, max: 0.7},
		// Hand-computed: mean 2.5, variance (2.25+0.25+0.25+2.25)/3 = 5/3,
		// half-width 1.96·√(5/3)/2.
		{xs: []float64{4, 1, 3, 2}, mean: 2.5, sd: math.Sqrt(5.0 / 3), median: 2.5,
			lo: 2.5 - 1.96*math.Sqrt(5.0/3)/2, hi: 2.5 + 1.96*math.Sqrt(5.0/3)/2, min: 1, max: 4},
		{xs: []float64{5, 1, 3}, mean: 3, sd: 2, median: 3, lo: 3 - 1.96*2/math.Sqrt(3), hi: 3 + 1.96*2/math.Sqrt(3), min: 1, max: 5},
	} {
		in := slices.Clone(tc.xs)
		s := Summarize(tc.xs)
		lo, hi := s.CI95()
		if s.N != len(tc.xs) || !close(s.Mean, tc.mean) || !close(s.SD, tc.sd) || !close(s.Median, tc.median) ||
			!close(lo, tc.lo) || !close(hi, tc.hi) || !close(s.Min, tc.min) || !close(s.Max, tc.max) {
			t.Errorf("Summarize(%v) = %+v, CI [%v, %v]; want mean %v sd %v median %v CI [%v, %v]",
				tc.xs, s, lo, hi, tc.mean, tc.sd, tc.median, tc.lo, tc.hi)
		}
		if !slices.Equal(in, tc.xs) {
			t.Errorf("Summarize modified its input: %v", tc.xs)
		}
	}
}

// TestSummarizeMatchesGonum checks mean and sample SD against gonum's
// stat.MeanStdDev (also divisor n−1) on random samples, including values far
// from zero.
func TestSummarizeMatchesGonum(t *testing.T) {
	rng := tempora.NewRand(1, "summarize")
	for trial := range 20 {
		xs := make([]float64, 2+rng.IntN(50))
		offset := float64(trial) * 1e4
		for i := range xs {
			xs[i] = offset + rng.NormFloat64()
		}
		s := Summarize(xs)
		mean, sd := stat.MeanStdDev(xs, nil)
		// Sums of up to 52 values near 2e5: relative agreement 1e-9 is
		// far above rounding error and far below any real discrepancy.
		if math.Abs(s.Mean-mean) > 1e-9*math.Abs(mean)+1e-12 || math.Abs(s.SD-sd) > 1e-9*sd {
			t.Errorf("trial %d: Summarize mean %v sd %v, gonum %v %v", trial, s.Mean, s.SD, mean, sd)
		}
	}
}

// TestCI95Coverage checks the normal 95% interval statistically: over many
// samples of n = 100 standard normal values, the interval covers the true
// mean about 95% of the time.
func TestCI95Coverage(t *testing.T) {
	rng := tempora.NewRand(2, "coverage")
	const trials, n = 2000, 100
	covered := 0
	xs := make([]float64, n)
	for range trials {
		for i := range xs {
			xs[i] = 3 + rng.NormFloat64()
		}
		lo, hi := Summarize(xs).CI95()
		if lo <= 3 && 3 <= hi {
			covered++
		}
	}
	// The z interval with an estimated SD covers slightly under 95% at
	// n = 100 (the t quantile is 1.984); the binomial SD of the coverage
	// over 2000 trials is 0.005, so [0.925, 0.97] is a ±4 SD band around
	// 0.947.
	if frac := float64(covered) / trials; frac < 0.925 || frac > 0.97 {
		t.Errorf("95%% CI covered the mean in %.3f of trials", frac)
	}
}

func groupKeys(groups []Group) []string {
	var out []string
	for _, g := range groups {
		out = append(out, fmt.Sprintf("%s/%s/%s", g.Suite, g.Setting(), g.Method))
	}
	return out
}

func TestAggregate(t *testing.T) {
	recs := testRecords()
	groups, err := Aggregate(recs)
	if err != nil {
		t.Fatal(err)
	}
	keys := groupKeys(groups)
	// Numeric order of parameter values (100 < 200 < 400 < 800) and the
	// paper's method order, not lexical order.
	want := []string{
		"grid/noise=0.5,permutations=10/TIME", "grid/noise=0.5,permutations=10/PERM",
		"grid/noise=0.5,permutations=50/TIME", "grid/noise=0.5,permutations=50/PERM",
		"grid/noise=1,permutations=10/TIME", "grid/noise=1,permutations=10/PERM",
		"grid/noise=1,permutations=50/TIME", "grid/noise=1,permutations=50/PERM",
	}
	for _, m := range MethodOrder[:7] {
		want = append(want, "table-s2//"+m)
	}
	for _, m := range MethodOrder {
		want = append(want, "table1//"+m)
	}
	// A method the paper never ran comes after the paper's.
	want = append(want, "table1//"+newMethod)
	for _, n := range []string{"100", "200", "400", "800"} {
		want = append(want, "testsize-regression/instances="+n+"/TIME", "testsize-regression/instances="+n+"/"+newMethod)
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("groups\n%s\nwant\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}

	// The SAGE group of table1 excludes model 3 (incomplete).
	sage := findMethod(selectGroups(groups, "table1", nil), "SAGE")
	if !slices.Equal(sage.Models, []int{0, 1, 2}) || !slices.Equal(sage.Incomplete, []int{3}) || sage.Warned != 0 {
		t.Errorf("SAGE models %v incomplete %v warned %d, want [0 1 2] [3] 0", sage.Models, sage.Incomplete, sage.Warned)
	}
	// Its statistics are those of models 0..2 only.
	var fp, rt []float64
	for _, r := range recs {
		if r.Suite == "table1" && r.Method == "SAGE" && !r.Incomplete {
			v, _ := r.Get("feature-power")
			fp = append(fp, v)
			rt = append(rt, r.RuntimeSeconds)
		}
	}
	got, ok := sage.Metric("feature-power")
	if want := Summarize(fp); !ok || got.N != 3 || !close(got.Mean, want.Mean) || !close(got.SD, want.SD) {
		t.Errorf("SAGE feature-power %+v, want %+v", got, want)
	}
	if want := Summarize(rt); !close(sage.Runtime.Median, want.Median) {
		t.Errorf("SAGE median runtime %v, want %v", sage.Runtime.Median, want.Median)
	}
	// TIME carries the ordering metrics in the writer's order.
	tm := findMethod(selectGroups(groups, "table1", nil), "TIME")
	var names []string
	for _, m := range tm.Metrics {
		names = append(names, m.Name)
	}
	var wantNames []string
	for _, m := range testRecord("table1", nil, 0, "TIME").Metrics {
		wantNames = append(wantNames, m.Name)
	}
	if !slices.Equal(names, wantNames) || len(names) != 14 {
		t.Errorf("TIME metrics %v, want %v", names, wantNames)
	}
}

// TestAggregateOrderIndependent checks that the output does not depend on
// the order of the input records.
func TestAggregateOrderIndependent(t *testing.T) {
	recs := testRecords()
	want, err := Aggregate(recs)
	if err != nil {
		t.Fatal(err)
	}
	rng := tempora.NewRand(3, "shuffle")
	for range 5 {
		shuffled := slices.Clone(recs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got, err := Aggregate(shuffled)
		if err != nil {
			t.Fatal(err)
		}
		// %v prints NaN as NaN, so equal dumps mean equal groups.
		if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
			t.Fatalf("aggregate depends on input order:\n%s\nvs\n%s", g, w)
		}
	}
}

func TestAggregateErrors(t *testing.T) {
	r := testRecord("table1", nil, 0, "TIME")
	for _, tc := range []struct {
		name string
		recs []*record.Record
		want string
	}{
		{"duplicate", []*record.Record{r, testRecord("table1", nil, 0, "TIME")}, "duplicate record table1/model=0/method=TIME"},
		{"nil", []*record.Record{r, nil}, "record 1 is nil"},
		{"other problems", []*record.Record{r, func() *record.Record {
			o := testRecord("table1", nil, 0, "SAGE")
			o.Seed++
			return o
		}()}, "were made on different problems (seeds"},
	} {
		_, err := Aggregate(tc.recs)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "results: ") {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	groups, err := Aggregate(nil)
	if err != nil || len(groups) != 0 {
		t.Errorf("Aggregate(nil) = %v, %v; want no groups, no error", groups, err)
	}
}

func TestAllIncomplete(t *testing.T) {
	r := testRecord("table1", nil, 0, "SAGE")
	r.Incomplete = true
	groups, err := Aggregate([]*record.Record{r})
	if err != nil {
		t.Fatal(err)
	}
	g := groups[0]
	if len(g.Models) != 0 || len(g.Incomplete) != 1 || len(g.Metrics) != 0 || g.Runtime.N != 0 {
		t.Errorf("all-incomplete group %+v", g)
	}
}
