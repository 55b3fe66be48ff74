package procmodel

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/tempora-dev/tempora"
)

// Version is the one protocol version (docs/protocol.md): the version of
// every hello frame Start and Attach accept and of every frame either side
// writes. A model that announces version 1 (an older model side, without
// held data or missing values) is refused at start with a message saying
// how to upgrade it; any other version is refused as unknown.
const Version = 2

// Frame magics: four ASCII bytes at the start of every frame.
const (
	helloMagic    = "TMPH" // child → parent, once, when the model is ready
	requestMagic  = "TMPQ" // parent → child: a batch
	responseMagic = "TMPR" // child → parent: predictions or an error
)

// Frame header sizes in bytes.
const (
	helloHeadSize      = 8  // magic, version: read, and the version checked, first
	helloSize          = 28 // magic, version, flags, M, D, L, CRC-32
	helloOutputsSize   = 4  // K, after the CRC-32 of a hello whose flags have O
	requestHeaderSize  = 20 // magic, version, M, D, L
	responseHeaderSize = 12 // magic, status, count
)

// The bits of a hello's flags (docs/protocol.md, "Hello"): H says that
// the model holds data from the start, O that the hello ends with K, the
// number of outputs per instance. A model of one output leaves O unset,
// so its hello is the 28 bytes it always was.
const (
	helloHolds   = 1 // H
	helloOutputs = 2 // O
)

// MaxOutputs is the most outputs per instance a model may announce in its
// hello.
const MaxOutputs = 1 << 20

// Response statuses.
const (
	statusOK    = 0 // count float64 predictions follow
	statusError = 1 // count bytes of a UTF-8 error message follow
)

// maxValues bounds the number of values in one request (2^31, 16 GiB of
// float64) so that a corrupt header fails cleanly; maxMessage bounds the
// length of an error message.
const (
	maxValues  = 1 << 31
	maxMessage = 1 << 20
)

// chunkValues is how many values are encoded or decoded per write or read:
// 256 KiB of float64 stays in cache between the conversion and the copy
// through the pipe, and bounds the buffers whatever the batch size.
const chunkValues = 1 << 15

// writeRequest writes the request frame for x to w, encoding through buf
// (grown as needed and returned for reuse).
func writeRequest(w io.Writer, buf []byte, x *tempora.Tensor) ([]byte, error) {
	buf = grow(buf, requestHeaderSize+8*min(len(x.Data), chunkValues))
	copy(buf, requestMagic)
	le := binary.LittleEndian
	le.PutUint32(buf[4:], Version)
	le.PutUint32(buf[8:], uint32(x.M))
	le.PutUint32(buf[12:], uint32(x.D))
	le.PutUint32(buf[16:], uint32(x.L))
	// The header goes with the first chunk.
	off := requestHeaderSize
	for lo := 0; lo < len(x.Data) || off > 0; lo += chunkValues {
		v := x.Data[lo:min(lo+chunkValues, len(x.Data))]
		putFloats(buf[off:], v)
		if _, err := w.Write(buf[:off+8*len(v)]); err != nil {
			return buf, err
		}
		off = 0
	}
	return buf, nil
}

// readFloats fills dst with little-endian float64 values read from r,
// decoding through buf (grown as needed and returned for reuse). dst is
// allocated by the caller, so its length must come from something already
// trusted (the answer to a request of that size).
func readFloats(r io.Reader, buf []byte, dst []float64) ([]byte, error) {
	buf = grow(buf, 8*min(len(dst), chunkValues))
	for lo := 0; lo < len(dst); lo += chunkValues {
		v := dst[lo:min(lo+chunkValues, len(dst))]
		if _, err := io.ReadFull(r, buf[:8*len(v)]); err != nil {
			return buf, err
		}
		getFloats(v, buf)
	}
	return buf, nil
}

