package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/procmodel"
	"github.com/tempora-dev/tempora/synth"
)

const explainHelp = `
Explain explains a model with TIME (the default) or a baseline and prints the
features sorted by importance: for TIME, each feature's importance score, raw
and Benjamini–Hochberg-adjusted p-values, the window of timesteps it matters
in, and whether its ordering matters; for the baselines, each feature's score
(the mean |score| of its non-zero cells). Progress and timing go to standard
error.

The model and data come either from a synthetic problem (-problem DIR, written
by "tempora synth"), in which case the explanation is followed by a comparison
with the problem's ground truth, or from files and a model program:

	tempora explain -data X.npy -targets y.npy -task classification \
	    -model-cmd "python3 serve_model.py --weights 'my model.pt'"

-data is an instances × features × timesteps tensor in .npy or long-format
.csv (columns instance, feature, timestep, value); -targets one target per
instance (.npy, or .csv/.txt with one value per line); -feature-names one name
per line. -model-cmd is split into words like a shell command line (blanks
separate words; single and double quotes group them; a backslash escapes the
next character) but is not run by a shell: no variables, globs, pipes or
redirections (use "sh -c '…'" for those). The program must speak tempora's
model protocol on its standard input and output (see package procmodel and
examples/).

-model-procs N starts N copies of the program, which answer batches in
parallel; the results do not depend on N. -model-fd serves the model over
socket connections inherited from the process that started tempora instead
of starting a program (the Python package works this way; see
docs/protocol.md).

Methods: time (TIME), lime (LIME), sage, sage-m, sage-z (SAGE with marginal,
mean or zero imputation), perm (permutation importance of every cell), perm-f
(PERM keeping only cells significant under BH). Flags that do not apply to the
chosen method are rejected. Results do not depend on -workers.`

// methodFlags lists the method-specific flags and the methods they apply
// to.
var methodFlags = map[string][]string{
	"permutations":        {"time", "perm", "perm-f"},
	"alpha":               {"time", "perm-f"},
	"gamma":               {"time"},
	"hierarchy":           {"time"},
	"samples":             {"lime"},
	"instances-explained": {"lime"},
	"budget":              {"sage", "sage-m", "sage-z"},
	"max-permutations":    {"sage", "sage-m", "sage-z"},
	"background":          {"sage"},
}

var methods = []string{"time", "lime", "sage", "sage-m", "sage-z", "perm", "perm-f"}

// realDataFlags are the flags of the -data mode.
var realDataFlags = []string{"data", "targets", "feature-names", "task", "model-cmd", "model-timeout", "model-procs", "model-fd"}

type explainFlags struct {
	problem                              string
	data, targets, names, task, modelCmd string
	modelTimeout                         time.Duration
	modelProcs                           int
	modelFD                              string
	method                               string
	permutations                         int
	alpha, gamma                         float64
	hierarchy                            string
	seed                                 uint64
	workers                              int
	samples, instancesExplained          int
	budget                               time.Duration
	maxPermutations, background          int
	jsonOut, csvOut                      string
}

