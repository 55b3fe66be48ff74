package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/procmodel"
)

// modelOutputsFlags are the flags that describe a model with several
// outputs per instance (tempora.Outputs) in the -data mode: -outputs
// KIND[:K], -output-names FILE and -output-anchors LIST. Every command that
// reads -data with a model defines them through defineModelOutputsFlags,
// their one owner.
type modelOutputsFlags struct {
	spec, names, anchors string
}

// modelOutputsFlagNames are the names of the flags of modelOutputsFlags.
var modelOutputsFlagNames = []string{"outputs", "output-names", "output-anchors"}

// defineModelOutputsFlags defines -outputs, -output-names and
// -output-anchors on fs, into f.
func defineModelOutputsFlags(fs *flag.FlagSet, f *modelOutputsFlags) {
	fs.StringVar(&f.spec, "outputs", "", "with -data, a model of several outputs per instance, `KIND[:K]`: classes:K, horizons or steps")
	fs.StringVar(&f.names, "output-names", "", "output names `file` with -outputs: one per line, or a .json array")
	fs.StringVar(&f.anchors, "output-anchors", "", "each output's timestep, a comma-separated `LIST` (default: L+k for horizon k, s for step s)")
}

// parse returns the outputs the flags describe (nil: one output), with K
// 0 when -outputs leaves it to the targets; cmd names the command in the
// usage errors.
func (f *modelOutputsFlags) parse(cmd string) (*tempora.Outputs, error) {
	if f.spec == "" {
		switch {
		case f.names != "":
			return nil, usageErrorf("%s: -output-names needs -outputs KIND[:K]", cmd)
		case f.anchors != "":
			return nil, usageErrorf("%s: -output-anchors needs -outputs horizons or steps", cmd)
		}
		return nil, nil
	}
	kind, count, hasK := strings.Cut(f.spec, ":")
	k, err := tempora.ParseOutputKind(kind)
	if err != nil {
		return nil, usageErrorf("%s: -outputs %q: want classes:K, horizons[:K] or steps[:K]", cmd, f.spec)
	}
	o := &tempora.Outputs{Kind: k}
	if hasK {
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 || n > procmodel.MaxOutputs {
			return nil, usageErrorf("%s: -outputs %q: K must be an integer from 1 to %d", cmd, f.spec, procmodel.MaxOutputs)
		}
		o.K = n
	}
	switch {
	case k == tempora.Classes && !hasK:
		return nil, usageErrorf("%s: -outputs classes needs the number of classes, -outputs classes:K (the labels do not say it)", cmd)
	case k == tempora.Classes && o.K < 3:
		return nil, usageErrorf("%s: -outputs %q: two classes are one output (the probability of class 1: leave -outputs out), so classes need K ≥ 3", cmd, f.spec)
	case k == tempora.Classes && f.anchors != "":
		return nil, usageErrorf("%s: -output-anchors does not apply to classes, which have no place on the time axis", cmd)
	}
	if f.anchors != "" {
		for item := range strings.SplitSeq(f.anchors, ",") {
			a, err := strconv.Atoi(strings.TrimSpace(item))
			if err != nil {
				return nil, usageErrorf("%s: -output-anchors %q: %q is not an integer timestep", cmd, f.anchors, item)
			}
			o.Anchors = append(o.Anchors, a)
		}
		if o.K != 0 && len(o.Anchors) != o.K {
			return nil, usageErrorf("%s: -output-anchors gives %d anchors for -outputs %s", cmd, len(o.Anchors), f.spec)
		}
	}
	return o, nil
}

// checkModelOutputs compares the outputs per instance the model announced
// (model) with the data's (o; nil for one output).
func checkModelOutputs(o *tempora.Outputs, model int) error {
	data := o.Len()
	switch {
	case model == data:
		return nil
	case o == nil:
		return fmt.Errorf("explain: the model returns %d outputs per instance (its hello says so), but the data has one: describe them with -outputs KIND:%d (docs/protocol.md)", model, model)
	case model == 1:
		return fmt.Errorf("explain: the data has %d %v outputs (-outputs), but the model returns one output per instance: its hello announces no K (a Python model program serves with tempora.serve(predict, outputs=%d); docs/protocol.md)", data, o.Kind, data)
	}
	return fmt.Errorf("explain: the data has %d %v outputs (-outputs and the targets), but the model returns %d per instance (its hello says so)", data, o.Kind, model)
}
