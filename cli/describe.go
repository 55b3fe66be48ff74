package cli

import (
	"context"
	"io"

	"github.com/tempora-dev/tempora/synth"
)

const describeHelp = `
Describe prints a summary of a synthetic problem saved by "tempora synth": its
shape, task and configuration, the noise multiplier, how well the model fits the
targets, and one line per feature with its generator, window, aggregator,
coefficient and ground truth.`

func (p *program) describe(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("describe", describeHelp, stdout)
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 1 {
		return usageErrorf("describe: want exactly one problem directory, got %d arguments (see tempora describe -h)", fs.NArg())
	}
	if p.parseOnly {
		return nil
	}
	prob, err := synth.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	return prob.Describe(stdout)
}