func runExplain(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("explain", "(-problem DIR | -data X -targets Y -task T -model-cmd CMD) [flags]", explainHelp, stdout)
	var f explainFlags
	fs.StringVar(&f.problem, "problem", "", "explain the model of the synthetic problem in `DIR` and compare with its ground truth")
	fs.StringVar(&f.data, "data", "", "data tensor `file` (.npy, or long-format .csv)")
	fs.StringVar(&f.targets, "targets", "", "targets `file` (.npy, or .csv/.txt with one value per line)")
	fs.StringVar(&f.names, "feature-names", "", "feature names `file`, one per line")
	fs.StringVar(&f.task, "task", "", "model `task` with -data: regression or classification")
	fs.StringVar(&f.modelCmd, "model-cmd", "", "model program `command` line with -data (see above for quoting)")
	fs.DurationVar(&f.modelTimeout, "model-timeout", 10*time.Minute, "limit on the model's time to answer one batch (0: no limit)")
	fs.IntVar(&f.modelProcs, "model-procs", 1, "model processes started from -model-cmd, answering batches in parallel")
	fs.StringVar(&f.modelFD, "model-fd", "", "instead of -model-cmd, serve the model over inherited socket `fds` (SOCK[:BUF],…; see docs/protocol.md)")
	fs.StringVar(&f.method, "method", "time", "explanation `method`: "+strings.Join(methods, ", "))
	fs.IntVar(&f.permutations, "permutations", explain.DefaultPermutations, "permutations per test P (time, perm, perm-f)")
	fs.Float64Var(&f.alpha, "alpha", explain.DefaultAlpha, "FDR level α in (0, 1) (time, perm-f)")
	fs.Float64Var(&f.gamma, "gamma", explain.DefaultGamma, "window localisation γ in (0, 1) (time)")
	fs.StringVar(&f.hierarchy, "hierarchy", "", "feature-group hierarchy JSON `file` (time)")
	fs.Uint64Var(&f.seed, "seed", 0, "run seed of every random stream")
	fs.IntVar(&f.workers, "workers", 0, "goroutines evaluating the model (0: one per CPU)")
	fs.IntVar(&f.samples, "samples", baselines.DefaultLIMESamples, "samples per explained instance (lime)")
	fs.IntVar(&f.instancesExplained, "instances-explained", 0, "explain only the first `N` instances (lime; 0: all)")
	fs.DurationVar(&f.budget, "budget", 0, "wall-time budget; an unconverged run is reported as such (sage*; 0: none)")
	fs.IntVar(&f.maxPermutations, "max-permutations", 0, "cap on sampled permutations (sage*; 0: none)")
	fs.IntVar(&f.background, "background", 0, "background rows of the marginal imputer (sage; 0: min(128, instances))")
	fs.StringVar(&f.jsonOut, "json", "", "write the explanation as JSON to `file`")
	fs.StringVar(&f.csvOut, "csv", "", "write the per-feature results as CSV to `file`")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("explain: unexpected argument %q (see tempora explain -h)", fs.Arg(0))
	}
	if err := f.validate(flagsSet(fs)); err != nil {
		return err
	}

	// Load the model and data.
	var (
		model  tempora.Model
		data   *tempora.Dataset
		prob   *synth.Problem
		source string
	)
	if f.problem != "" {
		prob, err = synth.Load(f.problem)
		if err != nil {
			return err
		}
		model, data, source = prob.Model, prob.Data, f.problem
	} else {
		task, _ := tempora.ParseTask(f.task) // validated
		data, err = dataio.ReadDataset(f.data, f.targets, f.names, task)
		if err != nil {
			return err
		}
		pm, err := startModel(ctx, f.modelCmd, f.modelProcs, f.modelFD, procmodel.Options{Timeout: f.modelTimeout, Stderr: stderr}, stderr)
		if err != nil {
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
		model, source = pm, f.data
	}

	ex, desc, err := f.explainer(data)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tempora: explaining %s (%d × %d × %d, %v) with %s\n", source, data.X.M, data.X.D, data.X.L, data.Task, desc)
	start := time.Now()
	e, err := ex.Explain(ctx, model, data)
	if err != nil {
		return err
	}
	acc := e.Accounting
	fmt.Fprintf(stderr, "tempora: %s took %v: %d model calls, %d instance evaluations\n", e.Method, time.Since(start).Round(time.Millisecond), acc.ModelCalls, acc.InstanceEvals)

	writeExplanation(stdout, e, data, f.alpha, f.method == "time")
	if prob != nil {
		writeComparison(stdout, e, prob, f.method == "time")
	}
	if f.jsonOut != "" {
		if err := atomicfile.Write(f.jsonOut, func(w io.Writer) error {
			b, err := json.MarshalIndent(e, "", "  ")
			if err != nil {
				return err
			}
			_, err = w.Write(append(b, '\n'))
			return err
		}); err != nil {
			return fmt.Errorf("explain: -json: %w", err)
		}
		fmt.Fprintf(stderr, "tempora: wrote %s\n", f.jsonOut)
	}
	if f.csvOut != "" {
		if err := atomicfile.Write(f.csvOut, e.WriteCSV); err != nil {
			return fmt.Errorf("explain: -csv: %w", err)
		}
		fmt.Fprintf(stderr, "tempora: wrote %s\n", f.csvOut)
	}
	return nil
}

