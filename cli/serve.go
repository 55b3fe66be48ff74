package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tempora-dev/tempora/procmodel"
)

const serveHelp = `
Serve loads the synthetic problem in DIR (written by "tempora synth") and
answers the model protocol of docs/protocol.md for its model on standard
input and output, until standard input closes. An
explanation method written in another language can thus query the synthetic
black-box model the way tempora's own explainers do, by starting

	tempora serve -problem DIR

as a child process: it writes one hello frame, then one answer (the model's
predictions: probabilities of class 1 for classification, real values for
regression; K per instance for a model of K outputs, which the hello
announces) per request. A request whose shape does not match the problem's
features and timesteps gets an error answer. It speaks the protocol's one
version, 2: its hello says that it holds no data, and besides plain requests
it keeps resident data and answers block requests (only what a permutation
changes). Standard output carries the protocol only; messages go to standard
error.`

func (p *program) serve(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", serveHelp, stdout)
	problem := fs.String("problem", "", "serve the model of the synthetic problem in `DIR` (required)")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 0 {
		return usageErrorf("serve: unexpected arguments %q (see tempora serve -h)", fs.Args())
	}
	if *problem == "" {
		return usageErrorf("serve: -problem is required (see tempora serve -h)")
	}
	if p.parseOnly {
		return nil
	}
	prob, err := loadProblem(*problem)
	if err != nil {
		return err
	}
	data := prob.data
	outputs := ""
	if o := data.Outputs; o != nil {
		outputs = fmt.Sprintf(", %d outputs (%v)", o.K, o.Kind)
	}
	fmt.Fprintf(stderr, "tempora: serving the %v model of %s (%d features × %d timesteps%s) until standard input closes\n",
		data.Task, *problem, data.X.D, data.X.L, outputs)
	if err := procmodel.ServeOutputs(os.Stdin, stdout, prob.model, data.K()); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
