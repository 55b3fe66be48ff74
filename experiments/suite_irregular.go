package experiments

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/record/report"
	"github.com/tempora-dev/tempora/resident"
	"github.com/tempora-dev/tempora/synth"
)

// The irregular suite (issue 18): the Table 1 world made irregular by
// synth.Irregular, sequences of different lengths padded with NaN and
// cells missing completely at random, with a model that aggregates over
// observed values only, swept over the missing rate, the length spread and
// the alignment. A setting's parameters are
//
//	missing-rate=0|0.2|0.5 / length-spread=1|2 / alignment=start|end /
//	full-windows=false / padding=nan
//
// (missing-rate=0, length-spread=1 is complete data, the reference row),
// each on its own problems, then the padding comparison (irregularSettings):
// full-windows=true with padding=nan and padding=zeros on the same
// problems. A method that refuses data with missing values
// (method.IncompleteError) gets a refused record (record.RefusedWarning) with its message, which the report shows
// as refused: never a row of zeros, never dropped.

// irregularMethods are the suite's default methods: TIME and the
// baselines cheap enough for 1000 instances (PERM took 48 s per problem
// there); LIME refuses missing values.
var irregularMethods = []string{"TIME", "TIME-n", "OCC", "SAGE-m", "LIME"}

var (
	irregularRates      = []string{"0", "0.2", "0.5"}
	irregularSpreads    = []string{"1", "2"}
	irregularAlignments = []string{"start", "end"}
)

var irregularSuite = &Suite{
	Name: "irregular", Doc: "irregular data: sequences of different lengths (spread 1 or 2, start- or end-aligned) with 0, 20% or 50% of cells missing at random, Table 1 problems (1000×10×20, 5 relevant, classification) with a model over observed values; and the same data padded with zeros",
	Models: 20, QuickModels: 3, Methods: irregularMethods,
	// Quick: 71 s of CPU and 42 s of wall time measured for the
	// committed report (results/reference/irregular/quick) on two
	// cores; paper scale has about seven times the models, and LIME
	// explains every instance there.
	Time: "about 30 min (estimated)", QuickTime: "about 50 s",
	Report:   irregularReport(),
	settings: irregularSettings,
}

// irregularReport draws TIME's power and FDR against the missing rate,
// one line per length spread and alignment (padding=nan,
// full-windows=false), and TIME's metrics on the problems of the padding
// comparison with NaN padding and with zeros, one panel per alignment.
func irregularReport() report.Suite {
	nan := []record.Param{{Key: "padding", Value: "nan"}}
	var panels []report.Panel
	for _, a := range irregularAlignments {
		panels = append(panels, report.Panel{Title: "alignment " + a, Where: []record.Param{{Key: "alignment", Value: a}}})
	}
	return report.Suite{
		Sweeps: []report.Sweep{{
			Name: "irregular-time", Heading: "irregular: TIME's power and FDR versus the missing rate", Alt: "irregular-time",
			Title: "irregular: TIME's power and FDR versus the missing rate (MCAR), by length spread and alignment",
			X:     "missing-rate", Where: append(nan, record.Param{Key: "full-windows", Value: "false"}),
			Lines: []report.Line{{Label: "spread {length-spread}, {alignment}", Method: "TIME"}},
			Columns: []report.Column{
				{Title: "features", Power: "feature-power", FDR: "feature-fdr"},
				{Title: "timesteps", Power: "timestep-power", FDR: "timestep-fdr"},
				{Title: "windows (average window)", Power: "avg-window-power", FDR: "avg-window-fdr"},
				{Title: "feature ordering", Power: "ordering-power", FDR: "ordering-fdr"},
			},
		}},
		Bars: []report.Bars{{
			Name: "padding-time", Heading: "irregular: TIME on the same problems padded with NaN and with zeros", Alt: "padding-time",
			Title:  "irregular: TIME on the same problems, padded with NaN and with zeros",
			Where:  []record.Param{{Key: "full-windows", Value: "true"}},
			Panels: panels,
			Bars: []report.Line{
				{Label: "NaN padding (the data as it is)", Method: "TIME", Where: nan},
				{Label: "zero padding, all-zero timesteps masked", Method: "TIME", Where: []record.Param{{Key: "padding", Value: "zeros"}}},
			},
			// The FDRs that padding with zeros inflates, then the powers.
			Metrics: []report.Metric{
				{Name: "feature-fdr", Label: "feature FDR"}, {Name: "timestep-fdr", Label: "timestep FDR"},
				{Name: "ordering-fdr", Label: "ordering FDR"}, {Name: "window-ordering-fdr", Label: "window-ordering FDR"},
				{Name: "feature-power", Label: "feature power"}, {Name: "timestep-power", Label: "timestep power"},
			},
		}},
	}
}

// irregularSettings returns the sweep, then the padding comparison: at
// length spread 2 without missing cells, windows over the whole time axis
// (so that they reach where short sequences are padded), the data with
// NaN padding and the same data padded with zeros (padding=zeros: a model
// that masks every all-zero timestep, as a masking layer with mask value 0
// does, then reads the observed values).
func irregularSettings(quick bool, _ string) ([]Setting, error) {
	base := Setting{Problem: table1Problem, Quick: quick, Refusals: true}
	base.Problem.Mechanism = "mcar"
	if quick {
		// LIME's cost is per explained instance: at quick scale it
		// explains the first 200, as in the table1 suite's quick
		// scale, so that the suite runs in about a minute.
		base.MethodDefaults = []record.Param{{Key: "instances-explained", Value: strconv.Itoa(quickTableInstances)}}
	}
	ss, err := sweep(base, irregularAxes(irregularRates, irregularSpreads, "false", "nan"))
	if err != nil {
		return nil, err
	}
	// Both paddings analyse the same problems.
	pad, err := sweep(base, irregularAxes([]string{"0"}, []string{"2"}, "true", "nan", "zeros"))
	return append(ss, pad...), err
}

