package procmodel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// Fuzz targets of the two directions of the protocol: Serve reading
// requests (the model's side) and readAnswer reading answers (tempora's
// side), plus SplitCommand. Seeds are in testdata/fuzz/<target>; add more
// with f.Add below. Run one with
//
//	go test ./procmodel/ -run '^$' -fuzz '^FuzzServe$' -fuzztime 1m

// allocSlack is the allocation every call may make whatever its input:
// bufio buffers, one decoding chunk of raw bytes and of values, error text.
const allocSlack = 2 << 20

// requestStream returns the request frames of xs, concatenated.
func requestStream(xs ...*tempora.Tensor) []byte {
	var b []byte
	for _, x := range xs {
		b = appendRequest(b, x)
	}
	return b
}

// FuzzServe feeds Serve an arbitrary request stream. Properties: no panic;
// memory bounded by the input's length, not by the shapes headers announce;
// the output is the hello frame followed by well-formed answers, one per
// complete request, each with the predictions of the model on exactly the
// values sent (checked against an independent decoding of the input); Serve
// returns nil exactly when the input ends at a frame boundary after valid
// requests; its error is one line.
func FuzzServe(f *testing.F) {
	f.Add(requestStream(randomTensor(3, 2, 4, "fuzz")))
	f.Add(requestStream(randomTensor(1, 1, 1, "a"), randomTensor(5, 3, 2, "b")))
	f.Add(requestStream()) // no request: EOF right after the hello
	f.Add(requestHeader(0, 2, 3))
	f.Add(requestHeader(1<<11, 1<<10, 1<<10))
	f.Add(append(requestHeader(2, 1, 1), make([]byte, 12)...))
	// Resident data, then a block request; a request of version 1, which
	// is refused.
	x := randomTensor(2, 2, 3, "fuzz2")
	var blocks bytes.Buffer
	writeResident(&blocks, nil, x, -1)
	b := []resident.Block{{Lo: 0, Hi: 2, Features: []int{1}, Start: 0, End: 2, Values: make([]float64, 6)}}
	writeBlocks(&blocks, nil, b, 2, 6, nil, 0)
	f.Add(blocks.Bytes())
	v1 := requestStream(x)
	binary.LittleEndian.PutUint32(v1[4:], 1)
	f.Add(v1)
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		var err error
		n := allocated(func() { err = Serve(bytes.NewReader(in), &out, sumModel) })
		if limit := uint64(allocSlack + 16*len(in)); n > limit {
			t.Fatalf("Serve allocated %d bytes for %d bytes of input (limit %d)", n, len(in), limit)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("error is not one line: %q", err)
		}

		// Decode the input independently: complete, valid requests,
		// and whether the input ends cleanly after them.
		var want [][]float64
		clean := false
		for r := in; ; {
			if len(r) == 0 {
				clean = true
				break
			}
			if len(r) >= 4 && (string(r[:4]) == residentMagic || string(r[:4]) == blocksMagic) {
				// These frames are checked by TestServeHostileBlocks
				// and the round trips; here only the properties above
				// (no panic, bounded memory, one-line errors) hold.
				return
			}
			if len(r) < requestHeaderSize || string(r[:4]) != requestMagic {
				break
			}
			if binary.LittleEndian.Uint32(r[4:]) != Version {
				break
			}
			m, d, l := uint64(binary.LittleEndian.Uint32(r[8:])), uint64(binary.LittleEndian.Uint32(r[12:])), uint64(binary.LittleEndian.Uint32(r[16:]))
			if m == 0 || d == 0 || l == 0 || d > maxValues/m || l > maxValues/(m*d) || uint64(len(r)-requestHeaderSize) < 8*m*d*l {
				break
			}
			vals := r[requestHeaderSize : requestHeaderSize+8*m*d*l]
			pred := make([]float64, m)
			for i := range pred {
				for k := range d * l {
					pred[i] += math.Float64frombits(binary.LittleEndian.Uint64(vals[8*(uint64(i)*d*l+k):]))
				}
			}
			want = append(want, pred)
			r = r[requestHeaderSize+8*m*d*l:]
		}
		if (err == nil) != clean {
			t.Fatalf("Serve returned %v on an input that ends cleanly: %v", err, clean)
		}

		o := out.Bytes()
		if len(o) < helloSize || !bytes.Equal(o[:helloSize], appendHello(nil, nil, 1)) {
			t.Fatalf("output does not start with the hello frame of a model side holding no data: %q", o)
		}
		checkAnswers(t, o[helloSize:], want, err)
	})
}

