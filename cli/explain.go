package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/procmodel"
	"github.com/tempora-dev/tempora/resident"
)

const explainHelp = `
Explain explains a model with a method (-method, TIME by default) and prints its
features by importance: scores, with TIME's tests (raw and Benjamini–Hochberg-adjusted
p-values, windows, orderings) or else peak timesteps. The model and data come from
a synthetic problem (-problem DIR from "tempora synth", then compared with its
ground truth) or from data files and a model program (protocol: docs/protocol.md):

	tempora explain -data X.npy -targets y.npy -task classification -model-cmd "python3 serve_model.py --weights 'my model.pt'"

A missing value is NaN or marked by -mask ("tempora describe -h" says more). A
model of several outputs per instance (-outputs: classes:K, targets labels 0 to
K−1; horizons or steps, targets M × K, NaN: none) is explained as a whole, then
output by output. Results do not depend on -workers, -model-procs or -max-batch.`

// explainUsage prints the help of "tempora explain": the description, the
// methods one line each, and the flags that are not method parameters
// (those are listed by "tempora methods NAME").
func (p *program) explainUsage(w io.Writer) {
	writeUsageHead(w, "explain", explainHelp+"\n\n"+p.methodList())
	fmt.Fprintln(w, "\nFlags (and the parameters of the chosen method):")
	printFlags(w, explainOwnFlags(p.table.Names()))
}

// paramFlag holds the text of a method-parameter flag; it is parsed by the
// chosen method's parameter once -method is known.
type paramFlag struct {
	isBool bool
	text   string
}

func (f *paramFlag) String() string     { return f.text }
func (f *paramFlag) Set(s string) error { f.text = s; return nil }
func (f *paramFlag) IsBoolFlag() bool   { return f.isBool }

// realDataFlags are the flags of the -data mode.
var realDataFlags = append(append([]string{"data", "targets", "feature-names", "task", "model-cmd", "model-timeout", "model-procs", "model-fd", "max-batch"}, dataInputFlagNames...), modelOutputsFlagNames...)

type explainFlags struct {
	problem                              string
	data, targets, names, task, modelCmd string
	input                                dataInputFlags
	outputs                              modelOutputsFlags
	modelTimeout                         time.Duration
	modelProcs                           int
	modelFD                              string
	maxBatch                             int
	method                               string
	seed                                 uint64
	workers                              int
	jsonOut, csvOut, attributions        string
	quiet                                bool
	progress                             string
	errors                               errorFormat
	params                               map[string]*paramFlag
}

// defineExplainFlags defines on fs the flags of "tempora explain" that are
// not method parameters, into f; methods are the names -method takes. They
// are the only list of those flags: "tempora methods -json" reports them,
// and a method parameter may not take their names (newProgram).
func defineExplainFlags(fs *flag.FlagSet, f *explainFlags, methods []string) {
	fs.StringVar(&f.problem, "problem", "", "explain the model of the synthetic problem in `DIR` and compare with its ground truth")
	fs.StringVar(&f.data, "data", "", "data tensor `file` (.npy, or long-format .csv)")
	fs.StringVar(&f.targets, "targets", "", "targets `file` (.npy, or .csv/.txt with one value per line)")
	fs.StringVar(&f.names, "feature-names", "", "feature names `file`: one per line, or a .json array")
	defineDataInputFlags(fs, &f.input)
	defineModelOutputsFlags(fs, &f.outputs)
	fs.StringVar(&f.task, "task", "", "model `task` with -data: regression or classification")
	fs.StringVar(&f.modelCmd, "model-cmd", "", "model program `command` line with -data, split into words as a shell would (no shell runs it)")
	fs.DurationVar(&f.modelTimeout, "model-timeout", 10*time.Minute, "limit on the model's time to answer one batch (0: no limit)")
	fs.IntVar(&f.modelProcs, "model-procs", 1, "model processes started from -model-cmd, answering batches in parallel")
	fs.StringVar(&f.modelFD, "model-fd", "", "instead of -model-cmd, serve the model over inherited sockets `fds` (SOCK[:BUF],…)")
	fs.IntVar(&f.maxBatch, "max-batch", 0, "most instances per model call with -model-cmd or -model-fd (0: no limit)")
	fs.StringVar(&f.method, "method", "TIME", "explanation `method` (\"tempora methods\" lists them)")
	fs.Uint64Var(&f.seed, "seed", 0, "run seed of every random stream")
	fs.IntVar(&f.workers, "workers", 0, "goroutines evaluating the model (0: one per CPU)")
	fs.StringVar(&f.jsonOut, "json", "", "write the explanation as JSON to `file`")
	fs.StringVar(&f.csvOut, "csv", "", "write the per-feature results as CSV to `file`")
	fs.StringVar(&f.attributions, "attributions", "", "write a local method's per-instance attributions to `file` (.npy, as evaluate reads them)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress reports on standard error")
	fs.StringVar(&f.progress, "progress", "text", "progress `format`: text (a line every few seconds) or json (twice a second)")
	defineErrorsFlag(fs, &f.errors)
}

