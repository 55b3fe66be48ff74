// Package npy reads and writes NumPy .npy files (format versions 1.0, 2.0
// and 3.0) holding numeric arrays.
//
// Reading accepts little- and big-endian float64 and float32, signed and
// unsigned integers of 1, 2, 4 and 8 bytes, and booleans, all converted to
// float64; Fortran-ordered arrays are transposed into C order. Writing always
// produces version 1.0 little-endian float64 in C order, which every NumPy
// since 1.0 reads.
//
// Reference: the NumPy format specification, numpy/lib/format.py
// ("A simple format for saving numpy arrays to disk").
package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

var magic = []byte("\x93NUMPY")

// maxElements bounds the array size a header may announce (2^31 values, 16
// GiB of float64), so a corrupt header fails cleanly instead of exhausting
// memory.
const maxElements = 1 << 31

// chunkValues is the number of values decoded per read.
const chunkValues = 1 << 16

// Array is a decoded array in C (row-major) order.
type Array struct {
	Shape []int
	Data  []float64
	// DType is the descriptor read from the file, e.g. "<f8".
	DType string
	// Fortran reports that the file was Fortran-ordered (Data has been
	// transposed to C order).
	Fortran bool
}

// Read decodes the array r holds. r must end with the array's data: bytes
// after it are an error.
func Read(r io.Reader) (*Array, error) {
	avail := remaining(r)
	br := bufio.NewReaderSize(r, 1<<16)
	pre := make([]byte, 8)
	if _, err := io.ReadFull(br, pre); err != nil {
		return nil, fmt.Errorf("npy: reading preamble: %w", truncated(err))
	}
	if !bytes.Equal(pre[:6], magic) {
		return nil, errors.New("npy: not a .npy file (bad magic string)")
	}
	var hlen, lenSize int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("npy: reading header length: %w", truncated(err))
		}
		hlen, lenSize = int(binary.LittleEndian.Uint16(b[:])), 2
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("npy: reading header length: %w", truncated(err))
		}
		hlen, lenSize = int(binary.LittleEndian.Uint32(b[:])), 4
		if hlen > 1<<20 {
			return nil, fmt.Errorf("npy: header length %d is implausible", hlen)
		}
	default:
		return nil, fmt.Errorf("npy: unsupported format version %d.%d", pre[6], pre[7])
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, fmt.Errorf("npy: reading header: %w", truncated(err))
	}
	descr, fortran, shape, err := parseHeader(string(hdr))
	if err != nil {
		return nil, err
	}
	n := 1
	for _, s := range shape {
		if s < 0 {
			return nil, fmt.Errorf("npy: negative dimension in shape %v", shape)
		}
		if s > 0 && n > maxElements/s {
			return nil, fmt.Errorf("npy: shape %v is too large", shape)
		}
		n *= s
	}
	dec, size, err := decoder(descr)
	if err != nil {
		return nil, err
	}
	// Memory for the values is allocated only for values known to be
	// there, so that a corrupt or truncated file announcing a huge shape
	// fails without exhausting memory. When r is a regular file, its size
	// bounds the values: a file too short fails at once, and a long enough
	// one is decoded into one allocation of the exact size. Otherwise data
	// grows as values arrive: room for a chunk is made just before the
	// chunk is read, at most doubling data and never beyond n, so that the
	// memory held stays within about twice the values read plus a chunk.
	var data []float64
	if avail >= 0 {
		if need, have := int64(n)*int64(size), avail-int64(8+lenSize+hlen); have < need {
			return nil, fmt.Errorf("npy: shape %v of %s needs %d bytes of data, the file holds %d: file is truncated", shape, descr, need, max(have, 0))
		}
		data = make([]float64, 0, n)
	} else {
		data = make([]float64, 0, min(n, chunkValues))
	}
	// A little-endian float64 array read on a little-endian machine holds
	// the values' bytes exactly as they lie in memory: they are read
	// straight into data, with no buffer and no decoding (the common case:
	// what NumPy writes on x86 and ARM, and what Write writes). Every other
	// dtype and byte order is decoded value by value from raw. (decoder
	// has accepted descr, and reads every byte order but '>' as little
	// endian.)
	direct := hostLittleEndian && descr[1:] == "f8" && descr[0] != '>'
	var raw []byte
	if !direct {
		raw = make([]byte, min(n, chunkValues)*size)
	}
	for len(data) < n {
		k := min(n-len(data), chunkValues)
		if cap(data)-len(data) < k {
			data = slices.Grow(data, min(n-len(data), max(len(data), k)))
		}
		if direct {
			chunk := data[len(data) : len(data)+k]
			if _, err := io.ReadFull(br, float64Bytes(chunk)); err != nil {
				return nil, fmt.Errorf("npy: reading %d values of %s: %w", n, descr, truncated(err))
			}
			data = data[:len(data)+k]
			continue
		}
		if _, err := io.ReadFull(br, raw[:k*size]); err != nil {
			return nil, fmt.Errorf("npy: reading %d values of %s: %w", n, descr, truncated(err))
		}
		for i := range k {
			data = append(data, dec(raw[i*size:]))
		}
	}
	// A .npy file holds one array: anything after its data (a second
	// array appended to the file, or corruption) is an error, not ignored.
	if extra, err := io.Copy(io.Discard, br); err != nil {
		return nil, fmt.Errorf("npy: reading past the data: %w", err)
	} else if extra > 0 {
		unit := "bytes"
		if extra == 1 {
			unit = "byte"
		}
		return nil, fmt.Errorf("npy: %d unexpected %s after the %d values of shape %v (a .npy file holds one array)", extra, unit, n, shape)
	}
	a := &Array{Shape: shape, Data: data, DType: descr, Fortran: fortran}
	if fortran && len(shape) > 1 {
		a.Data = fortranToC(data, shape)
	}
	return a, nil
}

