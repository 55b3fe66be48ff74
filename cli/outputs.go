package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tempora-dev/tempora/synth"
)

// namedFile is a file given on the command line, by its flag.
type namedFile struct{ flag, path string }

// checkOutputs refuses output files that are one of the input files (by
// os.SameFile, so another name or a link to the same file counts) or each
// other: tempora never overwrites what it reads, as cp refuses to copy a
// file onto itself. Files that do not exist yet are fine, and so is a
// character device (-json /dev/null -csv /dev/null), which is written
// through, never replaced (internal/atomicfile).
func checkOutputs(cmd string, outputs, inputs []namedFile) error {
	type seen struct {
		namedFile
		fi os.FileInfo
	}
	var ins []seen
	for _, in := range inputs {
		if in.path == "" {
			continue
		}
		if fi, err := os.Stat(in.path); err == nil {
			ins = append(ins, seen{in, fi})
		}
	}
	for i, out := range outputs {
		if out.path == "" || isCharDevice(out.path) {
			continue
		}
		for _, o := range outputs[:i] {
			if o.path != "" && filepath.Clean(o.path) == filepath.Clean(out.path) {
				return fmt.Errorf("%s: -%s and -%s name the same file %s", cmd, o.flag, out.flag, out.path)
			}
		}
		fi, err := os.Stat(out.path)
		if err != nil {
			continue
		}
		for _, in := range ins {
			if os.SameFile(fi, in.fi) {
				return fmt.Errorf("%s: -%s %s is the input file %s (-%s); tempora does not overwrite its input, give another output file", cmd, out.flag, out.path, in.path, in.flag)
			}
		}
		ins = append(ins, seen{out, fi})
	}
	return nil
}

// isCharDevice says whether path is a character device (or a link to one).
func isCharDevice(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// checkOutputs refuses -json, -csv and -attributions files that explain reads (see
// checkOutputs).
func (f *explainFlags) checkOutputs() error {
	outs, ins := f.files()
	return checkOutputs("explain", outs, ins)
}

// files returns the output files of explain and the files it reads.
func (f *explainFlags) files() (outputs, inputs []namedFile) {
	outputs = []namedFile{{"json", f.jsonOut}, {"csv", f.csvOut}, {"attributions", f.attributions}}
	inputs = []namedFile{{"data", f.data}, {"targets", f.targets}, {"feature-names", f.names}, {"mask", f.input.mask}, {"output-names", f.outputs.names}}
	if h, ok := f.params["hierarchy"]; ok {
		inputs = append(inputs, namedFile{"hierarchy", h.text})
	}
	if f.problem != "" {
		for _, name := range []string{synth.ProblemFile, synth.DataFile, synth.TargetsFile, synth.ModelFile, synth.TruthFile} {
			inputs = append(inputs, namedFile{"problem", filepath.Join(f.problem, name)})
		}
	}
	return outputs, inputs
}