// explainOwnFlags returns a flag set holding only the flags of "tempora
// explain" that are not method parameters, at their defaults.
func explainOwnFlags(methods []string) *flag.FlagSet {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	defineExplainFlags(fs, &explainFlags{}, methods)
	return fs
}

func (p *program) explain(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("explain", explainHelp, stdout)
	fs.Usage = func() { p.explainUsage(stdout) }
	var f explainFlags
	defer f.errors.mark(&err)
	defineExplainFlags(fs, &f, p.table.Names())
	f.params = map[string]*paramFlag{}
	for _, tp := range p.table.Params() {
		pf := &paramFlag{isBool: tp.Kind() == method.Bool}
		f.params[tp.Name] = pf
		fs.Var(pf, tp.Name, "parameter of "+strings.Join(tp.Methods, ", ")+` (see "tempora methods NAME")`)
	}
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("explain: unexpected argument %q (see tempora explain -h)", fs.Arg(0))
	}
	m, given, err := p.explainMethod(&f, fs)
	if err != nil {
		return err
	}
	if err := f.validate(flagsSet(fs)); err != nil {
		return err
	}
	if p.parseOnly {
		return nil
	}
	if err := f.checkOutputs(); err != nil {
		return err
	}

	// Load the model and data.
	var (
		model  tempora.Model
		held   resident.Model // model's held data capability, if it has one
		data   *tempora.Dataset
		prob   *loadedProblem
		source string
	)
	if f.problem != "" {
		prob, err = loadProblem(f.problem)
		if err != nil {
			return err
		}
		model, data, source = prob.model, prob.data, f.problem
	} else {
		task, _ := tempora.ParseTask(f.task)  // validated
		align, _ := f.input.parse("explain")  // validated
		outs, _ := f.outputs.parse("explain") // validated
		data, _, err = dataio.ReadFiles(dataio.Files{Data: f.data, Targets: f.targets, Names: f.names, Mask: f.input.mask, Task: task, Alignment: align,
			Outputs: outs, OutputNames: f.outputs.names, Warn: warnTo(stderr)})
		if err != nil {
			return err
		}
		pm, err := startModel(ctx, f.modelCmd, f.modelProcs, f.modelFD, procmodel.Options{Timeout: f.modelTimeout, MaxBatch: f.maxBatch, Stderr: stderr}, stderr)
		if err != nil {
			return err
		}
		if err := checkModelOutputs(data.Outputs, pm.Outputs()); err != nil {
			pm.Close()
			return err
		}
		if f.workers == 0 {
			f.workers = max(runtime.GOMAXPROCS(0), pm.Slots()) // keep every model process busy
		}
		defer func() {
			if cerr := pm.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		model, held, source = pm, pm.Held(), f.data
	}

	vals, err := m.Values(given, false)
	if err != nil {
		return usageErrorf("explain: %v", err) // checked above; kept for safety
	}
	var prog *progressReporter
	ex, err := m.Explainer(method.Config{Seed: f.seed, Workers: f.workers, Data: data, Values: vals, Estimates: func(e tempora.RunEstimate) {
		if prog != nil {
			prog.estimate(e)
		}
	}})
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	settings := vals.Describe()
	if settings != "" {
		settings += ", "
	}
	settings += fmt.Sprintf("seed %d", f.seed)
	fmt.Fprintf(stderr, "tempora: explaining %s (%d × %d × %d, %v) with %s (%s)\n", source, data.X.M, data.X.D, data.X.L, data.Task, m.Name, settings)
	total, exact, _ := method.EstimateEvals(ex, data)
	if w := largeRunWarning(m.Name, total, exact); w != "" {
		fmt.Fprintln(stderr, w)
	}
	if !f.quiet {
		prog = startProgress(stderr, f.progress, m.Name, total, exact)
		model, held = prog.model(model), prog.held(held, data.K())
	}
	e, local, err := f.measure(ctx, ex, model, held, data)
	if prog != nil {
		prog.finish()
	}
	if err != nil {
		return err
	}
	acc := e.Accounting
	stopped := ""
	if acc.StoppedBy != "" {
		stopped = fmt.Sprintf("; stopped by the budget (-%s) with %d features or groups undecided", acc.StoppedBy, undecided(e))
	}
	fmt.Fprintf(stderr, "tempora: %s took %v: %d model calls, %d instance evaluations%s\n", m.Name, acc.Runtime.Round(time.Millisecond), acc.ModelCalls, acc.InstanceEvals, stopped)

	named := *e
	named.Method = m.Name
	if obs, err := data.Observe(1); err == nil {
		if writeObservation(stdout, obs, data.Name) { // nothing for complete data
			fmt.Fprintln(stdout)
		}
	}
	writeExplanation(stdout, &named, data, settings, m.Tests)
	if prob != nil {
		writeComparison(stdout, &named, prob.truth, m.Tests)
		writeOutputsComparison(stdout, &named, prob.outputs, m.Tests)
	}
	return f.writeFiles(&named, local, data, stderr)
}

