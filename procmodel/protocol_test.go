package procmodel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
	"strconv"
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
		'T', 'M', 'P', 'Q', 2, 0, 0, 0, // magic, version
		1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, // M, D, L
		0, 0, 0, 0, 0, 0, 0xf0, 0x3f, // 1.0
		0, 0, 0, 0, 0, 0, 0, 0xc0, // -2.0
	}
	if !bytes.Equal(got, want) {
		t.Errorf("request frame\n got % x\nwant % x", got, want)
	}
}

// TestHelloLayout pins the hello frames documented in docs/protocol.md:
// 28 bytes, holding nothing (zeros) or data of a shape and CRC-32.
func TestHelloLayout(t *testing.T) {
	want := []byte{
		'T', 'M', 'P', 'H', 2, 0, 0, 0, // magic, version
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // H, M, D, L, CRC-32
	}
	if got := appendHello(nil, nil, 1); !bytes.Equal(got, want) {
		t.Errorf("hello frame holding nothing\n got % x\nwant % x", got, want)
	}
	x := &tempora.Tensor{M: 1, D: 1, L: 3, Data: []float64{0, 0.5, -1}}
	want = []byte{
		'T', 'M', 'P', 'H', 2, 0, 0, 0, // magic, version
		1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, // H, M, D, L
		0xf2, 0x87, 0xc9, 0x2a, // CRC-32 0x2ac987f2 (TestTensorCRC)
	}
	if got := appendHello(nil, x, 1); !bytes.Equal(got, want) {
		t.Errorf("hello frame holding x\n got % x\nwant % x", got, want)
	}
}

// TestProtocolDoc checks what docs/protocol.md states of the hello against
// the code: its size, its bytes when it holds nothing, and the refusals of
// a model side of version 1 and of an unknown version, word for word.
func TestProtocolDoc(t *testing.T) {
	b, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	refusal := func(v uint32) string {
		h := appendHello(nil, nil, 1)
		binary.LittleEndian.PutUint32(h[4:], v)
		_, err := readHello(bytes.NewReader(h[:helloHeadSize]), eofText)
		if !errors.Is(err, ErrProtocol) {
			t.Fatalf("version %d: %v, want ErrProtocol", v, err)
		}
		return strings.TrimPrefix(err.Error(), ErrProtocol.Error()+": ")
	}
	hello := strings.Fields(fmt.Sprintf("% x", appendHello(nil, nil, 1)))
	helloK := strings.Fields(fmt.Sprintf("% x", appendHello(nil, nil, 3)))
	for _, want := range []string{
		fmt.Sprintf("# The model process protocol (version %d)", Version),
		fmt.Sprintf("The hello is %d bytes, %d when it announces K.", helloSize, helloSize+helloOutputsSize),
		strings.Join(helloK[:4], " ") + " " + strings.Join(helloK[4:8], " ") + " " + strings.Join(helloK[8:12], " "),
		strings.Join(helloK[28:], " "),
		"| 28 | 4 | u32 | K | O = 1 only: outputs per instance, 2 to 2" + superscript(bits.Len(uint(MaxOutputs))-1) + " |",
		fmt.Sprintf("reads the first %d bytes of the hello", helloHeadSize),
		fmt.Sprintf("reads the rest of the hello (%d bytes)", helloSize-helloHeadSize),
		strings.Join(hello[:4], " ") + " " + strings.Join(hello[4:8], " "),
		refusal(1),
		strings.Replace(refusal(7), "version 7", "version N", 1),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/protocol.md does not state %q", want)
		}
	}
}

// superscript writes n in superscript digits, as the documents write
// powers of two.
func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	var b strings.Builder
	for _, c := range strconv.Itoa(n) {
		b.WriteString(string([]rune(digits)[c-'0']))
	}
	return b.String()
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