// readValues reads n little-endian float64 values from r into dst[:n],
// reusing dst's capacity and decoding through buf; it returns both, grown as
// needed. n comes from a header the peer wrote, so it is not trusted: beyond
// dst's existing capacity, dst grows one chunk at a time as values actually
// arrive, and a header announcing more values than the stream holds fails
// at the end of the stream having allocated at most about twice what was
// received, never n values up front.
func readValues(r io.Reader, buf []byte, dst []float64, n int) ([]float64, []byte, error) {
	buf = grow(buf, 8*min(n, chunkValues))
	dst = dst[:0]
	for len(dst) < n {
		k := min(n-len(dst), chunkValues)
		if _, err := io.ReadFull(r, buf[:8*k]); err != nil {
			return dst, buf, err
		}
		dst = slices.Grow(dst, k)
		dst = dst[:len(dst)+k]
		getFloats(dst[len(dst)-k:], buf)
	}
	return dst, buf, nil
}

// upgradeHint is what a refusal of an old model side says to do.
const upgradeHint = "serve it with the current tempora Python package (tempora.serve, as examples/python/serve_model.py does) or with procmodel.Serve (docs/protocol.md)"

// hello is what a model's hello frame says: the data it holds from the
// start, and its outputs per instance.
type hello struct {
	held heldData
	k    int // outputs per instance: 1 unless the hello announces K
}

