package dataio

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// Feature names are read from a text file, one name per line
// (ReadFeatureNames), or from a JSON array of strings
// (ReadFeatureNamesJSON), which carries any name exactly: a program that
// writes names it has not checked (the Python package) writes JSON, and
// the rules below decide. Either way a name must be non-empty, without
// surrounding white space, control characters or a byte-order mark
// (checkName), and appear once; an error is a *tempora.DataError of kind
// KindFeatureNames locating the name (its position, from 0). Output names
// (of a model with several outputs, tempora.Outputs) are read from the
// same files under the same rules (ReadOutputNames); their errors say
// "output name" and are plain errors.

// nameList says what a list of names names: the noun of its messages, and
// how an error about the name at position k (−1: the whole list) is
// reported.
type nameList struct {
	noun string
	err  func(k int, err error) error
}

// featureList and outputList are the lists of feature and output names.
var (
	featureList = nameList{"feature", func(k int, err error) error {
		de := tempora.NewDataError(tempora.KindFeatureNames, err)
		if k >= 0 {
			de.At(-1, k, -1)
		}
		return de
	}}
	outputList = nameList{"output", func(_ int, err error) error { return err }}
)

// ReadOutputNames reads the output names of a model with several outputs
// from a .json array of strings or a text file of one name per line, as
// ReadFeatureNamesJSON and ReadFeatureNames read feature names.
func ReadOutputNames(path string) ([]string, error) {
	read, err := namesReader(path, "output names")
	if err != nil {
		return nil, err
	}
	return read(path, outputList)
}

// ReadFeatureNames reads feature names from a text file, one name per line
// (surrounding spaces trimmed; blank lines at the end ignored). It returns an
// error naming the file and line for a blank name, a name given twice or a
// name with a control character (a carriage return left by old Mac line
// endings, a tab), or for a file without names.
func ReadFeatureNames(path string) ([]string, error) {
	return readNamesFile(path, featureList)
}

// readNamesFile reads the names of list from a text file, one per line.
func readNamesFile(path string, list nameList) ([]string, error) {
	var names []string
	err := readFile(path, safefile.NamesLimit, "a "+list.noun+" names file", func(r io.Reader) (err error) {
		names, err = readNames(r, list)
		return err
	})
	return names, err
}

func readFeatureNames(r io.Reader) ([]string, error) { return readNames(r, featureList) }

func readNames(r io.Reader, list nameList) ([]string, error) {
	names, err := readLines(r)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, list.err(-1, fmt.Errorf("no %s names", list.noun))
	}
	seen := make(map[string]int, len(names))
	for k, s := range names {
		if s == "" {
			return nil, list.err(k, fmt.Errorf("line %d: blank %s name", k+1, list.noun))
		}
		if err := checkNameOf(s, list.noun); err != nil {
			return nil, list.err(k, fmt.Errorf("line %d: %w", k+1, err))
		}
		if p, ok := seen[s]; ok {
			return nil, list.err(k, fmt.Errorf("lines %d and %d both name %q", p+1, k+1, s))
		}
		seen[s] = k
	}
	return names, nil
}

// checkName returns an error if s cannot be a feature name: empty, with
// surrounding white space (cells and name files are trimmed, so no cell
// could name it), with a control character (a line break or carriage
// return, for instance from old Mac line endings, would corrupt the files
// and tables that show the name) or with a byte-order mark (left inside a
// name by concatenated files; it is invisible, and stripped from the start
// of a file, so the name would not read back).
func checkName(s string) error { return checkNameOf(s, "feature") }

// checkNameOf is checkName for a name of a noun ("feature", "output").
func checkNameOf(s, noun string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s name is empty", noun)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("%s name %q has surrounding white space", noun, s)
	case strings.ContainsFunc(s, unicode.IsControl):
		return fmt.Errorf("%s name %q contains a control character", noun, s)
	case strings.ContainsRune(s, '\ufeff'):
		return fmt.Errorf("%s name %q contains a byte-order mark", noun, s)
	}
	return nil
}

// ReadFeatureNamesJSON reads feature names from a JSON file holding one
// array of strings, ["hr", "bp"], under the rules of ReadFeatureNames
// (positions, not lines, locate a name in its errors).
func ReadFeatureNamesJSON(path string) ([]string, error) {
	return readNamesJSONFile(path, featureList)
}

// readNamesJSONFile reads the names of list from a JSON array of strings.
func readNamesJSONFile(path string, list nameList) ([]string, error) {
	b, err := safefile.ReadFile(path, safefile.NamesLimit, "a "+list.noun+" names file")
	if err != nil {
		return nil, fmt.Errorf("dataio: %w", err)
	}
	names, err := namesJSON(b, list)
	if err != nil {
		return nil, fmt.Errorf("dataio: %s: %w", path, err)
	}
	return names, nil
}

func featureNamesJSON(b []byte) ([]string, error) { return namesJSON(b, featureList) }

func namesJSON(b []byte, list nameList) ([]string, error) {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, list.err(-1, fmt.Errorf("want a JSON array of strings: %w", err))
	}
	if len(names) == 0 {
		return nil, list.err(-1, fmt.Errorf("no %s names", list.noun))
	}
	seen := make(map[string]int, len(names))
	for k, s := range names {
		if err := checkNameOf(s, list.noun); err != nil {
			return nil, list.err(k, fmt.Errorf("name %d: %w", k, err))
		}
		if p, ok := seen[s]; ok {
			return nil, list.err(k, fmt.Errorf("names %d and %d are both %q", p, k, s))
		}
		seen[s] = k
	}
	return names, nil
}