// FuzzServeOutputs feeds ServeOutputs, a model side of K = 2 to 4 outputs
// per instance, an arbitrary request stream. Properties: those of
// FuzzServe, with the hello announcing K and each answer carrying the
// model's M·K predictions, instance-major.
func FuzzServeOutputs(f *testing.F) {
	f.Add(requestStream(randomTensor(3, 2, 4, "fuzz")), uint8(0))
	f.Add(requestStream(randomTensor(1, 1, 1, "a"), randomTensor(5, 3, 2, "b")), uint8(1))
	f.Add(requestStream(), uint8(2))
	f.Add(requestHeader(1<<30, 1, 1), uint8(2))
	x := randomTensor(2, 2, 3, "fuzz2")
	var blocks bytes.Buffer
	writeResident(&blocks, nil, x, -1)
	b := []resident.Block{{Lo: 0, Hi: 2, Features: []int{1}, Start: 0, End: 2, Values: make([]float64, 6)}}
	writeBlocks(&blocks, nil, b, 2, 6, nil, 0)
	f.Add(blocks.Bytes(), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, kb uint8) {
		k := 2 + int(kb)%3
		model := outputsModel(k)
		var out bytes.Buffer
		var err error
		n := allocated(func() { err = ServeOutputs(bytes.NewReader(in), &out, model, k) })
		if limit := uint64(allocSlack + 16*len(in)); n > limit {
			t.Fatalf("ServeOutputs allocated %d bytes for %d bytes of input (limit %d)", n, len(in), limit)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("error is not one line: %q", err)
		}
		var want [][]float64
		clean := false
		for r := in; ; {
			if len(r) == 0 {
				clean = true
				break
			}
			if len(r) >= 4 && (string(r[:4]) == residentMagic || string(r[:4]) == blocksMagic) {
				return // as in FuzzServe
			}
			if len(r) < requestHeaderSize || string(r[:4]) != requestMagic || binary.LittleEndian.Uint32(r[4:]) != Version {
				break
			}
			m, d, l := uint64(binary.LittleEndian.Uint32(r[8:])), uint64(binary.LittleEndian.Uint32(r[12:])), uint64(binary.LittleEndian.Uint32(r[16:]))
			if m == 0 || d == 0 || l == 0 || d > maxValues/m || l > maxValues/(m*d) || uint64(len(r)-requestHeaderSize) < 8*m*d*l {
				break
			}
			x := &tempora.Tensor{M: int(m), D: int(d), L: int(l), Data: make([]float64, m*d*l)}
			for i := range x.Data {
				x.Data[i] = math.Float64frombits(binary.LittleEndian.Uint64(r[requestHeaderSize+8*i:]))
			}
			pred := make([]float64, x.M*k)
			model(pred, x)
			want = append(want, pred)
			r = r[requestHeaderSize+8*m*d*l:]
		}
		if (err == nil) != clean {
			t.Fatalf("ServeOutputs returned %v on an input that ends cleanly: %v", err, clean)
		}
		o := out.Bytes()
		hello := appendHello(nil, nil, k)
		if !bytes.HasPrefix(o, hello) {
			t.Fatalf("output does not start with the hello frame announcing %d outputs: %q", k, o)
		}
		checkAnswers(t, o[len(hello):], want, err)
	})
}

// checkAnswers checks a model side's output after its hello frame: one
// answer frame of predictions per valid request (want, in order), then
// nothing, or one error frame with the error the model side returned for
// a malformed header (a truncated one gets no answer).
func checkAnswers(t *testing.T, o []byte, want [][]float64, err error) {
	t.Helper()
	for a, pred := range want {
		if len(o) < responseHeaderSize || string(o[:4]) != responseMagic || binary.LittleEndian.Uint32(o[4:]) != statusOK {
			t.Fatalf("answer %d: %q, want predictions", a, o)
		}
		if c := binary.LittleEndian.Uint32(o[8:]); int(c) != len(pred) || len(o) < responseHeaderSize+8*len(pred) {
			t.Fatalf("answer %d: count %d, %d bytes, want %d predictions", a, c, len(o), len(pred))
		}
		for i, p := range pred {
			if got := binary.LittleEndian.Uint64(o[responseHeaderSize+8*i:]); got != math.Float64bits(p) {
				t.Fatalf("answer %d, prediction %d: %v, want %v", a, i, math.Float64frombits(got), p)
			}
		}
		o = o[responseHeaderSize+8*len(pred):]
	}
	if len(o) > 0 {
		if err == nil || len(o) < responseHeaderSize || string(o[:4]) != responseMagic || binary.LittleEndian.Uint32(o[4:]) != statusError ||
			int(binary.LittleEndian.Uint32(o[8:])) != len(o)-responseHeaderSize || string(o[responseHeaderSize:]) != err.Error() {
			t.Fatalf("after %d answers: %q, want nothing or an error frame with %v", len(want), o, err)
		}
	}
}