// readHello reads and checks the hello frame and returns what it says about
// the data the model holds and its outputs. The magic and version are read
// first, so that a model of another version is refused without waiting for
// bytes it never sends, and K only when the flags announce it. ended
// describes an error that ends the stream early (end of file) for the
// message; other errors, such as a deadline, are kept as they are.
func readHello(r io.Reader, ended func(error) error) (hello, error) {
	var h [helloSize + helloOutputsSize]byte
	if n, err := io.ReadFull(r, h[:helloHeadSize]); err != nil {
		if n > 0 {
			return hello{}, fmt.Errorf("%w after %d bytes of its hello frame: %w", ErrExited, n, ended(err))
		}
		return hello{}, fmt.Errorf("%w before its hello frame: %w", ErrExited, ended(err))
	}
	if string(h[:4]) != helloMagic {
		return hello{}, fmt.Errorf("%w: expected the hello frame %q, got %q (does the model print to standard output?)", ErrProtocol, helloMagic, h[:helloHeadSize])
	}
	switch v := binary.LittleEndian.Uint32(h[4:]); {
	case v == 1:
		return hello{}, fmt.Errorf("%w: model speaks protocol version 1, which this tempora no longer serves; update it to version %d: %s", ErrProtocol, Version, upgradeHint)
	case v != Version:
		return hello{}, fmt.Errorf("%w: model speaks protocol version %d; this tempora speaks version %d (docs/protocol.md)", ErrProtocol, v, Version)
	}
	if n, err := io.ReadFull(r, h[helloHeadSize:helloSize]); err != nil {
		return hello{}, fmt.Errorf("%w after %d bytes of its hello frame: %w", ErrExited, helloHeadSize+n, ended(err))
	}
	flags := binary.LittleEndian.Uint32(h[helloHeadSize:])
	if flags&^(helloHolds|helloOutputs) != 0 {
		return hello{}, fmt.Errorf("%w: hello has flags %d, want H + 2·O from 0 to 3 (H = 1: the model holds data; O = 1: K outputs follow)", ErrProtocol, flags)
	}
	held, err := parseHeld(flags&helloHolds, h[helloHeadSize+4:helloSize])
	if err != nil {
		return hello{}, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	out := hello{held: held, k: 1}
	if flags&helloOutputs == 0 {
		return out, nil
	}
	if n, err := io.ReadFull(r, h[helloSize:]); err != nil {
		return hello{}, fmt.Errorf("%w after %d bytes of its hello frame, which announces K outputs: %w", ErrExited, helloSize+n, ended(err))
	}
	k := binary.LittleEndian.Uint32(h[helloSize:])
	if k < 2 || k > MaxOutputs {
		return hello{}, fmt.Errorf("%w: hello announces K = %d outputs per instance, want 2 to %d (a model of one output leaves O unset)", ErrProtocol, k, MaxOutputs)
	}
	out.k = int(k)
	return out, nil
}

// readAnswer reads the answer to a request of len(dst)/k instances of k
// outputs each from r into dst, decoding through buf (grown as needed and
// returned for reuse). It never allocates more than the answer holds:
// predictions go into dst, whose length the request fixed, and an error
// message is read as it arrives, up to maxMessage bytes. ended is as for
// readHello.
func readAnswer(r io.Reader, buf []byte, dst []float64, k int, ended func(error) error) ([]byte, error) {
	var h [responseHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return buf, fmt.Errorf("%w before answering a batch of %d instances: %w", ErrExited, len(dst)/k, ended(err))
	}
	if string(h[:4]) != responseMagic {
		return buf, fmt.Errorf("%w: expected an answer frame starting %q, got %q (does the model print to standard output?)", ErrProtocol, responseMagic, h[:])
	}
	status, n := binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
	switch status {
	case statusOK:
		if int64(n) != int64(len(dst)) {
			if k == 1 {
				return buf, fmt.Errorf("%w: %d predictions for a batch of %d instances", ErrProtocol, n, len(dst))
			}
			return buf, fmt.Errorf("%w: %d predictions for a batch of %d instances × %d outputs (want %d)", ErrProtocol, n, len(dst)/k, k, len(dst))
		}
		var err error
		if buf, err = readFloats(r, buf, dst); err != nil {
			return buf, fmt.Errorf("%w in the middle of an answer (%d predictions announced): %w", ErrExited, n, ended(err))
		}
		return buf, nil
	case statusError:
		if n > maxMessage {
			return buf, fmt.Errorf("%w: error message of %d bytes (at most %d allowed)", ErrProtocol, n, maxMessage)
		}
		var msg bytes.Buffer
		if _, err := io.CopyN(&msg, r, int64(n)); err != nil {
			return buf, fmt.Errorf("%w in the middle of an error message (%d of %d bytes): %w", ErrExited, msg.Len(), n, ended(err))
		}
		return buf, fmt.Errorf("%w: %s", ErrModel, modelMessage(msg.Bytes()))
	}
	return buf, fmt.Errorf("%w: unknown status %d", ErrProtocol, status)
}

// modelMessage turns the bytes of an error answer into text: invalid UTF-8
// is replaced and surrounding white space trimmed. Inner line breaks (a
// Python traceback) are kept.
func modelMessage(b []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if s == "" {
		return "(empty message)"
	}
	return s
}

// appendRequest appends the request frame for x to buf (for tests).
func appendRequest(buf []byte, x *tempora.Tensor) []byte {
	var b bytes.Buffer
	writeRequest(&b, nil, x)
	return append(buf, b.Bytes()...)
}

// grow returns buf resliced to length n, reallocated if its capacity is too
// small.
func grow(buf []byte, n int) []byte {
	if cap(buf) < n {
		return make([]byte, n)
	}
	return buf[:n]
}

func putFloats(b []byte, v []float64) {
	b = b[:8*len(v)]
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
}

func getFloats(dst []float64, b []byte) {
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
}

// Serve answers requests read from r with the predictions of m, written to
// w, until r reaches end of file at a frame boundary, when it returns nil.
// It first writes the hello frame (protocol Version, saying that it holds
// no data). It is the Go side of a model program (see examples/gomodel):
// call it as procmodel.Serve(os.Stdin, os.Stdout, m) once the model is
// loaded, and write nothing else to standard output. m returns one
// prediction per instance; ServeOutputs serves a model of several.
//
// Serve keeps resident data (a "TMPD" frame) and answers block requests
// ("TMPP") by applying each block to a working copy of the resident rows,
// calling m.Predict on those rows and restoring them (docs/protocol.md).
// Missing values (NaN) reach m as they are.
//
// An error returned by m.Predict is sent to the parent as an error frame and
// serving continues. A malformed request is answered with an error frame and
// ends serving with an error, since the stream can no longer be trusted; so
// does an I/O error.
func Serve(r io.Reader, w io.Writer, m tempora.Model) error {
	return ServeOutputs(r, w, m, 1)
}

// ServeOutputs is Serve for a model of k outputs per instance (1 to
// MaxOutputs; tempora.Outputs): its hello announces k (unless k is 1, when
// it is Serve's), m.Predict writes x.M·k predictions, instance-major, and
// every answer carries them. A request whose answer would hold more than
// 2³¹ predictions is malformed.
func ServeOutputs(r io.Reader, w io.Writer, m tempora.Model, k int) error {
	if k < 1 || k > MaxOutputs {
		return fmt.Errorf("procmodel: %d outputs per instance, want 1 to %d", k, MaxOutputs)
	}
	br := bufio.NewReaderSize(r, 1<<16)
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(appendHello(nil, nil, k))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("procmodel: writing hello: %w", err)
	}
	var (
		hdr  [blocksHeaderSize]byte
		raw  []byte
		x    tempora.Tensor
		pred []float64
		out  []byte
		res  modelSide
	)
	for {
		if _, err := io.ReadFull(br, hdr[:requestHeaderSize]); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("procmodel: reading request header: %w", err)
		}
		switch string(hdr[:4]) {
		case residentMagic:
			if _, err := io.ReadFull(br, hdr[requestHeaderSize:residentHeaderSize]); err != nil {
				return fmt.Errorf("procmodel: reading a resident data header: %w", truncatedText(err))
			}
			if err := res.read(br, hdr[:residentHeaderSize], nil); err != nil {
				if errors.Is(err, errStream) {
					return err
				}
				writeError(bw, err.Error())
				return err
			}
			if err := writeAnswer(bw, &out, nil); err != nil {
				return err
			}
			continue
		case blocksMagic:
			if _, err := io.ReadFull(br, hdr[requestHeaderSize:]); err != nil {
				return fmt.Errorf("procmodel: reading a block request header: %w", truncatedText(err))
			}
			req, err := res.readBlocks(br, hdr[:], nil)
			if err == nil && req.rows > maxValues/k {
				err = fmt.Errorf("procmodel: block request of %d rows × %d outputs, more than %d predictions", req.rows, k, maxValues)
			}
			if err != nil {
				if errors.Is(err, errStream) {
					return err
				}
				writeError(bw, err.Error())
				return err
			}
			pred = growFloats(pred, req.rows*k)
			if err := res.predict(m, pred, req.blocks, k); err != nil {
				if err := writeError(bw, err.Error()); err != nil {
					return err
				}
				continue
			}
			if err := writeAnswer(bw, &out, pred); err != nil {
				return err
			}
			continue
		}
		m0, d, l, err := parseRequestHeader(hdr[:requestHeaderSize])
		if err == nil && m0 > maxValues/k {
			err = fmt.Errorf("procmodel: request of %d instances × %d outputs, more than %d predictions", m0, k, maxValues)
		}
		if err != nil {
			writeError(bw, err.Error())
			return err
		}
		// The values are read before anything of their announced size is
		// allocated (see readValues): a corrupt header announcing 2^31
		// values fails at the end of the stream instead of exhausting
		// memory.
		n := m0 * d * l
		x.M, x.D, x.L = m0, d, l
		if x.Data, raw, err = readValues(br, raw, x.Data, n); err != nil {
			// The parent is gone or broken: no answer.
			return fmt.Errorf("procmodel: reading the %d values of a %d×%d×%d request: %w", n, m0, d, l, truncatedText(err))
		}
		pred = growFloats(pred, m0*k)
		if err := m.Predict(pred, &x); err != nil {
			if err := writeError(bw, err.Error()); err != nil {
				return err
			}
			continue
		}
		if err := writeAnswer(bw, &out, pred); err != nil {
			return err
		}
	}
}

