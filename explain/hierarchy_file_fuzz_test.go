package explain

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadHierarchyFile writes an arbitrary document into a file and reads
// it with the file reader -hierarchy uses, ReadHierarchyFile. Seeds are
// FuzzParseHierarchy's (testdata/fuzz/FuzzReadHierarchyFile) and below.
// Properties: no panic; the file reader agrees with ParseHierarchy on the
// same bytes (the same hierarchy, or the same one-line error); a
// hierarchy it accepts passes its own validation.
func FuzzReadHierarchyFile(f *testing.F) {
	const names = "heart rate\nbp\nspo2\n3\nna\nk"
	for _, doc := range []string{
		`{"name": "all", "children": [{"name": "vitals", "features": ["heart rate", "3"]}, {"name": "labs", "features": [4, 5]}]}`,
		`[{"name": "a", "features": [0]}, {"name": "b", "features": [1, 2]}]`,
		"\ufeff" + `{"name": "x", "features": ["bp", 1]}`,
		` [] `, "", "\x00", `{"name": "a", "features": [0]} trailing`,
	} {
		f.Add([]byte(doc), names)
		f.Add([]byte(doc), "")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, doc []byte, namesText string) {
		var featureNames []string
		if namesText != "" {
			featureNames = strings.Split(namesText, "\n")
		}
		path := filepath.Join(dir, "h.json")
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := ReadHierarchyFile(path, featureNames)
		want, wantErr := ParseHierarchy(bytes.NewReader(doc), featureNames)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("ReadHierarchyFile: %v; ParseHierarchy: %v", err, wantErr)
		}
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line", err)
			}
			return
		}
		if !reflect.DeepEqual(h, want) {
			t.Fatalf("ReadHierarchyFile and ParseHierarchy read different hierarchies from %q", doc)
		}
		d := -1
		if featureNames != nil {
			d = len(featureNames)
		}
		if err := h.validate(d, featureNames); err != nil {
			t.Fatalf("read hierarchy fails validation: %v", err)
		}
	})
}
