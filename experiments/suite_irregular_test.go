package experiments

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

// TestIrregularSuiteSettings checks the sweep: every missing rate × length
// spread × alignment, each on its own problems, Table 1's shape, MCAR.
func TestIrregularSuiteSettings(t *testing.T) {
	ss, err := irregularSuite.Settings(true, "")
	if err != nil {
		t.Fatal(err)
	}
	sweep := len(irregularRates) * len(irregularSpreads) * len(irregularAlignments)
	if want := sweep + 2*len(irregularAlignments); len(ss) != want {
		t.Fatalf("%d settings, want %d", len(ss), want)
	}
	keys := map[string]int{}
	for i, s := range ss {
		keys[s.problemKey]++
		// The sweep's problems are its own; the padding comparison's come
		// in pairs (nan, zeros) on the same problems.
		if pad, _ := paramValue(s.Params, "padding"); i < sweep && (keys[s.problemKey] != 1 || pad != "nan") ||
			i >= sweep && pad != []string{"nan", "zeros"}[(i-sweep)%2] {
			t.Errorf("%s: problem key %q used %d times", s.Key(), s.problemKey, keys[s.problemKey])
		}
		cfg, err := synthConfig(s.Problem)
		if err != nil {
			t.Fatal(err)
		}
		ir := cfg.Irregular
		if ir == nil || cfg.Instances != 1000 || cfg.Features != 10 || cfg.Timesteps != 20 || !s.Refusals {
			t.Fatalf("%s: config %+v", s.Key(), cfg)
		}
		rate, _ := paramValue(s.Params, "missing-rate")
		align, _ := paramValue(s.Params, "alignment")
		if strconv.FormatFloat(ir.MissingRate, 'g', -1, 64) != rate || ir.Alignment.String() != align || ir.Mechanism.String() != "mcar" {
			t.Errorf("%s: irregular config %+v", s.Key(), ir)
		}
	}
}

func paramValue(ps []record.Param, key string) (string, bool) {
	for _, p := range ps {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// TestIrregularSuiteRun runs the suite at a tiny scale (250 × 4 × 10
// problems, one model) with TIME and the baselines OCC (which takes
// missing values) and LIME (which refuses them): every
// record is either scored or a refusal with the method's message, never a
// silent zero row; on complete data (rate 0, spread 1) and zero-padded
// data nothing is refused.
func TestIrregularSuiteRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 36 explanations")
	}
	out := t.TempDir()
	small := func(ctx context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
		spec.Instances, spec.Features, spec.Timesteps = 250, 4, 10
		return synthesise(ctx, spec, seed)
	}
	o := Options{Suite: "irregular", Quick: true, Models: 1, Methods: []string{"TIME", "OCC", "LIME"}, Out: out, source: small}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := 16 * 3; len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	refusals := 0
	for _, r := range recs {
		msg, ok := r.Refusal()
		complete := r.Params[0].Value == "0" && r.Params[1].Value == "1" || r.Params[4].Value == "zeros"
		switch {
		case ok && complete:
			t.Errorf("%s refused complete data: %s", r.Key(), msg)
		case ok:
			refusals++
			if r.Method != "LIME" {
				t.Errorf("%s refused: %s", r.Key(), msg)
			}
			if len(r.Metrics) != 0 || !strings.Contains(msg, "NaN") && !strings.Contains(msg, "missing") {
				t.Errorf("%s: refusal %q with %d metrics", r.Key(), msg, len(r.Metrics))
			}
		case len(r.Metrics) == 0 || r.Incomplete:
			t.Errorf("%s: neither scored nor refused", r.Key())
		}
	}
	// LIME on the 12 settings with missing values (the sweep's 10 and
	// the padding comparison's 2 with NaN padding).
	if refusals != 12 {
		t.Errorf("%d refusals, want LIME's 12", refusals)
	}
}

