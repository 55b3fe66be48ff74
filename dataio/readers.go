package dataio

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tempora-dev/tempora"
)

// The reader table. A dataset's files (Files) are read by the reader of
// their format, which their extension (in any case) chooses: formats is the
// one map from extensions to readers. A format holds some of a dataset's
// inputs, not all: a nil reader is an input the format cannot hold, and a
// file of such an extension is refused with the extensions that can.

// format is one file format's readers, one per input of a dataset.
type format struct {
	// data reads the data tensor; names are the feature names given apart
	// (nil for none), which a format naming its features matches against
	// its own. It returns the tensor with the names in use.
	data    func(path string, names []string) (*tempora.Tensor, []string, error)
	targets func(path string) ([]float64, error)
	// outputTargets reads the targets of a model with several outputs,
	// K per instance (outputs.go): the values instance-major, K, and the
	// output names the file gives (names: those given apart, nil for
	// none, which a format naming its outputs matches against its own).
	outputTargets func(path string, names []string) ([]float64, int, []string, error)
	// names reads a list of names: feature names, or output names.
	names func(path string, list nameList) ([]string, error)
	mask  func(path string, m, d, l int) ([]bool, error)
}

// formats maps an extension, in lower case, to its format's readers.
var formats = map[string]format{
	".npy":  {data: readDataNPYNames, targets: readTargetsNPY, outputTargets: readOutputTargetsNPY, mask: ReadMaskNPY},
	".csv":  {data: ReadDataCSV, targets: ReadVectorCSV, outputTargets: readOutputTargetsCSV, names: readNamesFile},
	".txt":  {data: ReadDataCSV, targets: ReadVectorCSV, outputTargets: readOutputTargetsCSV, names: readNamesFile},
	".json": {names: readNamesJSONFile},
}

// otherFormat is the format of a file whose extension formats does not
// list: names one per line (a file "names" or "names.lst"), as before
// names had a table.
var otherFormat = format{names: readNamesFile}

// readDataNPYNames is ReadDataNPY as a data reader: a .npy file names no
// features, so the names given apart are those in use.
func readDataNPYNames(path string, names []string) (*tempora.Tensor, []string, error) {
	x, err := ReadDataNPY(path)
	return x, names, err
}

// lookup returns the reader pick takes from the format of path, or an error
// naming what the file holds (in "unknown data file extension") and the
// extensions whose formats can hold it.
func lookup[R any](path, what string, pick func(format) (R, bool)) (R, error) {
	ext := strings.ToLower(filepath.Ext(path))
	f, ok := formats[ext]
	if !ok {
		f = otherFormat
	}
	if r, ok := pick(f); ok {
		return r, nil
	}
	var want []string
	for e, g := range formats {
		if _, ok := pick(g); ok {
			want = append(want, e)
		}
	}
	slices.Sort(want)
	list := want[len(want)-1]
	if len(want) > 1 {
		list = strings.Join(want[:len(want)-1], ", ") + " or " + list
	}
	var none R
	return none, fmt.Errorf("dataio: %s: unknown %s file extension %q (want %s)", path, what, ext, list)
}

func dataReader(path string) (func(string, []string) (*tempora.Tensor, []string, error), error) {
	return lookup(path, "data", func(f format) (func(string, []string) (*tempora.Tensor, []string, error), bool) {
		return f.data, f.data != nil
	})
}

func targetsReader(path string) (func(string) ([]float64, error), error) {
	return lookup(path, "targets", func(f format) (func(string) ([]float64, error), bool) { return f.targets, f.targets != nil })
}

func outputTargetsReader(path string) (func(string, []string) ([]float64, int, []string, error), error) {
	return lookup(path, "targets", func(f format) (func(string, []string) ([]float64, int, []string, error), bool) {
		return f.outputTargets, f.outputTargets != nil
	})
}

// namesReader returns the reader of a names file; what says what it names
// ("feature names", "output names") in the error.
func namesReader(path, what string) (func(string, nameList) ([]string, error), error) {
	return lookup(path, what, func(f format) (func(string, nameList) ([]string, error), bool) { return f.names, f.names != nil })
}

func maskReader(path string) (func(string, int, int, int) ([]bool, error), error) {
	return lookup(path, "mask", func(f format) (func(string, int, int, int) ([]bool, error), bool) { return f.mask, f.mask != nil })
}
