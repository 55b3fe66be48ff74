package procmodel

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/examplemodel"
)

// TestServeInProcess drives Serve through pipes with hand-built frames:
// hello, a good request, a request the model rejects, a malformed request.
func TestServeInProcess(t *testing.T) {
	terms, _ := examplemodel.ParseTerms("1:0:2:2")
	model := &examplemodel.Model{Terms: terms, Bias: 1}
	x := randomTensor(4, 2, 3, "serve")

	var in bytes.Buffer
	in.Write(appendRequest(nil, x))
	in.Write(appendRequest(nil, randomTensor(2, 1, 3, "serve-bad"))) // no feature 1
	bad := appendRequest(nil, x)
	copy(bad, "XXXX")
	in.Write(bad)
	var out bytes.Buffer
	err := Serve(&in, &out, model)
	if err == nil || !strings.Contains(err.Error(), "bad request magic") {
		t.Errorf("Serve: got %v, want a bad-magic error", err)
	}

	r := bytes.NewReader(out.Bytes())
	var hello [helloSize]byte
	io.ReadFull(r, hello[:])
	if string(hello[:4]) != helloMagic || binary.LittleEndian.Uint32(hello[4:]) != Version {
		t.Fatalf("hello frame %q", hello)
	}
	readResponse := func() (uint32, []byte) {
		var h [responseHeaderSize]byte
		if _, err := io.ReadFull(r, h[:]); err != nil || string(h[:4]) != responseMagic {
			t.Fatalf("response header %q: %v", h, err)
		}
		status, n := binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
		size := n
		if status == statusOK {
			size *= 8
		}
		body := make([]byte, size)
		io.ReadFull(r, body)
		return status, body
	}
	status, body := readResponse()
	want := make([]float64, x.M)
	model.Predict(want, x)
	if status != statusOK || len(body) != 8*x.M {
		t.Fatalf("first answer: status %d, %d bytes", status, len(body))
	}
	got := make([]float64, x.M)
	getFloats(got, body)
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Errorf("instance %d: served %v, want %v", i, got[i], want[i])
		}
	}
	for k, wantMsg := range []string{"does not fit data", "bad request magic"} {
		status, body = readResponse()
		if status != statusError || !strings.Contains(string(body), wantMsg) {
			t.Errorf("error answer %d: status %d, message %q, want %q", k, status, body, wantMsg)
		}
	}
	if r.Len() != 0 {
		t.Errorf("%d unexpected bytes after the answers", r.Len())
	}
}

// TestRequestLayout pins the byte layout documented in docs/protocol.md.
func TestRequestLayout(t *testing.T) {
	x, _ := tempora.TensorFrom(1, 1, 2, []float64{1, -2})
	got := appendRequest(nil, x)
	want := []byte{
		'T', 'M', 'P', 'Q', 1, 0, 0, 0, // magic, version
		1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, // M, D, L
		0, 0, 0, 0, 0, 0, 0xf0, 0x3f, // 1.0
		0, 0, 0, 0, 0, 0, 0, 0xc0, // -2.0
	}
	if !bytes.Equal(got, want) {
		t.Errorf("request frame\n got % x\nwant % x", got, want)
	}
}

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string // nil: error
	}{
		{"python3 serve_model.py", []string{"python3", "serve_model.py"}},
		{"  python3\t-u  model.py --task classification ", []string{"python3", "-u", "model.py", "--task", "classification"}},
		{`python3 "my model.py" --name 'a b' x\ y`, []string{"python3", "my model.py", "--name", "a b", "x y"}},
		{`a "say \"hi\" \n" 'it''s'`, []string{"a", `say "hi" \n`, "its"}},
		{`a "" ''`, []string{"a", "", ""}},
		{`a 'open`, nil},
		{`a "open`, nil},
		{`a \`, nil},
		{"   ", nil},
	} {
		got, err := SplitCommand(tc.line)
		if tc.want == nil {
			if err == nil {
				t.Errorf("SplitCommand(%q) = %q, want an error", tc.line, got)
			}
			continue
		}
		if err != nil || strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") || len(got) != len(tc.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
}