// TestZeroPadding checks the padding comparison's premise: the zero-padded
// data with the masking model gives the predictions of the NaN data with
// the model over observed values, and the truth is the same.
func TestZeroPadding(t *testing.T) {
	ss, err := irregularSuite.Settings(true, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if pad, _ := paramValue(s.Params, "padding"); pad != "zeros" {
			continue
		}
		spec := s.Problem
		spec.Instances = 300
		prob, err := synthesise(context.Background(), spec, 9)
		if err != nil {
			t.Fatal(err)
		}
		z, err := s.view.apply(prob)
		if err != nil {
			t.Fatal(err)
		}
		if z.Truth != prob.Truth || hasMissing(z.Data.X) || !hasMissing(prob.Data.X) {
			t.Fatalf("%s: zero padding kept NaN or changed the truth", s.Key())
		}
		a, b := make([]float64, 300), make([]float64, 300)
		if err := prob.Model.Predict(a, prob.Data.X); err != nil {
			t.Fatal(err)
		}
		if err := z.Model.Predict(b, z.Data.X); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%s: the masking model on zero-padded data differs from the model on NaN data", s.Key())
		}
	}
}

// TestIrregularGridAxes checks the grid's irregular axes: their values
// reach synth.Irregular, and bad values get a one-line error naming the
// axis.
func TestIrregularGridAxes(t *testing.T) {
	ss, err := gridSettings(true, "missing-rate=0.3;length-spread=1.5;alignment=end;missing-mechanism=mnar")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := synthConfig(ss[0].Problem)
	if err != nil {
		t.Fatal(err)
	}
	if ir := cfg.Irregular; ir == nil || ir.MissingRate != 0.3 || ir.LengthSpread != 1.5 || ir.Alignment.String() != "end" || ir.Mechanism.String() != "mnar" {
		t.Fatalf("irregular config %+v", cfg.Irregular)
	}
	if ss[0].problemKey == "" {
		t.Error("the irregular axes are not problem parameters")
	}
	for _, bad := range []string{"missing-rate=1", "missing-rate=x", "length-spread=0.5", "length-spread=Inf", "alignment=middle", "missing-mechanism=mar"} {
		name, _, _ := strings.Cut(bad, "=")
		if _, err := parseGrid(bad); err == nil || !strings.Contains(err.Error(), "grid "+name+"=") {
			t.Errorf("%s: error %v", bad, err)
		}
	}
	// Without irregular axes the grid's problems stay complete.
	ss, err = gridSettings(true, "noise=0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := synthConfig(ss[0].Problem); err != nil || cfg.Irregular != nil {
		t.Errorf("complete grid: %+v, %v", cfg.Irregular, err)
	}
}

// TestIrregularWriteProblems checks that the irregular suite's problems
// are not written: its zero-padded settings' model has no saved form.
func TestIrregularWriteProblems(t *testing.T) {
	_, err := WriteProblems(context.Background(), Options{Suite: "irregular", Quick: true, Out: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "pads with zeros") {
		t.Errorf("error %v", err)
	}
}

// TestIrregularRefusalIsIncompleteError checks that only a refusal of the
// missing values (method.IncompleteError) becomes a refused record: a
// method failing on them with any other error stops the run, naming the
// item, so a bug is never recorded as a refusal.
func TestIrregularRefusalIsIncompleteError(t *testing.T) {
	small := func(ctx context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
		spec.Instances, spec.Features, spec.Timesteps = 40, 3, 6
		return synthesise(ctx, spec, seed)
	}
	fail := func(refuse bool) method.Method {
		return method.Method{Name: "FAIL", Local: true, New: func(c method.Config) (tempora.Explainer, error) {
			if err := method.RequireComplete("FAIL", c.Data, 1, "it is a test"); err != nil {
				if refuse {
					return nil, err
				}
				return nil, errors.New("FAIL: broken on NaN")
			}
			return baselines.Occlusion{}, nil
		}}
	}
	for _, refuse := range []bool{true, false} {
		out := t.TempDir()
		err := Run(context.Background(), Options{Suite: "irregular", Quick: true, Models: 1, Methods: []string{"FAIL"},
			Extra: []method.Method{fail(refuse)}, Out: out, source: small})
		switch {
		case refuse && err != nil:
			t.Fatalf("a refusal stopped the run: %v", err)
		case !refuse && (err == nil || !strings.Contains(err.Error(), "broken on NaN") || !strings.Contains(err.Error(), "method=FAIL")):
			t.Fatalf("a failure on missing values: error %v, want the run stopped naming the item", err)
		case refuse:
			recs, err := ReadRecords(out)
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, r := range recs {
				if msg, ok := r.Refusal(); ok && strings.Contains(msg, "it is a test") {
					refused++
				}
			}
			if refused != 12 {
				t.Errorf("%d refused records, want 12 (the settings with missing values)", refused)
			}
		}
	}
}
