package procmodel

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"unsafe"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// heldData is what a hello says about the data the model holds from the
// start (docs/protocol.md, "Data the model holds from the start").
type heldData struct {
	ok      bool // the model holds data
	m, d, l int
	crc     uint32 // CRC-32 (IEEE) of the 8·m·d·l bytes of its values, little-endian float64
}

// parseHeld parses what a hello says about held data: H (the flags' bit
// 0, 0 or 1), and in b the 16 bytes after the flags, M, D, L and the
// CRC-32.
func parseHeld(h uint32, b []byte) (heldData, error) {
	le := binary.LittleEndian
	m, d, l, crc := le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:])
	if h == 0 {
		if m != 0 || d != 0 || l != 0 || crc != 0 {
			return heldData{}, fmt.Errorf("hello says the model holds no data (H = 0) but gives shape %d×%d×%d and CRC-32 %#08x, want zeros", m, d, l, crc)
		}
		return heldData{}, nil
	}
	if m == 0 || d == 0 || l == 0 || uint64(m)*uint64(d)*uint64(l) > maxValues {
		return heldData{}, fmt.Errorf("hello says the model holds data of unusable shape %d×%d×%d", m, d, l)
	}
	return heldData{ok: true, m: int(m), d: int(d), l: int(l), crc: crc}, nil
}

// matches reports whether the model's held data is x: same shape and the
// same CRC-32 of the values' little-endian bytes. A CRC-32 tells data
// apart with certainty for any change of up to 32 consecutive bits, and
// otherwise fails to with probability 2⁻³²; it guards against handing the
// model other data than it holds by mistake, not against a model that lies.
func (h heldData) matches(x *tempora.Tensor) bool {
	if !h.ok || x == nil || x.M != h.m || x.D != h.d || x.L != h.l || len(x.Data) != h.m*h.d*h.l {
		return false
	}
	return tensorCRC(x) == h.crc
}

// tensorCRC returns the CRC-32 (IEEE) of x's values as little-endian
// float64 bytes.
func tensorCRC(x *tempora.Tensor) uint32 {
	if len(x.Data) == 0 {
		return crc32.ChecksumIEEE(nil)
	}
	if littleEndian {
		return crc32.ChecksumIEEE(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x.Data))), 8*len(x.Data)))
	}
	var (
		buf [8 * 4096]byte
		c   uint32
	)
	for lo := 0; lo < len(x.Data); lo += 4096 {
		v := x.Data[lo:min(lo+4096, len(x.Data))]
		putFloats(buf[:], v)
		c = crc32.Update(c, crc32.IEEETable, buf[:8*len(v)])
	}
	return c
}

// appendHello appends to buf the hello frame of a model side of k outputs
// per instance that holds x from the start, or nothing (x nil). With k = 1
// the flags leave O unset and the hello is 28 bytes; otherwise K follows.
func appendHello(buf []byte, x *tempora.Tensor, k int) []byte {
	var h [helloSize + helloOutputsSize]byte
	le := binary.LittleEndian
	copy(h[:], helloMagic)
	le.PutUint32(h[4:], Version)
	var flags uint32
	if x != nil {
		flags |= helloHolds
		le.PutUint32(h[12:], uint32(x.M))
		le.PutUint32(h[16:], uint32(x.D))
		le.PutUint32(h[20:], uint32(x.L))
		le.PutUint32(h[24:], tensorCRC(x))
	}
	n := helloSize
	if k != 1 {
		flags |= helloOutputs
		le.PutUint32(h[helloSize:], uint32(k))
		n += helloOutputsSize
	}
	le.PutUint32(h[8:], flags)
	return append(buf, h[:n]...)
}

// predictHeld predicts x, which m holds as its resident data, through a
// block request instead of sending x whole: one block of all rows whose
// values are x's own at feature 0, timestep 0, so that the model predicts
// its resident rows as they are. The predictions are those of a plain
// request (the same rows, cut at the same batch limit).
func predictHeld(m resident.Model, dst []float64, x *tempora.Tensor) error {
	vals := make([]float64, x.M)
	for i := range vals {
		vals[i] = x.Data[i*x.D*x.L]
	}
	return m.PredictBlocks(dst, x, []resident.Block{{Lo: 0, Hi: x.M, Features: []int{0}, Start: 0, End: 0, Values: vals}})
}