// measure runs ex as method.MeasureHeld does, or with -attributions (the
// method then a method.LocalExplainer, explainMethod checked) as
// method.MeasureLocal does, returning its per-instance attributions too:
// the same explanation either way.
func (f *explainFlags) measure(ctx context.Context, ex tempora.Explainer, model tempora.Model, held resident.Model, data *tempora.Dataset) (*tempora.Explanation, *tempora.Tensor, error) {
	if f.attributions == "" {
		e, err := method.MeasureHeld(ctx, ex, model, held, data)
		return e, nil, err
	}
	lx, ok := ex.(method.LocalExplainer)
	if !ok { // not reached: explainMethod refuses -attributions for a method without Local
		return nil, nil, fmt.Errorf("explain: -attributions: %T gives no per-instance attributions", ex)
	}
	return method.MeasureLocal(ctx, lx, model, data)
}

// writeFiles writes the explanation to the -json and -csv files and the
// per-instance attributions local of e's explanation of data to the
// -attributions file (in the layout "tempora evaluate -attributions"
// reads, dataio.WriteAttributions), those given: all or none (fileSet).
func (f *explainFlags) writeFiles(e *tempora.Explanation, local *tempora.Tensor, data *tempora.Dataset, stderr io.Writer) error {
	var set fileSet
	if err := f.writeEach(&set, e, local, data); err != nil {
		set.undo()
		return err
	}
	set.commit()
	if f.attributions != "" {
		fmt.Fprintf(stderr, "tempora: wrote %s (%s attributions of %s)\n", f.attributions, e.Method, attributionsShape(local, method.ExplainedOutputs(e, data)))
	}
	for _, p := range []string{f.jsonOut, f.csvOut} {
		if p != "" {
			fmt.Fprintf(stderr, "tempora: wrote %s\n", p)
		}
	}
	return nil
}

// attributionsShape describes the shape of attributions of k outputs.
func attributionsShape(local *tempora.Tensor, k int) string {
	if k > 1 {
		return fmt.Sprintf("%d instances × %d outputs × %d features × %d timesteps", local.M/k, k, local.D, local.L)
	}
	return fmt.Sprintf("%d instances × %d features × %d timesteps", local.M, local.D, local.L)
}

