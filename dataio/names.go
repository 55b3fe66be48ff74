package dataio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
// KindFeatureNames locating the name (its position, from 0).

// ReadFeatureNames reads feature names from a text file, one name per line
// (surrounding spaces trimmed; blank lines at the end ignored). It returns an
// error naming the file and line for a blank name, a name given twice or a
// name with a control character (a carriage return left by old Mac line
// endings, a tab), or for a file without names.
func ReadFeatureNames(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataio: %w", err)
	}
	defer f.Close()
	names, err := readFeatureNames(f)
	if err != nil {
		return nil, fmt.Errorf("dataio: %s: %w", path, err)
	}
	return names, nil
}

func readFeatureNames(r io.Reader) ([]string, error) {
	names, err := readLines(r)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, tempora.NewDataError(tempora.KindFeatureNames, errors.New("no feature names"))
	}
	seen := make(map[string]int, len(names))
	for k, s := range names {
		if s == "" {
			return nil, nameError(k, fmt.Errorf("line %d: blank feature name", k+1))
		}
		if err := checkName(s); err != nil {
			return nil, nameError(k, fmt.Errorf("line %d: %w", k+1, err))
		}
		if p, ok := seen[s]; ok {
			return nil, nameError(k, fmt.Errorf("lines %d and %d both name %q", p+1, k+1, s))
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
func checkName(s string) error {
	switch {
	case s == "":
		return errors.New("feature name is empty")
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("feature name %q has surrounding white space", s)
	case strings.ContainsFunc(s, unicode.IsControl):
		return fmt.Errorf("feature name %q contains a control character", s)
	case strings.ContainsRune(s, '\ufeff'):
		return fmt.Errorf("feature name %q contains a byte-order mark", s)
	}
	return nil
}

// maxNamesJSON bounds the size of a JSON names file (a million names of
// 64 bytes), so that a wrong file fails before it is read whole.
const maxNamesJSON = 64 << 20

// ReadFeatureNamesJSON reads feature names from a JSON file holding one
// array of strings, ["hr", "bp"], under the rules of ReadFeatureNames
// (positions, not lines, locate a name in its errors).
func ReadFeatureNamesJSON(path string) ([]string, error) {
	b, err := safefile.ReadFile(path, maxNamesJSON, "feature names file")
	if err != nil {
		return nil, fmt.Errorf("dataio: %w", err)
	}
	names, err := featureNamesJSON(b)
	if err != nil {
		return nil, fmt.Errorf("dataio: %s: %w", path, err)
	}
	return names, nil
}

func featureNamesJSON(b []byte) ([]string, error) {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, tempora.NewDataError(tempora.KindFeatureNames, fmt.Errorf("want a JSON array of strings: %w", err))
	}
	if len(names) == 0 {
		return nil, tempora.NewDataError(tempora.KindFeatureNames, errors.New("no feature names"))
	}
	seen := make(map[string]int, len(names))
	for k, s := range names {
		if err := checkName(s); err != nil {
			return nil, nameError(k, fmt.Errorf("name %d: %w", k, err))
		}
		if p, ok := seen[s]; ok {
			return nil, nameError(k, fmt.Errorf("names %d and %d are both %q", p, k, s))
		}
		seen[s] = k
	}
	return names, nil
}

// nameError is err about the feature name at position k.
func nameError(k int, err error) error {
	return tempora.NewDataError(tempora.KindFeatureNames, err).At(-1, k, -1)
}
