package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/tempora-dev/tempora/experiments"
)

const mergeHelp = `
Merge combines run directories of one suite's problems into OUT: the shards
of a run ("tempora run -shard i/n", or the jobs of "tempora export"), and runs
of other methods on the same problems ("tempora run", or "tempora evaluate
-problems" for an outside tool's scores). It checks that their manifests
describe the same suite, grid, scale, seed and number of models, copies every
record, writes OUT/manifest.json and OUT/bench.txt, and checks that every
record of every input's methods is present (it reports what is missing and
fails otherwise). Merge reads records as data: it needs no method to be
known to this program.

Merge is all or nothing: it builds the merge in a temporary directory beside
OUT and moves it into place only when every input has been read and checked,
so an invalid or conflicting record in any input leaves OUT as it was. An
incomplete merge still writes every record of the inputs (and exits 1 naming
what is missing); merging the missing shards into it later completes it.
OUT may be new, empty, or a run or merge of the same problems, whose records
then count as one more input and whose other files (a report/) are kept;
any other non-empty OUT is refused.`

func (p *program) merge(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("merge", mergeHelp, stdout)
	out := fs.String("out", "", "output `directory` (required)")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if *out == "" {
		return usageErrorf("merge: -out is required (see tempora merge -h)")
	}
	if fs.NArg() == 0 {
		return usageErrorf("merge: no run directories given (see tempora merge -h)")
	}
	if p.parseOnly {
		return nil
	}
	if err := experiments.Merge(*out, fs.Args()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged %d directories into %s\n", fs.NArg(), *out)
	return nil
}
