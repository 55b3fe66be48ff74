package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tempora-dev/tempora/internal/atomicfile"
)

// FormatV1 is the format of records written before records carried a
// checksum. Read accepts them as they are: they have no checksum to verify
// (docs/records.md, "Checksum").
const FormatV1 = "tempora-record/1"

// checksumPrefix starts every record checksum: the algorithm, then the
// digest in lower-case hexadecimal.
const checksumPrefix = "sha256:"

// ErrChecksum is the cause of the error Read returns for a record whose
// content does not match its checksum: it was changed after it was
// written.
var ErrChecksum = errors.New("checksum mismatch")

// Checksum returns the checksum of the record file content b: "sha256:"
// and the SHA-256 digest, in hexadecimal, of b's canonical JSON without its
// "checksum" member. The canonical JSON of a value has no insignificant
// white space, object members sorted by key (byte order), numbers exactly
// as written, and strings encoded as Go's encoding/json encodes them
// (docs/records.md, "Checksum"). It therefore does not depend on layout,
// member order or fields this version does not know.
func Checksum(b []byte) (string, error) {
	c, err := canonical(b)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return checksumPrefix + hex.EncodeToString(sum[:]), nil
}

// canonical returns the canonical JSON of the object b without its
// "checksum" member.
func canonical(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	delete(v, "checksum")
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	if err := enc.Encode(v); err != nil { // maps are encoded with sorted keys
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// verify checks the checksum of a record decoded as r from b: records of
// this format must carry a matching one; records of FormatV1 have none.
func verify(r *Record, b []byte) error {
	if r.Format == FormatV1 {
		if r.Checksum != "" {
			return fmt.Errorf("a %s record has no checksum, but this one has %q", FormatV1, r.Checksum)
		}
		return nil
	}
	if r.Checksum == "" {
		return fmt.Errorf("no checksum (a %s record has one; run tempora rehash if you wrote or edited it on purpose)", Format)
	}
	if !strings.HasPrefix(r.Checksum, checksumPrefix) {
		return fmt.Errorf("checksum %.80q does not start with %q", r.Checksum, checksumPrefix)
	}
	sum, err := Checksum(b)
	if err != nil {
		return err
	}
	if sum != r.Checksum {
		return fmt.Errorf("%w: the record was changed after it was written (run tempora rehash if you edited it on purpose)", ErrChecksum)
	}
	return nil
}

// seal sets the checksum of r and returns its file content.
func seal(r *Record) ([]byte, error) {
	r.Checksum = ""
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return nil, err
	}
	sum, err := Checksum(b)
	if err != nil {
		return nil, err
	}
	r.Checksum = sum
	b, err = json.MarshalIndent(r, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Rehash rewrites the checksum of the record file at path after checking
// everything else Read checks, upgrading a FormatV1 record to Format: it is
// how a user says that a record was edited on purpose. It reports whether
// the file changed.
func Rehash(path string) (bool, error) {
	b, err := readBytes(path)
	if err != nil {
		return false, err
	}
	r, err := decode(path, b)
	if err != nil {
		return false, err
	}
	if r.Format == Format && verify(r, b) == nil {
		return false, nil // the file's own bytes match its checksum
	}
	r.Format = Format
	nb, err := seal(r)
	if err == nil {
		nb, err = keepUnknown(nb, b)
	}
	if err != nil {
		return false, fmt.Errorf("record: %s: %w", path, err)
	}
	if bytes.Equal(nb, b) {
		return false, nil
	}
	return true, atomicfile.WriteBytes(path, nb)
}

// keepUnknown returns the sealed record nb with the members of the record
// file b that this version does not know (a newer version's, or added by
// hand) kept, and a checksum that covers them, as Read verifies it: the
// members then in key order. nb as it is when b has none.
func keepUnknown(nb, b []byte) ([]byte, error) {
	var known, all map[string]json.RawMessage
	if err := json.Unmarshal(nb, &known); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	extra := false
	for k, v := range all {
		if _, ok := known[k]; !ok {
			known[k], extra = v, true
		}
	}
	if !extra {
		return nb, nil
	}
	delete(known, "checksum")
	body, err := json.Marshal(known)
	if err != nil {
		return nil, err
	}
	sum, err := Checksum(body)
	if err != nil {
		return nil, err
	}
	known["checksum"], _ = json.Marshal(sum)
	out, err := json.MarshalIndent(known, "", " ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