// answerFrame returns an answer frame with the given status, count and
// body.
func answerFrame(status, count uint32, body []byte) []byte {
	h := make([]byte, responseHeaderSize, responseHeaderSize+len(body))
	copy(h, responseMagic)
	binary.LittleEndian.PutUint32(h[4:], status)
	binary.LittleEndian.PutUint32(h[8:], count)
	return append(h, body...)
}

// FuzzReadAnswer feeds tempora's side an arbitrary answer to a request of
// m instances. Properties: no panic; memory bounded by the input; every
// error wraps exactly one of ErrExited, ErrProtocol and ErrModel, and only
// a model's own message may span lines; success means the input starts
// with an OK frame of m predictions, decoded bit for bit.
func FuzzReadAnswer(f *testing.F) {
	pred := []byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f} // 0.5
	f.Add(answerFrame(statusOK, 1, pred), uint16(1))
	f.Add(answerFrame(statusOK, 2, append(pred, pred...)), uint16(2))
	f.Add(answerFrame(statusOK, 3, pred), uint16(3))
	f.Add(answerFrame(statusError, 9, []byte("bad batch")), uint16(4))
	f.Add(answerFrame(statusError, maxMessage+1, nil), uint16(1))
	f.Add(answerFrame(7, 0, nil), uint16(1))
	f.Add([]byte("loss: 0.25 accuracy 0.9\n"), uint16(1))
	f.Fuzz(func(t *testing.T, in []byte, m uint16) {
		dst := make([]float64, int(m)%1024+1)
		var err error
		n := allocated(func() { _, err = readAnswer(bytes.NewReader(in), nil, dst, 1, eofText) })
		if limit := uint64(allocSlack + 4*len(in)); n > limit {
			t.Fatalf("readAnswer allocated %d bytes for %d bytes of input (limit %d)", n, len(in), limit)
		}
		if err != nil {
			kinds := 0
			for _, e := range []error{ErrExited, ErrProtocol, ErrModel} {
				if errors.Is(err, e) {
					kinds++
				}
			}
			if kinds != 1 {
				t.Fatalf("error %q wraps %d of the sentinel errors, want 1", err, kinds)
			}
			if !errors.Is(err, ErrModel) && strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error is not one line: %q", err)
			}
			return
		}
		if len(in) < responseHeaderSize+8*len(dst) || string(in[:4]) != responseMagic ||
			binary.LittleEndian.Uint32(in[4:]) != statusOK || int(binary.LittleEndian.Uint32(in[8:])) != len(dst) {
			t.Fatalf("readAnswer accepted %q for %d instances", in, len(dst))
		}
		for i, p := range dst {
			if math.Float64bits(p) != binary.LittleEndian.Uint64(in[responseHeaderSize+8*i:]) {
				t.Fatalf("prediction %d decoded as %v", i, p)
			}
		}
	})
}

