package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/tempora-dev/tempora/experiments"
)

const mergeHelp = `
Merge combines the output directories of the shards of one run ("tempora run
-shard i/n", or the jobs of "tempora export") into OUT: it checks that their
manifests describe the same run, copies every record, writes OUT/manifest.json
and OUT/bench.txt, and checks that every record of the suite's item list is
present (it reports what is missing and exits non-zero otherwise).`

func runMerge(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("merge", "-out DIR SHARD_DIR...", mergeHelp, stdout)
	out := fs.String("out", "", "output `directory` (required)")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if *out == "" {
		return usageErrorf("merge: -out is required (see tempora merge -h)")
	}
	if fs.NArg() == 0 {
		return usageErrorf("merge: no shard directories given (see tempora merge -h)")
	}
	if err := experiments.Merge(*out, fs.Args(), nil); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged %d directories into %s\n", fs.NArg(), *out)
	return nil
}
