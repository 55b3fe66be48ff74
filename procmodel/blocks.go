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
	"unsafe"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// Frames of resident data (docs/protocol.md, "Resident data and block
// requests").
const (
	residentMagic = "TMPD" // parent → model: the data the block requests refer to
	blocksMagic   = "TMPP" // parent → model: blocks of the resident data to predict
)

// blocksHeaderSize is the size of a block request header: magic, version,
// K (blocks), R (rows), V (values), S (where the values are), offset (u64).
// A resident data header has the same size: magic, version, M, D, L, S,
// offset.
const blocksHeaderSize = 32

// residentHeaderSize is the size of a resident data header.
const residentHeaderSize = 32

// blockDescSize is the fixed part of a block descriptor: lo, hi, start, end,
// F; the F feature indices follow.
const blockDescSize = 20

// maxBlocks bounds the blocks of one request.
const maxBlocks = 1 << 20

// Where a block request's values are.
const (
	valuesInline = 0 // after the descriptors
	valuesShared = 1 // in the shared buffer, at the header's offset
)

// errStream marks a read error in the middle of a frame: the stream can no
// longer be trusted and the peer gets no answer.
var errStream = errors.New("procmodel: input ended or failed in the middle of a frame")

// checkBlocks validates a PredictBlocks call on the sending side, for a
// model of k outputs per instance, and returns the rows and values it
// carries.
func checkBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block, k int) (rows, vals int, err error) {
	if x == nil {
		return 0, 0, errors.New("procmodel: nil resident data")
	}
	if x.M <= 0 || x.D <= 0 || x.L <= 0 || len(x.Data) != x.M*x.D*x.L || len(x.Data) > maxValues {
		return 0, 0, fmt.Errorf("procmodel: cannot hold data of shape %d×%d×%d (%d values)", x.M, x.D, x.L, len(x.Data))
	}
	if len(blocks) > maxBlocks {
		return 0, 0, fmt.Errorf("procmodel: %d blocks in one call, at most %d", len(blocks), maxBlocks)
	}
	for n := range blocks {
		b := &blocks[n]
		if err := b.Check(x.M, x.D, x.L); err != nil {
			return 0, 0, fmt.Errorf("procmodel: block %d: %w", n, err)
		}
		rows += b.Rows()
		vals += len(b.Values)
		if rows > maxValues/k || vals > maxValues {
			return 0, 0, fmt.Errorf("procmodel: blocks of more than %d predictions or values in one call", maxValues)
		}
	}
	if len(dst) != rows*k {
		if k == 1 {
			return 0, 0, fmt.Errorf("procmodel: %d predictions requested for blocks of %d rows", len(dst), rows)
		}
		return 0, 0, fmt.Errorf("%w (blocks of %d rows)", checkPredictions(len(dst), rows, k), rows)
	}
	return rows, vals, nil
}

// splitBlocks calls f for consecutive groups of blocks of at most limit
// rows each (no limit if limit ≤ 0), cutting a block that does not fit
// into blocks of fewer rows, with the matching ranges of dst (k
// predictions per row).
func splitBlocks(dst []float64, blocks []resident.Block, limit, k int, f func(dst []float64, blocks []resident.Block) error) error {
	if limit <= 0 {
		return f(dst, blocks)
	}
	var (
		group []resident.Block
		n, at int
	)
	for _, b := range blocks {
		per := len(b.Features) * (b.End - b.Start + 1)
		for lo := b.Lo; lo < b.Hi; {
			hi := min(b.Hi, lo+limit-n)
			p := b
			p.Lo, p.Hi = lo, hi
			p.Values = b.Values[(lo-b.Lo)*per : (hi-b.Lo)*per]
			group = append(group, p)
			n += hi - lo
			lo = hi
			if n == limit {
				if err := f(dst[at*k:(at+n)*k], group); err != nil {
					return err
				}
				at, n, group = at+n, 0, group[:0]
			}
		}
	}
	if n > 0 {
		return f(dst[at*k:(at+n)*k], group)
	}
	return nil
}