// writeAnswer writes an answer frame with the predictions pred (none for
// the acknowledgement of resident data), encoding through *out.
func writeAnswer(bw *bufio.Writer, out *[]byte, pred []float64) error {
	*out = grow(*out, responseHeaderSize+8*len(pred))
	b := *out
	copy(b, responseMagic)
	binary.LittleEndian.PutUint32(b[4:], statusOK)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(pred)))
	putFloats(b[responseHeaderSize:], pred)
	bw.Write(b)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("procmodel: writing answer: %w", err)
	}
	return nil
}

func growFloats(v []float64, n int) []float64 {
	if cap(v) < n {
		return make([]float64, n)
	}
	return v[:n]
}

// parseRequestHeader checks a request header and returns its M, D and L:
// each at least 1 (docs/protocol.md), M·D·L at most maxValues.
func parseRequestHeader(h []byte) (m, d, l int, err error) {
	if string(h[:4]) != requestMagic {
		return 0, 0, 0, fmt.Errorf("procmodel: bad request magic %q, want %q", h[:4], requestMagic)
	}
	return parseShape(h, "request")
}

// parseShape checks the version, M, D and L of a header of the request
// layout (a request or resident data, named what).
func parseShape(h []byte, what string) (m, d, l int, err error) {
	le := binary.LittleEndian
	if v := le.Uint32(h[4:]); v != Version {
		return 0, 0, 0, fmt.Errorf("procmodel: %s has protocol version %d, want %d", what, v, Version)
	}
	m, d, l = int(le.Uint32(h[8:])), int(le.Uint32(h[12:])), int(le.Uint32(h[16:]))
	if m == 0 || d == 0 || l == 0 {
		return 0, 0, 0, fmt.Errorf("procmodel: %s has shape %d×%d×%d; M, D and L must be at least 1", what, m, d, l)
	}
	// Each factor is below 2^32, so the checks cannot overflow.
	if d > maxValues/m || l > maxValues/(m*d) {
		return 0, 0, 0, fmt.Errorf("procmodel: %s has shape %d×%d×%d, more than %d values", what, m, d, l, maxValues)
	}
	return m, d, l, nil
}

