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
	helloSize          = 28 // magic, version, H, M, D, L, CRC-32
	requestHeaderSize  = 20 // magic, version, M, D, L
	responseHeaderSize = 12 // magic, status, count
)

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

// readHello reads and checks the hello frame and returns what it says about
// the data the model holds. The magic and version are read first, so that
// a model of another version is refused without waiting for bytes it never
// sends. ended describes an error that ends the stream early (end of file)
// for the message; other errors, such as a deadline, are kept as they are.
func readHello(r io.Reader, ended func(error) error) (heldData, error) {
	var h [helloSize]byte
	if n, err := io.ReadFull(r, h[:helloHeadSize]); err != nil {
		if n > 0 {
			return heldData{}, fmt.Errorf("%w after %d bytes of its hello frame: %w", ErrExited, n, ended(err))
		}
		return heldData{}, fmt.Errorf("%w before its hello frame: %w", ErrExited, ended(err))
	}
	if string(h[:4]) != helloMagic {
		return heldData{}, fmt.Errorf("%w: expected the hello frame %q, got %q (does the model print to standard output?)", ErrProtocol, helloMagic, h[:helloHeadSize])
	}
	switch v := binary.LittleEndian.Uint32(h[4:]); {
	case v == 1:
		return heldData{}, fmt.Errorf("%w: model speaks protocol version 1, which this tempora no longer serves; update it to version %d: %s", ErrProtocol, Version, upgradeHint)
	case v != Version:
		return heldData{}, fmt.Errorf("%w: model speaks protocol version %d; this tempora speaks version %d (docs/protocol.md)", ErrProtocol, v, Version)
	}
	if n, err := io.ReadFull(r, h[helloHeadSize:]); err != nil {
		return heldData{}, fmt.Errorf("%w after %d bytes of its hello frame: %w", ErrExited, helloHeadSize+n, ended(err))
	}
	held, err := parseHeld(h[helloHeadSize:])
	if err != nil {
		return heldData{}, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return held, nil
}

// readAnswer reads the answer to a request of len(dst) instances from r into
// dst, decoding through buf (grown as needed and returned for reuse). It
// never allocates more than the answer holds: predictions go into dst, whose
// length the request fixed, and an error message is read as it arrives, up
// to maxMessage bytes. ended is as for readHello.
func readAnswer(r io.Reader, buf []byte, dst []float64, ended func(error) error) ([]byte, error) {
	var h [responseHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return buf, fmt.Errorf("%w before answering a batch of %d instances: %w", ErrExited, len(dst), ended(err))
	}
	if string(h[:4]) != responseMagic {
		return buf, fmt.Errorf("%w: expected an answer frame starting %q, got %q (does the model print to standard output?)", ErrProtocol, responseMagic, h[:])
	}
	status, n := binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
	switch status {
	case statusOK:
		if int64(n) != int64(len(dst)) {
			return buf, fmt.Errorf("%w: %d predictions for a batch of %d instances", ErrProtocol, n, len(dst))
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
// loaded, and write nothing else to standard output.
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
	br := bufio.NewReaderSize(r, 1<<16)
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(appendHello(nil, nil))
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
			if err != nil {
				if errors.Is(err, errStream) {
					return err
				}
				writeError(bw, err.Error())
				return err
			}
			pred = growFloats(pred, req.rows)
			if err := res.predict(m, pred, req.blocks); err != nil {
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
		pred = growFloats(pred, m0)
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

// checkBatch validates the arguments of a Predict call.
func checkBatch(dst []float64, x *tempora.Tensor) error {
	if x == nil {
		return errors.New("procmodel: nil batch")
	}
	if len(dst) != x.M {
		return fmt.Errorf("procmodel: %d predictions requested for %d instances", len(dst), x.M)
	}
	if len(x.Data) != x.M*x.D*x.L {
		return fmt.Errorf("procmodel: batch holds %d values, shape %d×%d×%d needs %d", len(x.Data), x.M, x.D, x.L, x.M*x.D*x.L)
	}
	if x.D <= 0 || x.L <= 0 || x.M*x.D*x.L > maxValues {
		return fmt.Errorf("procmodel: cannot send a batch of shape %d×%d×%d", x.M, x.D, x.L)
	}
	return nil
}
