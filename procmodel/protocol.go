package procmodel

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/tempora-dev/tempora"
)

// Version is the protocol version this package speaks. It is carried by the
// hello frame and by every request.
const Version = 1

// Frame magics: four ASCII bytes at the start of every frame.
const (
	helloMagic    = "TMPH" // child → parent, once, when the model is ready
	requestMagic  = "TMPQ" // parent → child: a batch
	responseMagic = "TMPR" // child → parent: predictions or an error
)

// Frame header sizes in bytes.
const (
	helloSize          = 8  // magic, version
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
// decoding through buf (grown as needed and returned for reuse).
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
// It first writes the hello frame. It is the Go side of a model program
// (see examples/gomodel): call it as procmodel.Serve(os.Stdin, os.Stdout, m)
// once the model is loaded, and write nothing else to standard output.
//
// An error returned by m.Predict is sent to the parent as an error frame and
// serving continues. A malformed request is answered with an error frame and
// ends serving with an error, since the stream can no longer be trusted; so
// does an I/O error.
func Serve(r io.Reader, w io.Writer, m tempora.Model) error {
	br := bufio.NewReaderSize(r, 1<<16)
	bw := bufio.NewWriterSize(w, 1<<16)
	var hello [helloSize]byte
	copy(hello[:], helloMagic)
	binary.LittleEndian.PutUint32(hello[4:], Version)
	bw.Write(hello[:])
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("procmodel: writing hello: %w", err)
	}
	var (
		hdr  [requestHeaderSize]byte
		raw  []byte
		x    tempora.Tensor
		pred []float64
		out  []byte
	)
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("procmodel: reading request header: %w", err)
		}
		m0, d, l, err := parseRequestHeader(hdr[:])
		if err != nil {
			writeError(bw, err.Error())
			return err
		}
		n := m0 * d * l
		if cap(x.Data) < n {
			x.Data = make([]float64, n)
		}
		x.M, x.D, x.L, x.Data = m0, d, l, x.Data[:n]
		if raw, err = readFloats(br, raw, x.Data); err != nil {
			return fmt.Errorf("procmodel: reading %d request values: %w", n, err)
		}
		if cap(pred) < m0 {
			pred = make([]float64, m0)
		}
		pred = pred[:m0]
		if err := m.Predict(pred, &x); err != nil {
			if err := writeError(bw, err.Error()); err != nil {
				return err
			}
			continue
		}
		out = grow(out, responseHeaderSize+8*m0)
		copy(out, responseMagic)
		binary.LittleEndian.PutUint32(out[4:], statusOK)
		binary.LittleEndian.PutUint32(out[8:], uint32(m0))
		putFloats(out[responseHeaderSize:], pred)
		bw.Write(out)
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("procmodel: writing answer: %w", err)
		}
	}
}

// parseRequestHeader checks a request header and returns its M, D and L.
func parseRequestHeader(h []byte) (m, d, l int, err error) {
	if string(h[:4]) != requestMagic {
		return 0, 0, 0, fmt.Errorf("procmodel: bad request magic %q, want %q", h[:4], requestMagic)
	}
	le := binary.LittleEndian
	if v := le.Uint32(h[4:]); v != Version {
		return 0, 0, 0, fmt.Errorf("procmodel: request has protocol version %d, want %d", v, Version)
	}
	m, d, l = int(le.Uint32(h[8:])), int(le.Uint32(h[12:])), int(le.Uint32(h[16:]))
	if d == 0 || l == 0 || (m > 0 && d > maxValues/m) || (m*d > 0 && l > maxValues/(m*d)) {
		return 0, 0, 0, fmt.Errorf("procmodel: request has unusable shape %d×%d×%d", m, d, l)
	}
	return m, d, l, nil
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