// truncatedText reports an early end of stream as such.
func truncatedText(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("unexpected end of input")
	}
	return err
}

func writeError(bw *bufio.Writer, msg string) error {
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	var h [responseHeaderSize]byte
	copy(h[:], responseMagic)
	binary.LittleEndian.PutUint32(h[4:], statusError)
	binary.LittleEndian.PutUint32(h[8:], uint32(len(msg)))
	bw.Write(h[:])
	bw.WriteString(msg)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("procmodel: writing error answer: %w", err)
	}
	return nil
}

// checkBatch validates the arguments of a Predict call of a model of k
// outputs per instance.
func checkBatch(dst []float64, x *tempora.Tensor, k int) error {
	if x == nil {
		return errors.New("procmodel: nil batch")
	}
	if err := checkPredictions(len(dst), x.M, k); err != nil {
		return err
	}
	if len(x.Data) != x.M*x.D*x.L {
		return fmt.Errorf("procmodel: batch holds %d values, shape %d×%d×%d needs %d", len(x.Data), x.M, x.D, x.L, x.M*x.D*x.L)
	}
	if x.D <= 0 || x.L <= 0 || x.M*x.D*x.L > maxValues || x.M > maxValues/k {
		return fmt.Errorf("procmodel: cannot send a batch of shape %d×%d×%d", x.M, x.D, x.L)
	}
	return nil
}

// checkPredictions checks that n predictions are asked of m instances of a
// model of k outputs per instance: m·k.
func checkPredictions(n, m, k int) error {
	switch {
	case n == m*k:
		return nil
	case k == 1 && m > 0 && n > m && n%m == 0:
		return fmt.Errorf("procmodel: %d predictions requested for %d instances (%d outputs each), but the model returns one output per instance (its hello announces no K)", n, m, n/m)
	case k == 1:
		return fmt.Errorf("procmodel: %d predictions requested for %d instances", n, m)
	case n == m:
		return fmt.Errorf("procmodel: %d predictions requested for %d instances, but the model returns %d outputs per instance (its hello says so): the data must describe them (tempora.Dataset.Outputs)", n, m, k)
	}
	return fmt.Errorf("procmodel: %d predictions requested for %d instances of a model of %d outputs, want %d", n, m, k, m*k)
}
