package record

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestChecksumCanonical checks the canonical form docs/records.md
// specifies: layout and member order do not matter, numbers are taken as
// written, the checksum member is left out, strings are escaped as Go's
// encoding/json escapes them.
func TestChecksumCanonical(t *testing.T) {
	canon := func(s string) string {
		c, err := canonical([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return string(c)
	}
	for _, c := range []struct{ in, want string }{
		{`{"b": 1, "a": [1.50, {"z": true, "y": null}], "checksum": "x"}`, `{"a":[1.50,{"y":null,"z":true}],"b":1}`},
		{"{\n \"s\": \"<&>\u2028\xff\"\n}", "{\"s\":\"\\u003c\\u0026\\u003e\\u2028\ufffd\"}"},
	} {
		if got := canon(c.in); got != c.want {
			t.Errorf("canonical(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	a, _ := Checksum([]byte(`{"b": 1, "a": 2}`))
	b, _ := Checksum([]byte("{\"a\":2,\n\"b\":1, \"checksum\": \"sha256:00\"}"))
	if a != b || !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Errorf("checksums %s and %s", a, b)
	}
	// The digest of a known content, so that other implementations can
	// check theirs: sha256 of `{"a":2,"b":1}`.
	if want := "sha256:d3626ac30a87e6f7a6428233b3c68299976865fa5508e4267c5415c76af7a772"; a != want {
		t.Errorf("checksum %s, want %s", a, want)
	}
}

// TestReadVersions: a version 1 record (no checksum) reads as before; a
// version 2 record must carry its checksum, and a version 1 record must not.
func TestReadVersions(t *testing.T) {
	dir := t.TempDir()
	const body = `"suite": "s", "params": [], "model": 0, "seed": 1, "method": "TIME", "metrics": [{"name": "feature-power", "value": 0.6}], "warnings": []`
	cases := []struct{ content, want string }{
		{`{"format": "tempora-record/1", ` + body + `}`, ""},
		{`{"format": "tempora-record/1", ` + body + `, "checksum": "sha256:00"}`, "a tempora-record/1 record has no checksum"},
		{`{"format": "tempora-record/2", ` + body + `}`, "no checksum (a tempora-record/2 record has one; run tempora rehash"},
		{`{"format": "tempora-record/2", ` + body + `, "checksum": "md5:00"}`, `does not start with "sha256:"`},
		{`{"format": "tempora-record/2", ` + body + `, "checksum": "sha256:00"}`, "checksum mismatch"},
		{`{"format": "tempora-record/3", ` + body + `}`, `format "tempora-record/3", want "tempora-record/2" (or the older "tempora-record/1")`},
	}
	for i, c := range cases {
		p := filepath.Join(dir, strconv.Itoa(i)+".json")
		if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Read(p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.content, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "record: "+p+": ")):
			t.Errorf("%s: error %v, want one naming the file and containing %q", c.content, err, c.want)
		}
		if c.want == "" {
			if v, _ := r.Get("feature-power"); v != 0.6 {
				t.Errorf("feature-power %v", v)
			}
			// Rehash upgrades it to version 2 with a checksum.
			if changed, err := Rehash(p); err != nil || !changed {
				t.Fatalf("Rehash: %v %v", changed, err)
			}
			r, err := Read(p)
			if err != nil || r.Format != Format || !strings.HasPrefix(r.Checksum, "sha256:") {
				t.Errorf("after Rehash: %+v, %v", r, err)
			}
		}
	}
}