// writeBlocks writes a block request for blocks (carrying vals values) to
// w, with the values inline, or, when shared is non-nil, written into shared
// (the request slot, at byte offset of the buffer) instead.
func writeBlocks(w io.Writer, buf []byte, blocks []resident.Block, rows, vals int, shared []byte, offset int) ([]byte, error) {
	size := blocksHeaderSize
	for _, b := range blocks {
		size += blockDescSize + 4*len(b.Features)
	}
	buf = grow(buf, max(size, 8*chunkValues))[:size]
	le := binary.LittleEndian
	copy(buf, blocksMagic)
	le.PutUint32(buf[4:], Version)
	le.PutUint32(buf[8:], uint32(len(blocks)))
	le.PutUint32(buf[12:], uint32(rows))
	le.PutUint32(buf[16:], uint32(vals))
	if shared != nil {
		le.PutUint32(buf[20:], valuesShared)
		le.PutUint64(buf[24:], uint64(offset))
	} else {
		le.PutUint32(buf[20:], valuesInline)
		le.PutUint64(buf[24:], 0)
	}
	o := blocksHeaderSize
	for _, b := range blocks {
		le.PutUint32(buf[o:], uint32(b.Lo))
		le.PutUint32(buf[o+4:], uint32(b.Hi))
		le.PutUint32(buf[o+8:], uint32(b.Start))
		le.PutUint32(buf[o+12:], uint32(b.End))
		le.PutUint32(buf[o+16:], uint32(len(b.Features)))
		o += blockDescSize
		for _, j := range b.Features {
			le.PutUint32(buf[o:], uint32(j))
			o += 4
		}
	}
	if shared != nil {
		// An empty shared (writeBlocksHeader): the values are there already.
		at := 0
		for _, b := range blocks {
			if len(shared) == 0 {
				break
			}
			putShared(shared[8*at:], b.Values)
			at += len(b.Values)
		}
		_, err := w.Write(buf)
		return buf, err
	}
	if _, err := w.Write(buf); err != nil {
		return buf, err
	}
	buf = buf[:cap(buf)]
	for _, b := range blocks {
		for lo := 0; lo < len(b.Values); lo += chunkValues {
			v := b.Values[lo:min(lo+chunkValues, len(b.Values))]
			putFloats(buf, v)
			if _, err := w.Write(buf[:8*len(v)]); err != nil {
				return buf, err
			}
		}
	}
	return buf, nil
}

// writeBlocksHeader writes a block request for blocks whose vals values
// are already in the shared buffer at byte offset: the header and the
// descriptors.
func writeBlocksHeader(w io.Writer, buf []byte, blocks []resident.Block, rows, vals int, offset int) ([]byte, error) {
	return writeBlocks(w, buf, blocks, rows, vals, []byte{}, offset)
}

// modelSide is the model side's resident data: the data of the last
// resident data frame, a working copy to which blocks are applied, and the
// buffers of the block requests.
type modelSide struct {
	x, work *tempora.Tensor
	raw     []byte
	vals    []float64
	feats   []int
	blocks  []resident.Block
	seen    []int // per feature: the block that last listed it, plus one
	// dirty is the block the working copy holds perturbed (its Values
	// unused; Features its own copy), valid when isDirty. A block of the
	// same cells overwrites all of them, so the working copy is restored
	// only before a block of other cells: the many draws of one test
	// then cost one copy each instead of two.
	dirty   resident.Block
	isDirty bool
	// checked: the first block request on this resident data has been
	// checked for writes of the model into its batch (predict).
	checked bool
}