// irregularAxes are the suite's axes: the irregular world's missing rate,
// length spread, alignment and full windows (the grid's axes of
// synth.Generate's world, and synth.Irregular's FullWindows), and the
// padding (a view).
func irregularAxes(rates, spreads []string, full string, paddings ...string) []axis {
	return []axis{
		paramAxis("missing-rate", rates...), paramAxis("length-spread", spreads...), paramAxis("alignment", irregularAlignments...),
		{name: "full-windows", values: []string{full}, problem: true, set: func(s *Setting, v string) (err error) {
			s.Problem.FullWindows, err = strconv.ParseBool(v)
			return err
		}},
		viewAxis("padding", paddings, func(v string) (view, error) {
			switch v {
			case "nan":
				return nil, nil
			case "zeros":
				return zeroPadding{}, nil
			}
			return nil, fmt.Errorf("experiments: unknown padding %q (want nan or zeros)", v)
		}),
	}
}

// zeroPadding is the view that presents a problem padded with zeros: its
// data with every missing cell written as 0 and the model zeroMask, scored
// against the problem's truth (setting padding=zeros).
type zeroPadding struct{}

func (zeroPadding) apply(prob *Problem) (*Problem, error) {
	d := *prob.Data
	d.X = prob.Data.X.Clone()
	for k, v := range d.X.Data {
		if v != v {
			d.X.Data[k] = 0
		}
	}
	q := *prob
	q.Data, q.Model = &d, zeroMask{prob.Model}
	return &q, nil
}

func (zeroPadding) unsaved() string { return "pads with zeros for a model that has no saved form" }

// zeroMask is the model a user pads with zeros for: every timestep whose
// features are all 0 is masked (read as missing, NaN) before the model
// over observed values sees it. On the zero-padded data of a problem it is
// that problem's model, unless some observed timestep is all zeros.
type zeroMask struct{ inner tempora.Model }

func (z zeroMask) Predict(dst []float64, x *tempora.Tensor) error {
	y := x.Clone()
	nan := math.NaN()
	for i := range y.M {
		for t := range y.L {
			zero := true
			for j := 0; j < y.D && zero; j++ {
				zero = y.At(i, j, t) == 0
			}
			if zero {
				for j := range y.D {
					y.Set(i, j, t, nan)
				}
			}
		}
	}
	return z.inner.Predict(dst, y)
}

// irregularOf returns the synth.Irregular of spec, nil when spec sets none
// of its fields.
func irregularOf(spec ProblemSpec) (*synth.Irregular, error) {
	if spec.MissingRate == 0 && spec.LengthSpread == 0 && spec.Alignment == "" && spec.Mechanism == "" && !spec.FullWindows {
		return nil, nil
	}
	ir := &synth.Irregular{LengthSpread: spec.LengthSpread, MissingRate: spec.MissingRate, FullWindows: spec.FullWindows}
	if spec.Alignment != "" {
		a, err := tempora.ParseAlignment(spec.Alignment)
		if err != nil {
			return nil, err
		}
		ir.Alignment = a
	}
	if spec.Mechanism != "" {
		m, err := synth.ParseMechanism(spec.Mechanism)
		if err != nil {
			return nil, err
		}
		ir.Mechanism = m
	}
	return ir, nil
}

// refused returns the records of the outputs of a run whose method
// refused the problem with err.
func refused(outputs []*method.Method, err error) []*record.Record {
	var recs []*record.Record
	for _, m := range outputs {
		recs = append(recs, &record.Record{
			Format: record.Format, Method: m.Name, Metrics: []record.Metric{},
			Incomplete: true, Warnings: []string{record.RefusedWarning + err.Error()},
		})
	}
	return recs
}

// explainOrRefuse runs the explainer of an item as runItem does. In a
// setting that records refusals, a method that refuses the data's missing
// values (method.IncompleteError, method.RequireComplete's refusal, from
// making the explainer or from explaining) gets refused records instead
// of stopping the run; any other error stops it.
func explainOrRefuse(ctx context.Context, it *Item, prob *Problem, workers int) (tempora.Explainer, *tempora.Explanation, *tempora.Tensor, []*record.Record, error) {
	src := it.run.source
	vals, err := it.Setting.values(src)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	refusal := func(err error) bool {
		var inc *method.IncompleteError
		return it.Setting.Refusals && errors.As(err, &inc)
	}
	ex, err := src.Explainer(method.Config{Seed: it.ExplainerSeed, Workers: workers, Data: prob.Data, Values: vals})
	if err != nil {
		if refusal(err) {
			return nil, nil, nil, refused(it.run.outputs, err), nil
		}
		return nil, nil, nil, nil, err
	}
	var held resident.Model
	if it.Setting.Held && prob.held != nil {
		held = prob.held() // one per run: a capability holds one tensor at a time
	}
	e, local, err := attribute(ctx, ex, prob.Model, held, prob.Data)
	if err != nil && ctx.Err() == nil && refusal(err) {
		return nil, nil, nil, refused(it.run.outputs, err), nil
	}
	return ex, e, local, nil, err
}

// hasMissing reports whether x holds a missing value (NaN).
func hasMissing(x *tempora.Tensor) bool {
	for _, v := range x.Data {
		if v != v {
			return true
		}
	}
	return false
}
