package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/synth"
)

const describeHelp = `
Describe prints a summary of a synthetic problem saved by "tempora synth": its
shape, task and configuration, the noise multiplier, how well the model fits the
targets, and one line per feature with its generator, window, aggregator,
coefficient and ground truth.

With -data FILE instead of a problem directory, it describes a data file as
"tempora explain -data" reads it (with -feature-names, -mask and -alignment):
its shape and, for data with missing values, the lengths of the sequences
and each feature's missing rate. A problem or data with missing values gets
the same summary.

` + dataInputHelp

type describeFlags struct {
	data, names string
	input       dataInputFlags
	errors      errorFormat
}

func (p *program) describe(_ context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlagSet("describe", describeHelp, stdout)
	var f describeFlags
	defer f.errors.mark(&err)
	defineErrorsFlag(fs, &f.errors)
	fs.StringVar(&f.data, "data", "", "describe the data tensor `file` (.npy, or long-format .csv) instead of a problem")
	fs.StringVar(&f.names, "feature-names", "", "feature names `file` with -data: one per line, or a .json array")
	defineDataInputFlags(fs, &f.input)
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	align, err := f.input.parse("describe")
	if err != nil {
		return err
	}
	set := flagsSet(fs)
	if f.data == "" {
		for _, name := range append([]string{"feature-names"}, dataInputFlagNames...) {
			if set[name] {
				return usageErrorf("describe: -%s needs -data FILE (a problem has its own data)", name)
			}
		}
		if fs.NArg() != 1 {
			return usageErrorf("describe: want exactly one problem directory, got %d arguments (see tempora describe -h)", fs.NArg())
		}
	} else if fs.NArg() != 0 {
		return usageErrorf("describe: -data describes a data file; unexpected argument %q", fs.Arg(0))
	}
	if p.parseOnly {
		return nil
	}
	if f.data != "" {
		x, names, obs, err := dataio.ReadData(dataio.Files{Data: f.data, Names: f.names, Mask: f.input.mask, Alignment: align, Warn: warnTo(stderr)})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "data %s: %d instances × %d features × %d timesteps\n", f.data, x.M, x.D, x.L)
		if obs.Complete() {
			fmt.Fprintln(stdout, "complete: no missing values")
			return nil
		}
		ds := tempora.Dataset{X: x, FeatureNames: names}
		writeObservation(stdout, obs, ds.Name)
		return nil
	}
	prob, err := synth.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	if err := prob.Describe(stdout); err != nil {
		return err
	}
	if obs, err := prob.Data.Observe(1); err == nil && !obs.Complete() {
		fmt.Fprintln(stdout)
		writeObservation(stdout, obs, prob.Data.Name)
	}
	return nil
}