// hostLittleEndian reports whether this machine stores a float64's bytes
// least significant first, as a "<f8" file does.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// float64Bytes returns the memory of v as bytes (8 per value, in the
// machine's byte order), for io.ReadFull to fill directly. The bytes alias
// v: v stays an ordinary Go slice, and any bit pattern is a valid float64.
func float64Bytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
}

// remaining returns the number of bytes left in r if r is a regular file
// (its size minus the current offset), and -1 otherwise.
func remaining(r io.Reader) int64 {
	f, ok := r.(interface {
		Stat() (fs.FileInfo, error)
		io.Seeker
	})
	if !ok {
		return -1
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	return fi.Size() - off
}

func truncated(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("file is truncated")
	}
	return err
}

// Write encodes data with the given shape as a little-endian float64 array
// in C order.
func Write(w io.Writer, shape []int, data []float64) error {
	n := 1
	for _, s := range shape {
		n *= s
	}
	if n != len(data) {
		return fmt.Errorf("npy: %d values do not fit shape %v", len(data), shape)
	}
	var sh strings.Builder
	sh.WriteByte('(')
	for i, s := range shape {
		if i > 0 {
			sh.WriteString(", ")
		}
		sh.WriteString(strconv.Itoa(s))
	}
	if len(shape) == 1 {
		sh.WriteByte(',')
	}
	sh.WriteByte(')')
	hdr := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", sh.String())
	// Pad so that magic + version + length + header + '\n' is a multiple of
	// 64 bytes, as the specification recommends.
	total := len(magic) + 2 + 2 + len(hdr) + 1
	hdr += strings.Repeat(" ", (64-total%64)%64) + "\n"
	if len(hdr) > math.MaxUint16 {
		return fmt.Errorf("npy: header too long for version 1.0")
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(magic)
	bw.Write([]byte{1, 0})
	var l [2]byte
	binary.LittleEndian.PutUint16(l[:], uint16(len(hdr)))
	bw.Write(l[:])
	bw.WriteString(hdr)
	var b [8]byte
	for _, v := range data {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		if _, err := bw.Write(b[:]); err != nil {
			return err // e.g. a cancelled atomicfile.WriteContext: stop now
		}
	}
	return bw.Flush()
}

// parseHeader parses the Python dict literal of a .npy header, e.g.
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }.
func parseHeader(h string) (descr string, fortran bool, shape []int, err error) {
	h = strings.TrimSpace(h)
	if !strings.HasPrefix(h, "{") || !strings.HasSuffix(h, "}") {
		return "", false, nil, fmt.Errorf("npy: malformed header %q", h)
	}
	body := h[1 : len(h)-1]
	got := map[string]bool{}
	for len(strings.TrimSpace(body)) > 0 {
		body = strings.TrimSpace(body)
		key, rest, ok := quoted(body)
		if !ok {
			return "", false, nil, fmt.Errorf("npy: malformed header key in %q", h)
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, ":") {
			return "", false, nil, fmt.Errorf("npy: malformed header %q", h)
		}
		rest = strings.TrimSpace(rest[1:])
		var val string
		switch key {
		case "descr":
			val, rest, ok = quoted(rest)
			if !ok {
				return "", false, nil, fmt.Errorf("npy: unsupported descr in header %q (structured arrays are not supported)", h)
			}
			descr = val
		case "fortran_order":
			switch {
			case strings.HasPrefix(rest, "True"):
				fortran, rest = true, rest[4:]
			case strings.HasPrefix(rest, "False"):
				fortran, rest = false, rest[5:]
			default:
				return "", false, nil, fmt.Errorf("npy: malformed fortran_order in header %q", h)
			}
		case "shape":
			end := strings.IndexByte(rest, ')')
			if !strings.HasPrefix(rest, "(") || end < 0 {
				return "", false, nil, fmt.Errorf("npy: malformed shape in header %q", h)
			}
			shape = []int{}
			for _, f := range strings.Split(rest[1:end], ",") {
				f = strings.TrimSpace(f)
				if f == "" {
					continue
				}
				f = strings.TrimSuffix(f, "L")
				v, err := strconv.Atoi(f)
				if err != nil {
					return "", false, nil, fmt.Errorf("npy: malformed shape in header %q", h)
				}
				shape = append(shape, v)
			}
			rest = rest[end+1:]
		default:
			return "", false, nil, fmt.Errorf("npy: unknown header key %q", key)
		}
		got[key] = true
		rest = strings.TrimSpace(rest)
		rest = strings.TrimPrefix(rest, ",")
		body = rest
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !got[k] {
			return "", false, nil, fmt.Errorf("npy: header lacks %q", k)
		}
	}
	return descr, fortran, shape, nil
}