// requestHeader returns a request header announcing an m × d × l batch.
func requestHeader(m, d, l uint32) []byte {
	h := make([]byte, requestHeaderSize)
	copy(h, requestMagic)
	le := binary.LittleEndian
	le.PutUint32(h[4:], Version)
	le.PutUint32(h[8:], m)
	le.PutUint32(h[12:], d)
	le.PutUint32(h[16:], l)
	return h
}

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestServeCorruptHeader is the regression test of issue 12, defect 5: a
// request header announcing up to 2^31 values followed by a few bytes used
// to allocate the announced 16 GiB before reading anything. Serve must fail
// on the short stream having allocated no more than its fixed buffers.
func TestServeCorruptHeader(t *testing.T) {
	// Serve's fixed buffers: 64 KiB each way for bufio, and one 256 KiB
	// chunk of raw bytes and of values (chunkValues float64).
	const allocLimit = 4 << 20
	for _, tc := range []struct {
		name    string
		m, d, l uint32
	}{
		{"2^31", 1 << 11, 1 << 10, 1 << 10},
		{"2^31 in L", 1, 1, 1 << 31},
		{"2^28", 1 << 8, 1 << 10, 1 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append(requestHeader(tc.m, tc.d, tc.l), make([]byte, 8*1000+3)...)
			var out bytes.Buffer
			var err error
			n := allocated(func() { err = Serve(bytes.NewReader(in), &out, sumModel) })
			if err == nil || !strings.Contains(err.Error(), "unexpected end of input") {
				t.Errorf("Serve: got %v, want an error about the end of input", err)
			}
			if n > allocLimit {
				t.Errorf("Serve allocated %d bytes for a truncated request, want at most %d", n, allocLimit)
			}
			if out.Len() != helloSize {
				t.Errorf("Serve wrote %d bytes, want only the %d-byte hello", out.Len(), helloSize)
			}
		})
	}
}

// TestServeRejectsBadShape checks that Serve answers a request with M, D or
// L zero, or more than 2^31 values, with an error frame and stops; M = 0
// used to be accepted (issue 12, defect 5).
func TestServeRejectsBadShape(t *testing.T) {
	for _, tc := range []struct {
		m, d, l uint32
		want    string
	}{
		{0, 2, 3, "must be at least 1"},
		{2, 0, 3, "must be at least 1"},
		{2, 3, 0, "must be at least 1"},
		{1 << 11, 1 << 10, 1<<10 + 1, "more than 2147483648 values"},
		{1<<32 - 1, 1<<32 - 1, 1<<32 - 1, "more than 2147483648 values"},
	} {
		in := append(requestHeader(tc.m, tc.d, tc.l), make([]byte, 8*64)...)
		var out bytes.Buffer
		err := Serve(bytes.NewReader(in), &out, sumModel)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d×%d×%d: Serve returned %v, want an error containing %q", tc.m, tc.d, tc.l, err, tc.want)
		}
		body := out.Bytes()[helloSize:]
		if len(body) < responseHeaderSize || string(body[:4]) != responseMagic || binary.LittleEndian.Uint32(body[4:]) != statusError ||
			!strings.Contains(string(body[responseHeaderSize:]), tc.want) {
			t.Errorf("%d×%d×%d: answer %q, want an error frame containing %q", tc.m, tc.d, tc.l, body, tc.want)
		}
	}
}

// TestReadAnswerAllocation checks the parent's side: an error answer
// announcing the largest message allowed, cut short, costs no more than
// what arrived, and an answer with the wrong count allocates nothing.
func TestReadAnswerAllocation(t *testing.T) {
	h := make([]byte, responseHeaderSize)
	copy(h, responseMagic)
	binary.LittleEndian.PutUint32(h[4:], statusError)
	binary.LittleEndian.PutUint32(h[8:], maxMessage)
	in := append(h, "Traceback"...)
	var err error
	n := allocated(func() { _, err = readAnswer(bytes.NewReader(in), nil, make([]float64, 3), 1, eofText) })
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "9 of 1048576 bytes") {
		t.Errorf("readAnswer: got %v, want ErrExited after 9 of 1048576 bytes", err)
	}
	if n > 64<<10 {
		t.Errorf("readAnswer allocated %d bytes for a 9-byte message", n)
	}

	binary.LittleEndian.PutUint32(h[4:], statusOK)
	binary.LittleEndian.PutUint32(h[8:], 1<<31)
	n = allocated(func() { _, err = readAnswer(bytes.NewReader(h), nil, make([]float64, 3), 1, eofText) })
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "2147483648 predictions for a batch of 3") {
		t.Errorf("readAnswer: got %v, want ErrProtocol about the count", err)
	}
	if n > 4<<10 {
		t.Errorf("readAnswer allocated %d bytes for a wrong count", n)
	}
}
