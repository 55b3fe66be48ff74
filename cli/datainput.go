package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/tempora-dev/tempora"
)

// dataInputFlags are the flags that say how to read a -data file with
// missing values; every command that reads -data defines them through
// defineDataInputFlags, their one owner.
type dataInputFlags struct {
	mask, alignment string
}

// dataInputFlagNames are the names of the flags of dataInputFlags.
var dataInputFlagNames = []string{"mask", "alignment"}

const dataInputHelp = `A missing value is NaN: a NaN in a .npy file; in a long .csv file, a cell
without a line or with an empty, NA or NaN value. -mask FILE.npy marks the
observed cells instead (booleans or 0/1 of the data's shape; 0: missing).
Sequences of different lengths are missing values at their end (-alignment
start, the default: timestep 0 is every sequence's first step) or, with
-alignment end, at their start (timestep L−1 is every sequence's last step).
Windows are reported in this aligned time, and a .csv file's timestep column
is aligned time too. Infinities are errors.`

// defineDataInputFlags defines -mask and -alignment on fs, into f.
func defineDataInputFlags(fs *flag.FlagSet, f *dataInputFlags) {
	fs.StringVar(&f.mask, "mask", "", "observation mask `file` with -data: .npy of the data's shape, booleans or 0/1 (0: missing)")
	fs.StringVar(&f.alignment, "alignment", "start", "`alignment` of sequences of different lengths with -data: start (timestep 0 is each sequence's first step) or end (the last timestep is each sequence's last step)")
}

// parse returns the alignment; cmd names the command in the usage error.
func (f *dataInputFlags) parse(cmd string) (tempora.Alignment, error) {
	a, err := tempora.ParseAlignment(f.alignment)
	if err != nil {
		return 0, usageErrorf("%s: -alignment %q: want start or end", cmd, f.alignment)
	}
	return a, nil
}

// maxLengthCounts is the most distinct sequence lengths whose counts
// writeObservation lists.
const maxLengthCounts = 6

// writeObservation writes, for data with missing values, the alignment,
// the distribution of the sequences' lengths and each feature's missing
// rate, and reports whether it wrote; for complete data it writes nothing,
// so reports on complete data are unchanged.
func writeObservation(w io.Writer, o *tempora.Observation, name func(int) string) bool {
	if o.Complete() {
		return false
	}
	lengths := o.Lengths()
	short := 0
	for _, n := range lengths {
		if n < o.L {
			short++
		}
	}
	lo, med, hi := o.LengthQuantiles()
	fmt.Fprintf(w, "missing values (alignment %v): %d of %d instances shorter than %d timesteps; lengths min %d, median %d, max %d\n",
		o.Alignment, short, o.M, o.L, lo, med, hi)
	distinct := slices.Compact(slices.Sorted(slices.Values(lengths)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(distinct) > 1 && len(distinct) <= maxLengthCounts {
		fmt.Fprintln(tw, "length\tinstances")
		for _, n := range distinct {
			c := 0
			for _, m := range lengths {
				if m == n {
					c++
				}
			}
			fmt.Fprintf(tw, "%d\t%d\n", n, c)
		}
		tw.Flush()
	}
	fmt.Fprintln(tw, "feature\tmissing\tobserved timesteps")
	for j := range o.D {
		fmt.Fprintf(tw, "%s\t%.1f%%\t[%d, %d]\n", name(j), 100*o.MissingRate(j), o.Span[j].Start, o.Span[j].End)
	}
	tw.Flush()
	fmt.Fprintln(w, "(missing: the share of the feature's cells within the instances' lengths that are NaN)")
	return true
}