// writeEach writes the -attributions, -json and -csv files into set.
func (f *explainFlags) writeEach(set *fileSet, e *tempora.Explanation, local *tempora.Tensor, data *tempora.Dataset) error {
	if f.attributions != "" {
		k := method.ExplainedOutputs(e, data)
		if err := set.write(f.attributions, func(w io.Writer) error { return dataio.WriteAttributions(w, local, k) }); err != nil {
			return fmt.Errorf("explain: -attributions: %w", err)
		}
	}
	if f.jsonOut != "" {
		if err := set.write(f.jsonOut, func(w io.Writer) error {
			b, err := json.MarshalIndent(e, "", "  ")
			if err != nil {
				return err
			}
			_, err = w.Write(append(b, '\n'))
			return err
		}); err != nil {
			return fmt.Errorf("explain: -json: %w", err)
		}
	}
	if f.csvOut != "" {
		if err := set.write(f.csvOut, e.WriteCSV); err != nil {
			return fmt.Errorf("explain: -csv: %w", err)
		}
	}
	return nil
}

// explainMethod looks up -method and checks the method-parameter flags
// given against it, returning their texts by name.
func (p *program) explainMethod(f *explainFlags, fs *flag.FlagSet) (*method.Method, map[string]string, error) {
	m, err := p.table.Lookup(f.method)
	if err != nil {
		return nil, nil, usageErrorf("explain: unknown -method %q (want %s)", f.method, strings.Join(p.table.Names(), ", "))
	}
	set := flagsSet(fs)
	given := map[string]string{}
	for _, tp := range p.table.Params() {
		if !set[tp.Name] {
			continue
		}
		par := m.Param(tp.Name)
		if par == nil {
			return nil, nil, usageErrorf("explain: -%s does not apply to -method %s (only to %s)", tp.Name, m.Name, strings.Join(tp.Methods, ", "))
		}
		text := f.params[tp.Name].text
		if _, err := par.Parse(text); err != nil {
			return nil, nil, usageErrorf("explain: -%s %s: want %s", tp.Name, text, par.Want())
		}
		given[tp.Name] = text
	}
	if _, err := m.Values(given, false); err != nil {
		return nil, nil, usageErrorf("explain: %v", err)
	}
	if f.attributions != "" && !m.Local {
		return nil, nil, usageErrorf("explain: -attributions: %s gives no per-instance attributions (only global cell scores); the methods that do: %s",
			m.Name, strings.Join(p.table.LocalNames(), ", "))
	}
	return m, given, nil
}

// validate checks the flags that can be checked before reading any file.
func (f *explainFlags) validate(set map[string]bool) error {
	switch {
	case f.problem != "":
		for _, name := range realDataFlags {
			if set[name] {
				return usageErrorf("explain: -%s cannot be combined with -problem (a problem has its own data, task and model)", name)
			}
		}
	case f.data == "":
		return usageErrorf("explain: missing -problem DIR or -data FILE (see tempora explain -h)")
	case f.targets == "":
		return usageErrorf("explain: -data needs -targets FILE")
	case f.task == "":
		return usageErrorf("explain: -data needs -task regression or -task classification")
	case f.modelCmd == "" && f.modelFD == "":
		return usageErrorf("explain: -data needs -model-cmd COMMAND (the model program to explain)")
	}
	if err := validateModelSource(f.modelCmd, f.modelFD, f.modelProcs, set); err != nil {
		return err
	}
	if _, err := f.input.parse("explain"); err != nil {
		return err
	}
	if _, err := f.outputs.parse("explain"); err != nil {
		return err
	}
	if f.task != "" {
		if _, err := tempora.ParseTask(f.task); err != nil {
			return usageErrorf("explain: -task %q: want regression or classification", f.task)
		}
	}
	switch {
	case f.workers < 0:
		return usageErrorf("explain: -workers %d: want 0 (one per CPU) or more", f.workers)
	case f.modelTimeout < 0:
		return usageErrorf("explain: -model-timeout %v: want 0 (no limit) or more", f.modelTimeout)
	case f.maxBatch < 0 || f.maxBatch > procmodel.MaxBatchLimit:
		return usageErrorf("explain: -max-batch %d: want 0 (no limit) or 1 to %d instances per model call", f.maxBatch, procmodel.MaxBatchLimit)
	case !slices.Contains(progressFormats, f.progress):
		return usageErrorf("explain: -progress %q: want %s", f.progress, strings.Join(progressFormats, " or "))
	}
	return nil
}
