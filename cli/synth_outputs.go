package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/synth"
)

// synthOutputsFlags are the flags of "tempora synth" for a world whose
// model has several outputs (synth.GenerateOutputs).
type synthOutputsFlags struct {
	spec   string
	peek   bool
	period int
}

// defineSynthOutputsFlags defines -outputs, -peek and -period on fs.
func defineSynthOutputsFlags(fs *flag.FlagSet, f *synthOutputsFlags) {
	fs.StringVar(&f.spec, "outputs", "", "a world whose model has several outputs, `KIND[:K]`: classes[:K], horizons[:K] or steps (one per timestep)")
	fs.BoolVar(&f.peek, "peek", false, "-outputs steps: the first relevant feature is read one step after each output's own")
	fs.IntVar(&f.period, "period", 0, "-outputs steps: the last relevant feature is observed every `N` timesteps and carried forward (0: always)")
}

// synthFlagsOfOneOutput are the flags of the worlds of one output, which
// -outputs does not take.
var synthFlagsOfOneOutput = []string{"relevant", "task", "noise", "window-independent", "aggregator", "missing-rate", "length-spread", "alignment", "missing-mechanism"}

// config returns the configuration of a world with outputs from the flags
// set on fs and the sizes given; nil when -outputs is not given.
func (f *synthOutputsFlags) config(fs *flag.FlagSet, m, d, l int) (*synth.OutputsConfig, error) {
	set := flagsSet(fs)
	if f.spec == "" {
		for _, name := range []string{"peek", "period"} {
			if set[name] {
				return nil, usageErrorf("synth: -%s needs -outputs steps", name)
			}
		}
		return nil, nil
	}
	for _, name := range synthFlagsOfOneOutput {
		if set[name] {
			return nil, usageErrorf("synth: -%s does not apply to -outputs (a world of one output)", name)
		}
	}
	kind, count, hasK := strings.Cut(f.spec, ":")
	k, err := tempora.ParseOutputKind(kind)
	if err != nil {
		return nil, usageErrorf("synth: -outputs %q: want classes[:K], horizons[:K] or steps", f.spec)
	}
	cfg := &synth.OutputsConfig{Kind: k, Instances: m, Features: d, Timesteps: l, Peek: f.peek, Period: f.period}
	if hasK {
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 {
			return nil, usageErrorf("synth: -outputs %q: K must be a positive integer", f.spec)
		}
		cfg.Outputs = n
	}
	switch {
	case k == tempora.Steps && hasK:
		return nil, usageErrorf("synth: -outputs %q: steps have one output per timestep (-timesteps)", f.spec)
	case k != tempora.Steps && (f.peek || f.period != 0):
		return nil, usageErrorf("synth: -peek and -period apply to -outputs steps only")
	}
	return cfg, nil
}

// synthOutputs generates and saves the world of cfg into out.
func synthOutputs(ctx context.Context, cfg *synth.OutputsConfig, seed uint64, out string, stdout, stderr io.Writer) error {
	start := time.Now()
	fmt.Fprintf(stderr, "tempora: generating %d × %d × %d problem with %v outputs (seed %d)\n", cfg.Instances, cfg.Features, cfg.Timesteps, cfg.Kind, seed)
	p, err := synth.GenerateOutputs(*cfg, seed)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := stageDir(out, func(dir string) error { return p.SaveContext(ctx, dir) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tempora: generated in %v\n", time.Since(start).Round(time.Millisecond))
	x, o := p.Data.X, p.Data.Outputs
	var reads []string
	for _, ot := range p.Outputs {
		var fs []string
		for _, t := range ot.Features {
			if t.Relevant {
				fs = append(fs, strconv.Itoa(t.Index))
			}
		}
		reads = append(reads, ot.Name+": "+strings.Join(fs, ","))
	}
	fmt.Fprintf(stdout, "wrote %s: %d instances × %d features × %d timesteps, %v, %d outputs (%v) reading features %s\n",
		out, x.M, x.D, x.L, p.Data.Task, o.K, o.Kind, strings.Join(reads, "; "))
	return nil
}