func quoted(s string) (val, rest string, ok bool) {
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') {
		return "", s, false
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", s, false
	}
	return s[1 : 1+end], s[end+2:], true
}

func decoder(descr string) (func([]byte) float64, int, error) {
	if len(descr) < 3 {
		return nil, 0, fmt.Errorf("npy: unsupported dtype %q", descr)
	}
	var bo binary.ByteOrder
	switch descr[0] {
	case '<', '|', '=':
		bo = binary.LittleEndian
	case '>':
		bo = binary.BigEndian
	default:
		return nil, 0, fmt.Errorf("npy: unsupported dtype %q", descr)
	}
	switch descr[1:] {
	case "f8":
		return func(b []byte) float64 { return math.Float64frombits(bo.Uint64(b)) }, 8, nil
	case "f4":
		return func(b []byte) float64 { return float64(math.Float32frombits(bo.Uint32(b))) }, 4, nil
	case "i8":
		return func(b []byte) float64 { return float64(int64(bo.Uint64(b))) }, 8, nil
	case "i4":
		return func(b []byte) float64 { return float64(int32(bo.Uint32(b))) }, 4, nil
	case "i2":
		return func(b []byte) float64 { return float64(int16(bo.Uint16(b))) }, 2, nil
	case "i1":
		return func(b []byte) float64 { return float64(int8(b[0])) }, 1, nil
	case "u8":
		return func(b []byte) float64 { return float64(bo.Uint64(b)) }, 8, nil
	case "u4":
		return func(b []byte) float64 { return float64(bo.Uint32(b)) }, 4, nil
	case "u2":
		return func(b []byte) float64 { return float64(bo.Uint16(b)) }, 2, nil
	case "u1", "b1":
		return func(b []byte) float64 { return float64(b[0]) }, 1, nil
	}
	return nil, 0, fmt.Errorf("npy: unsupported dtype %q (want a float, integer or boolean type)", descr)
}

// fortranToC transposes column-major data of the given shape to row-major.
func fortranToC(src []float64, shape []int) []float64 {
	dst := make([]float64, len(src))
	k := len(shape)
	idx := make([]int, k)
	// Fortran strides: the first index varies fastest.
	fstride := make([]int, k)
	s := 1
	for d := 0; d < k; d++ {
		fstride[d] = s
		s *= shape[d]
	}
	for c := range dst {
		off := 0
		for d := 0; d < k; d++ {
			off += idx[d] * fstride[d]
		}
		dst[c] = src[off]
		for d := k - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return dst
}
