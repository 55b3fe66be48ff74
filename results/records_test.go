package results

import (
	"math"
	"slices"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/record/report"
)

// Hand-made records for the tests: deterministic values from a seeded
// stream, shaped like those package experiments writes.

const (
	testD = 4 // features of the hand-made explanations
	testL = 6 // timesteps
)

// round3 keeps test values short in golden files.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// testTruth: features 0 and 2 are relevant with windows [1, 3] and [2, 5];
// feature 2's window ordering matters.
func testTruth() *record.Truth {
	return &record.Truth{
		Relevant:                []bool{true, false, true, false},
		Windows:                 []tempora.Window{{Start: 1, End: 3}, {}, {Start: 2, End: 5}, {}},
		EffectSize:              []float64{0.8, 0, 0.5, 0},
		OrderingImportant:       []bool{false, false, true, false},
		WindowOrderingImportant: []bool{false, false, true, false},
	}
}

// testExplanation returns an explanation of method whose cells are large in
// the truth's windows and small (or zero) elsewhere.
func testExplanation(method string, model int) *tempora.Explanation {
	rng := tempora.NewRand(7, "explanation", method, strconv.Itoa(model))
	e := &tempora.Explanation{Method: method, D: testD, L: testL, Cells: make([]float64, testD*testL)}
	tr := testTruth()
	for j := range testD {
		f := tempora.NewFeatureResult(j, "x"+strconv.Itoa(j))
		if method == "TIME" {
			if tr.Relevant[j] {
				w := tr.Windows[j]
				f.Important, f.Window, f.WindowSignificant = true, &w, true
				f.WindowOrderingImportant = tr.WindowOrderingImportant[j]
				for t := w.Start; t <= w.End; t++ {
					e.Cells[j*testL+t] = tr.EffectSize[j]
				}
			}
		} else {
			for t := range testL {
				v := 0.05 * rng.Float64()
				if tr.Relevant[j] && tr.Windows[j].Contains(t) {
					v += tr.EffectSize[j] * (0.5 + rng.Float64())
				}
				if rng.IntN(4) == 0 {
					v = -v // baselines may score negatively; heat maps use |score|
				}
				e.Cells[j*testL+t] = round3(v)
			}
		}
		e.Features = append(e.Features, f)
	}
	return e
}

// methodLevel is each method's typical power in the hand-made records;
// occlusion is a method the paper never ran.
var methodLevel = map[string]float64{
	"TIME": 0.93, "TIME-n": 0.92, "LIME": 0.71, "SAGE": 0.8, "SAGE-m": 0.76, "SAGE-z": 0.66, "PERM": 0.84, "PERM-f": 0.33,
	"occlusion": 0.75,
}

// testDecls declares the paper tables of the hand-made records' suites,
// as package experiments declares them for its suites of those names.
var testDecls = map[string]report.Suite{
	"table1":   {PaperTables: []string{"table1", "table-s1"}},
	"table-s2": {PaperTables: []string{"table-s2"}},
}

// newMethod is the method of the hand-made records that the paper never
// ran.
const newMethod = "occlusion"

// testRecord returns one record with the metrics experiments writes.
func testRecord(suite string, params []record.Param, model int, method string) *record.Record {
	key := []string{suite, method, strconv.Itoa(model)}
	for _, p := range params {
		key = append(key, p.Key, p.Value)
	}
	rng := tempora.NewRand(11, key...)
	level := methodLevel[method]
	if v, ok := paramFloat(params, "instances"); ok {
		level = 1 - 0.5*100/v // power rises with the test-set size
	}
	noisy := func(center float64) float64 {
		return round3(math.Min(1, math.Max(0, center+0.1*(rng.Float64()-0.5))))
	}
	r := &record.Record{
		Format: record.Format, Suite: suite, Params: params, Model: model, Seed: uint64(100000 + model), Method: method,
		RuntimeSeconds: round3(float64(len(method)) * (1 + rng.Float64())),
		ModelCalls:     int64(1000 + rng.IntN(100)), InstanceEvals: int64(100000 + rng.IntN(1000)),
	}
	p, f := noisy(level), noisy(1-level)
	add := func(name string, v float64) { r.Metrics = append(r.Metrics, record.Metric{Name: name, Value: v}) }
	add("feature-power", p)
	add("feature-fdr", f)
	add("timestep-power", noisy(level-0.01))
	add("timestep-fdr", noisy(1-level+0.01))
	add("feature-power-all", noisy(level))
	add("feature-fdr-all", noisy(1-level))
	add("timestep-power-all", noisy(level))
	add("timestep-fdr-all", noisy(1-level))
	if method == "TIME" || method == "TIME-n" {
		add("ordering-power", noisy(level-0.1))
		add("ordering-fdr", noisy(0.05))
		add("window-ordering-power", noisy(level-0.3))
		add("window-ordering-fdr", noisy(0.05))
		add("avg-window-power", noisy(level-0.05))
		add("avg-window-fdr", noisy(0.06))
	}
	return r
}

func paramFloat(ps []record.Param, key string) (float64, bool) {
	for _, p := range ps {
		if p.Key == key {
			v, err := strconv.ParseFloat(p.Value, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// testRecords returns records of suites table1 (4 models, every method of
// the paper and occlusion, SAGE incomplete on model 3, explanations for
// TIME, SAGE and occlusion), table-s2 (3 models, PERM-f missing),
// testsize-regression (TIME and occlusion at four test-set sizes, 3 models
// each; model 1 has explanations at sizes 100 and 800) and grid (two swept
// parameters).
func testRecords() []*record.Record {
	var recs []*record.Record
	for model := range 4 {
		for _, m := range append(slices.Clone(MethodOrder), newMethod) {
			r := testRecord("table1", nil, model, m)
			if m == "SAGE" && model == 3 {
				r.Incomplete = true
				r.Warnings = []string{"SAGE did not converge within budget"}
			}
			if m == "TIME" || m == "TIME-n" {
				r.Truth = testTruth()
				r.Explanation = testExplanation("TIME", model)
			}
			if m == "SAGE" || m == newMethod {
				r.Explanation = testExplanation(m, model)
			}
			recs = append(recs, r)
		}
	}
	for model := range 3 {
		for _, m := range MethodOrder[:7] {
			recs = append(recs, testRecord("table-s2", nil, model, m))
		}
	}
	for _, n := range []string{"100", "200", "400", "800"} {
		for model := range 3 {
			r := testRecord("testsize-regression", []record.Param{{Key: "instances", Value: n}}, model, "TIME")
			if model == 1 && (n == "100" || n == "800") {
				// Only the last setting of a sweep gets a heat map.
				r.Truth, r.Explanation = testTruth(), testExplanation("TIME", model)
			}
			recs = append(recs, r, testRecord("testsize-regression", []record.Param{{Key: "instances", Value: n}}, model, newMethod))
		}
	}
	for _, noise := range []string{"0.5", "1"} {
		for _, perms := range []string{"10", "50"} {
			ps := []record.Param{{Key: "noise", Value: noise}, {Key: "permutations", Value: perms}}
			for model := range 2 {
				recs = append(recs, testRecord("grid", ps, model, "TIME"), testRecord("grid", ps, model, "PERM"))
			}
		}
	}
	record.Sort(recs)
	return recs
}