// validate checks the flags that can be checked before reading any file.
func (f *explainFlags) validate(set map[string]bool) error {
	if !slices.Contains(methods, f.method) {
		return usageErrorf("explain: unknown -method %q (want %s)", f.method, strings.Join(methods, ", "))
	}
	for _, name := range sortedKeys(methodFlags) {
		if set[name] && !slices.Contains(methodFlags[name], f.method) {
			return usageErrorf("explain: -%s does not apply to -method %s (only to %s)", name, f.method, strings.Join(methodFlags[name], ", "))
		}
	}
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
	if f.task != "" {
		if _, err := tempora.ParseTask(f.task); err != nil {
			return usageErrorf("explain: -task %q: want regression or classification", f.task)
		}
	}
	switch {
	case f.permutations < 1:
		return usageErrorf("explain: -permutations %d: need at least 1", f.permutations)
	case !(f.alpha > 0 && f.alpha < 1):
		return usageErrorf("explain: -alpha %v: the FDR level must be in (0, 1)", f.alpha)
	case !(f.gamma > 0 && f.gamma < 1):
		return usageErrorf("explain: -gamma %v: must be in (0, 1)", f.gamma)
	case f.workers < 0:
		return usageErrorf("explain: -workers %d: must not be negative", f.workers)
	case f.samples < 2:
		return usageErrorf("explain: -samples %d: need at least 2", f.samples)
	case f.instancesExplained < 0:
		return usageErrorf("explain: -instances-explained %d: must not be negative", f.instancesExplained)
	case f.budget < 0:
		return usageErrorf("explain: -budget %v: must not be negative", f.budget)
	case f.maxPermutations < 0:
		return usageErrorf("explain: -max-permutations %d: must not be negative", f.maxPermutations)
	case f.background < 0:
		return usageErrorf("explain: -background %d: must not be negative", f.background)
	case f.modelTimeout < 0:
		return usageErrorf("explain: -model-timeout %v: must not be negative", f.modelTimeout)
	}
	return nil
}

// explainer builds the chosen method's configuration and describes it.
func (f *explainFlags) explainer(data *tempora.Dataset) (tempora.Explainer, string, error) {
	switch f.method {
	case "time":
		t := explain.TIME{Permutations: f.permutations, Alpha: f.alpha, Gamma: f.gamma, Seed: f.seed, Workers: f.workers}
		desc := fmt.Sprintf("TIME (P = %d, α = %g, γ = %g, seed %d", f.permutations, f.alpha, f.gamma, f.seed)
		if f.hierarchy != "" {
			h, err := readHierarchy(f.hierarchy, data)
			if err != nil {
				return nil, "", err
			}
			t.Hierarchy = h
			desc += ", hierarchy " + f.hierarchy
		}
		return t, desc + ")", nil
	case "lime":
		l := baselines.LIME{Samples: f.samples, Instances: f.instancesExplained, Seed: f.seed, Workers: f.workers}
		return l, fmt.Sprintf("LIME (%d samples per instance, seed %d)", f.samples, f.seed), nil
	case "sage", "sage-m", "sage-z":
		imp := map[string]baselines.Imputer{"sage": baselines.Marginal, "sage-m": baselines.Mean, "sage-z": baselines.Zero}[f.method]
		s := baselines.SAGE{Imputer: imp, Background: f.background, MaxPermutations: f.maxPermutations, MaxTime: f.budget, Seed: f.seed, Workers: f.workers}
		desc := fmt.Sprintf("%s (seed %d", imp, f.seed)
		if f.budget > 0 {
			desc += fmt.Sprintf(", budget %v", f.budget)
		}
		if f.maxPermutations > 0 {
			desc += fmt.Sprintf(", at most %d permutations", f.maxPermutations)
		}
		return s, desc + ")", nil
	case "perm", "perm-f":
		p := baselines.PERM{Permutations: f.permutations, Alpha: f.alpha, Filter: f.method == "perm-f", Seed: f.seed, Workers: f.workers}
		return p, fmt.Sprintf("%s (P = %d, seed %d)", strings.ToUpper(f.method[:4])+f.method[4:], f.permutations, f.seed), nil
	}
	panic("unreachable: method validated")
}

func readHierarchy(path string, data *tempora.Dataset) (*explain.Hierarchy, error) {
	r, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("explain: -hierarchy: %w", err)
	}
	defer r.Close()
	names := data.FeatureNames
	if names == nil {
		names = make([]string, data.X.D)
		for j := range names {
			names[j] = data.Name(j)
		}
	}
	h, err := explain.ParseHierarchy(r, names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