// countingReader is a reader that counts the bytes read from it.
type countingReader struct {
	r *bytes.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzReadHello feeds tempora's side an arbitrary hello frame. Properties:
// no panic; every error wraps exactly one of ErrExited and ErrProtocol and
// is one line; a hello of another version than 2 is refused having read
// its first 8 bytes only (an old model side sends no more, and waits), and
// version 1 with an upgrade hint; success means the input starts with a
// hello of version 2 whose flags are H + 2·O (0 to 3), whose held data
// fields are consistent (H = 0 and zeros, or H = 1 and a usable shape),
// and, with O = 1, whose K is 2 to MaxOutputs, decoded as written, having
// read exactly its 28 bytes (32 with O = 1: a hello without O is never
// read further).
func FuzzReadHello(f *testing.F) {
	f.Add(appendHello(nil, nil, 1))
	f.Add(appendHello(nil, randomTensor(3, 2, 4, "hello"), 1))
	f.Add(appendHello(nil, nil, 3))
	f.Add(appendHello(nil, randomTensor(3, 2, 4, "hello"), 5))
	f.Add(appendHello(nil, nil, 1)[:helloHeadSize])
	f.Add(appendHello(nil, nil, 4)[:helloSize])
	for _, v := range []uint32{1, 3, 99} {
		h := appendHello(nil, randomTensor(2, 2, 2, "hello"), 1)
		binary.LittleEndian.PutUint32(h[4:], v)
		f.Add(h)
	}
	f.Add(hostileFrame(helloMagic, []uint32{Version, 2, 1, 1, 1, 0}))
	f.Add(hostileFrame(helloMagic, []uint32{Version, 0, 1, 0, 0, 0}))
	f.Add(hostileFrame(helloMagic, []uint32{Version, 1, 1 << 20, 1 << 10, 1 << 10, 0}))
	f.Add(hostileFrame(helloMagic, []uint32{Version, 2, 0, 0, 0, 0, 1}))
	f.Add(hostileFrame(helloMagic, []uint32{Version, 2, 0, 0, 0, 0, MaxOutputs + 1}))
	f.Add(hostileFrame(helloMagic, []uint32{Version, 4, 0, 0, 0, 0}))
	f.Add([]byte("Loading model...\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := &countingReader{r: bytes.NewReader(in)}
		got, err := readHello(r, eofText)
		le := binary.LittleEndian
		version := uint32(0)
		if len(in) >= helloHeadSize {
			version = le.Uint32(in[4:])
		}
		if err != nil {
			kinds := 0
			for _, e := range []error{ErrExited, ErrProtocol} {
				if errors.Is(err, e) {
					kinds++
				}
			}
			if kinds != 1 || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q: wraps %d of ErrExited and ErrProtocol (want 1), or spans lines", err, kinds)
			}
			if len(in) >= helloHeadSize && string(in[:4]) == helloMagic && version != Version {
				if r.n != helloHeadSize {
					t.Errorf("version %d refused after reading %d bytes, want %d", version, r.n, helloHeadSize)
				}
				if version == 1 && !strings.Contains(err.Error(), "procmodel.Serve") {
					t.Errorf("version 1 refused without the upgrade hint: %v", err)
				}
			}
			return
		}
		if len(in) < helloSize || string(in[:4]) != helloMagic || version != Version {
			t.Fatalf("readHello accepted %q, having read %d bytes", in, r.n)
		}
		flags, m, d, l, crc := le.Uint32(in[8:]), le.Uint32(in[12:]), le.Uint32(in[16:]), le.Uint32(in[20:]), le.Uint32(in[24:])
		held := got.held
		switch h := flags & 1; {
		case flags > 3:
			t.Fatalf("readHello accepted flags %d", flags)
		case h == 0 && m|d|l|crc == 0 && !held.ok:
		case h == 1 && held.ok && m > 0 && d > 0 && l > 0 && uint64(m)*uint64(d)*uint64(l) <= maxValues &&
			held.m == int(m) && held.d == int(d) && held.l == int(l) && held.crc == crc:
		default:
			t.Fatalf("readHello accepted %q as %+v", in, got)
		}
		switch {
		case flags&2 == 0 && r.n == helloSize && got.k == 1:
		case flags&2 != 0 && r.n == helloSize+helloOutputsSize && got.k >= 2 && got.k <= MaxOutputs && got.k == int(le.Uint32(in[helloSize:])):
		default:
			t.Fatalf("readHello accepted %q as K = %d, having read %d bytes", in, got.k, r.n)
		}
	})
}

// FuzzSplitCommand checks that SplitCommand never panics, that its errors
// are one line (the command is quoted), and that the words it returns
// split back to themselves when each is single-quoted.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{
		"python3 serve_model.py", `python3 "my model.py" --name 'a b' x\ y`, `a "say \"hi\" \n" 'it''s'`,
		`a "" ''`, `a 'open`, `a "open`, `a \`, "   ", "\tpython3\n-u\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := SplitCommand(line)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error is not one line: %q", err)
			}
			return
		}
		if len(words) == 0 {
			t.Fatalf("SplitCommand(%q) returned no words and no error", line)
		}
		var b strings.Builder
		for _, w := range words {
			b.WriteString(" '" + strings.ReplaceAll(w, "'", `'\''`) + "'")
		}
		again, err := SplitCommand(b.String())
		if err != nil || strings.Join(again, "\x00") != strings.Join(words, "\x00") || len(again) != len(words) {
			t.Fatalf("SplitCommand(%q) = %q; quoted back as %q it splits to %q, %v", line, words, b.String(), again, err)
		}
	})
}