// writeResident writes a resident data frame for x to w: the values
// inline, or, with offset ≥ 0, already in the shared buffer at that byte
// offset.
func writeResident(w io.Writer, buf []byte, x *tempora.Tensor, offset int) ([]byte, error) {
	var h [residentHeaderSize]byte
	le := binary.LittleEndian
	copy(h[:], residentMagic)
	le.PutUint32(h[4:], Version)
	le.PutUint32(h[8:], uint32(x.M))
	le.PutUint32(h[12:], uint32(x.D))
	le.PutUint32(h[16:], uint32(x.L))
	if offset >= 0 {
		le.PutUint32(h[20:], valuesShared)
		le.PutUint64(h[24:], uint64(offset))
		_, err := w.Write(h[:])
		return buf, err
	}
	if _, err := w.Write(h[:]); err != nil {
		return buf, err
	}
	buf = grow(buf, 8*min(len(x.Data), chunkValues))
	for lo := 0; lo < len(x.Data); lo += chunkValues {
		v := x.Data[lo:min(lo+chunkValues, len(x.Data))]
		putFloats(buf, v)
		if _, err := w.Write(buf[:8*len(v)]); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// read reads a resident data frame whose header is h (residentHeaderSize
// bytes), with its values from br or from shared.
func (r *modelSide) read(br io.Reader, h []byte, shared []byte) error {
	m, d, l, err := parseShape(h, "resident data")
	if err != nil {
		return err
	}
	where, offset := binary.LittleEndian.Uint32(h[20:]), binary.LittleEndian.Uint64(h[24:])
	n := m * d * l
	var data []float64
	switch {
	case where == valuesInline && offset != 0:
		return fmt.Errorf("procmodel: resident data with inline values has offset %d, want 0", offset)
	case where == valuesShared && (shared == nil || offset%8 != 0 || offset > uint64(len(shared)) || uint64(len(shared))-offset < 8*uint64(n)):
		return fmt.Errorf("procmodel: resident data's %d values at offset %d do not fit the shared buffer (%d bytes)", n, offset, len(shared))
	case where == valuesShared:
		data = make([]float64, n)
		getShared(data, shared[offset:])
	case where == valuesInline:
		if data, r.raw, err = readValues(br, r.raw, nil, n); err != nil {
			return fmt.Errorf("%w: reading the %d values of %d×%d×%d resident data: %w", errStream, n, m, d, l, truncatedText(err))
		}
	default:
		return fmt.Errorf("procmodel: resident data with unknown value source %d (want 0, inline, or 1, shared)", where)
	}
	r.x = &tempora.Tensor{M: m, D: d, L: l, Data: data}
	r.work = r.x.Clone()
	r.isDirty, r.checked = false, false
	r.seen = make([]int, d)
	return nil
}

// blockRequest is a parsed block request.
type blockRequest struct {
	blocks []resident.Block
	rows   int
}

// readBlocks reads the rest of a block request whose header is h: its
// descriptors and values (from br, or from shared), checking every field
// against the resident data. Errors wrapping errStream mean the stream
// broke; the others describe a malformed request.
func (r *modelSide) readBlocks(br *bufio.Reader, h []byte, shared []byte) (blockRequest, error) {
	le := binary.LittleEndian
	if v := le.Uint32(h[4:]); v != Version {
		return blockRequest{}, fmt.Errorf("procmodel: block request with protocol version %d, want %d", v, Version)
	}
	k, rows, vals := int(le.Uint32(h[8:])), int(le.Uint32(h[12:])), int(le.Uint32(h[16:]))
	where, offset := le.Uint32(h[20:]), le.Uint64(h[24:])
	switch {
	case r.x == nil:
		return blockRequest{}, errors.New("procmodel: block request before any resident data frame (TMPD)")
	case k < 1 || k > maxBlocks:
		return blockRequest{}, fmt.Errorf("procmodel: block request with %d blocks, want 1 to %d", k, maxBlocks)
	case rows < k || rows > maxValues:
		return blockRequest{}, fmt.Errorf("procmodel: block request with %d blocks announces %d rows, want %d to %d", k, rows, k, maxValues)
	case vals < k || vals > maxValues:
		return blockRequest{}, fmt.Errorf("procmodel: block request with %d blocks announces %d values, want %d to %d", k, vals, k, maxValues)
	case where == valuesInline && offset != 0:
		return blockRequest{}, fmt.Errorf("procmodel: block request with inline values has offset %d, want 0", offset)
	case where == valuesShared && (shared == nil || offset%8 != 0 || offset > uint64(len(shared)) || uint64(len(shared))-offset < 8*uint64(vals)):
		return blockRequest{}, fmt.Errorf("procmodel: block request's %d values at offset %d do not fit the shared buffer (%d bytes)", vals, offset, len(shared))
	case where != valuesInline && where != valuesShared:
		return blockRequest{}, fmt.Errorf("procmodel: block request with unknown value source %d (want 0, inline, or 1, shared)", where)
	}
	x := r.x
	r.blocks, r.feats = r.blocks[:0], r.feats[:0]
	var d [blockDescSize]byte
	gotRows, gotVals := 0, 0
	type span struct{ lo, hi int }
	spans := make([]span, 0, min(k, 1<<10))
	for b := range k {
		if _, err := io.ReadFull(br, d[:]); err != nil {
			return blockRequest{}, fmt.Errorf("%w: reading block %d of %d: %w", errStream, b, k, truncatedText(err))
		}
		lo, hi := int(le.Uint32(d[0:])), int(le.Uint32(d[4:]))
		start, end, nf := int(le.Uint32(d[8:])), int(le.Uint32(d[12:])), int(le.Uint32(d[16:]))
		switch {
		case lo >= hi || hi > x.M:
			return blockRequest{}, fmt.Errorf("procmodel: block %d has rows [%d, %d), resident data has %d instances", b, lo, hi, x.M)
		case start > end || end >= x.L:
			return blockRequest{}, fmt.Errorf("procmodel: block %d has timesteps [%d, %d], resident data has %d", b, start, end, x.L)
		case nf < 1 || nf > x.D:
			return blockRequest{}, fmt.Errorf("procmodel: block %d has %d features, resident data has %d", b, nf, x.D)
		}
		f0 := len(r.feats)
		for range nf {
			var fb [4]byte
			if _, err := io.ReadFull(br, fb[:]); err != nil {
				return blockRequest{}, fmt.Errorf("%w: reading the features of block %d: %w", errStream, b, truncatedText(err))
			}
			j := int(le.Uint32(fb[:]))
			if j >= x.D {
				return blockRequest{}, fmt.Errorf("procmodel: block %d lists feature %d, resident data has %d", b, j, x.D)
			}
			if r.seen[j] == b+1 {
				return blockRequest{}, fmt.Errorf("procmodel: block %d lists feature %d twice", b, j)
			}
			r.seen[j] = b + 1
			r.feats = append(r.feats, j)
		}
		n := (hi - lo) * nf * (end - start + 1)
		gotRows += hi - lo
		gotVals += n
		if gotRows > rows || gotVals > vals {
			return blockRequest{}, fmt.Errorf("procmodel: blocks 0 to %d hold %d rows and %d values, more than the %d and %d announced", b, gotRows, gotVals, rows, vals)
		}
		r.blocks = append(r.blocks, resident.Block{Lo: lo, Hi: hi, Start: start, End: end})
		spans = append(spans, span{f0, len(r.feats)})
	}
	for j := range r.seen {
		r.seen[j] = 0
	}
	if gotRows != rows || gotVals != vals {
		return blockRequest{}, fmt.Errorf("procmodel: blocks hold %d rows and %d values, the header announced %d and %d", gotRows, gotVals, rows, vals)
	}
	if where == valuesShared {
		r.vals = growFloats(r.vals, vals)
		getShared(r.vals, shared[offset:])
	} else {
		var err error
		if r.vals, r.raw, err = readValues(br, r.raw, r.vals, vals); err != nil {
			return blockRequest{}, fmt.Errorf("%w: reading the %d values of a block request: %w", errStream, vals, truncatedText(err))
		}
	}
	at := 0
	for b := range r.blocks {
		bl := &r.blocks[b]
		bl.Features = r.feats[spans[b].lo:spans[b].hi:spans[b].hi]
		n := bl.Rows() * len(bl.Features) * (bl.End - bl.Start + 1)
		bl.Values = r.vals[at : at+n : at+n]
		at += n
	}
	return blockRequest{blocks: r.blocks, rows: rows}, nil
}

// predict predicts each block with m, a model of k outputs per instance,
// on the working copy with the block applied (restoring a different block
// first). A model must not modify its batch (tempora.Model); one that does
// would change what every later block sees, so before answering the first
// block request on new resident data, the working copy is restored and
// compared with the data in the rows the request predicted
// (checkUnchanged). Once per resident data frame: a check per request read
// the rows' every cell, which at 500 × 100 × 200 tripled the cost of a
// request of 32 draws of one feature (BenchmarkDrawTransport), where a draw
// costs the cells it perturbs; a model that writes into its batch writes
// at its first call.
func (r *modelSide) predict(m tempora.Model, dst []float64, blocks []resident.Block, k int) error {
	at := 0
	lo, hi := r.x.M, 0
	for n := range blocks {
		b := &blocks[n]
		if r.isDirty && !sameCells(&r.dirty, b) {
			r.clean()
		}
		b.Apply(r.work)
		r.dirty = resident.Block{Lo: b.Lo, Hi: b.Hi, Start: b.Start, End: b.End, Features: append(r.dirty.Features[:0], b.Features...)}
		r.isDirty = true
		if err := m.Predict(dst[at*k:(at+b.Rows())*k], r.work.Rows(b.Lo, b.Hi)); err != nil {
			return fmt.Errorf("block %d (rows [%d, %d)): %w", n, b.Lo, b.Hi, err)
		}
		at += b.Rows()
		lo, hi = min(lo, b.Lo), max(hi, b.Hi)
	}
	if r.checked {
		return nil
	}
	r.checked = true
	r.clean()
	return r.checkUnchanged(lo, hi)
}

// checkUnchanged returns an error naming the first cell of rows [lo, hi)
// in which the working copy, restored, differs from the data: the model
// wrote into its batch.
func (r *modelSide) checkUnchanged(lo, hi int) error {
	n := r.x.D * r.x.L
	w, x := r.work.Data[lo*n:hi*n], r.x.Data[lo*n:hi*n]
	if bytes.Equal(float64Bytes(w), float64Bytes(x)) {
		return nil
	}
	for c := range w {
		if math.Float64bits(w[c]) != math.Float64bits(x[c]) {
			i, j, t := lo+c/n, c/r.x.L%r.x.D, c%r.x.L
			copy(w, x) // this connection stops; leave the copy as the data
			return fmt.Errorf("the model wrote into its batch (instance %d, feature %d, timestep %d: %v became %v): a tempora.Model must not modify x; copy x before changing it", i, j, t, x[c], w[c])
		}
	}
	return nil
}

// clean restores the working copy's perturbed block.
func (r *modelSide) clean() {
	if !r.isDirty {
		return
	}
	b, x, w := &r.dirty, r.x, r.work
	for i := b.Lo; i < b.Hi; i++ {
		for _, j := range b.Features {
			o := (i*x.D+j)*x.L + b.Start
			copy(w.Data[o:o+b.End-b.Start+1], x.Data[o:])
		}
	}
	r.isDirty = false
}

// sameCells reports whether blocks a and b cover the same cells.
func sameCells(a, b *resident.Block) bool {
	return a.Lo == b.Lo && a.Hi == b.Hi && a.Start == b.Start && a.End == b.End && slices.Equal(a.Features, b.Features)
}

// getShared reads little-endian float64 values from b into dst.
func getShared(dst []float64, b []byte) { getFloats(dst, b) }

// float64Bytes returns the memory of v as bytes, for a comparison of bit
// patterns (NaN payloads included).
func float64Bytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
}
