package procmodel

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// Shared requests (see docs/protocol.md, "Connections and shared buffers"):
// the header of an ordinary request plus the byte offset, in the shared
// buffer, of the values, which do not follow the header.
const (
	sharedRequestMagic      = "TMPM"
	sharedRequestHeaderSize = requestHeaderSize + 8 // + u64 offset
)

// connDepth is how many requests a Conn keeps in flight: while the model
// answers one, the next is already written (into the other half of the
// shared buffer) and waiting in the socket, so the model goes from one
// batch to the next without waiting for tempora.
const connDepth = 2

// Conn is a tempora.Model answered by a model over an already connected
// stream socket, typically one end of a socketpair inherited from the
// process that started tempora (the Python package starts tempora this way,
// so that the model stays in the user's process). It speaks the frames of
// Model over the socket, and closing the connection is the shutdown
// signal.
//
// A Conn may have a shared buffer: a file (on Linux, a memfd) mapped by
// both sides. A request whose values fit in half of the buffer is then
// sent as a "TMPM" header alone, the values being written into that half,
// which saves copying them through the socket; larger requests are sent
// inline as usual.
//
// Conn keeps up to two requests in flight (the protocol answers in request
// order), so that the model never waits for tempora between batches. It is
// safe for concurrent use. After any error the connection is closed and
// every later call returns the same error. Close must be called to end the
// connection.
type Conn struct {
	name   string
	opts   Options
	ctx    context.Context
	conn   net.Conn
	shared []byte       // mapped shared buffer, nil if none
	unmap  func() error // releases shared
	stop   func() bool  // unregisters the context watch

	slots   chan int   // free request slots: indices of the halves of shared
	wmu     sync.Mutex // serialises writes, so that pending has the wire order
	wbuf    []byte
	pending chan *connCall // requests written, awaiting their answers in order
	reader  chan struct{}  // closed when the answer reader has returned

	held *tempora.Tensor // the model's resident data; guarded by wmu
	// start is what the hello said about data the model holds from the
	// start; sent records that resident data has been sent,
	// replacing it. Both guarded by wmu.
	start heldData
	sent  bool
	// k is the model's outputs per instance (its hello).
	k int
	// checked records that a Predict call compared its batch with the
	// held data: only the first batch of the held data's shape is (the
	// explainer's baseline; the CRC-32 of a large batch is not free, and
	// other methods predict many perturbed copies of that shape).
	checked bool
	hmu     sync.Mutex // serialises hold, so that one caller sends the data

	mu     sync.Mutex
	err    error // sticky error; ErrClosed after Close
	closed bool
}

// connCall is one request in flight.
type connCall struct {
	dst  []float64
	hold bool // resident data was sent just before: its acknowledgement comes first
	sent time.Time
	done chan error
}

var _ HeldMember = (*Conn)(nil)

// Attach returns a Conn over sock, a connected stream socket (such as an
// inherited socketpair end), optionally with the shared buffer file shared
// (nil for none; it must be a regular or memory file of at least 16 bytes),
// and waits for the model's hello frame. Attach takes ownership of both
// files: it closes them (after duplicating or mapping them) whether or not
// it succeeds.
//
// Options.Timeout, StartTimeout and MaxBatch apply as for Start; the other
// options concern processes and are ignored. Cancelling ctx closes the
// connection.
func Attach(ctx context.Context, sock, shared *os.File, opts Options) (*Conn, error) {
	if sock == nil {
		if shared != nil {
			shared.Close()
		}
		return nil, errors.New("procmodel: nil model connection")
	}
	name := fmt.Sprintf("connection %s", sock.Name())
	nc, err := net.FileConn(sock)
	sock.Close()
	if err != nil {
		if shared != nil {
			shared.Close()
		}
		return nil, fmt.Errorf("procmodel: model %s is not a connected socket: %w", name, err)
	}
	var (
		buf   []byte
		unmap func() error
	)
	if shared != nil {
		buf, unmap, err = mapShared(shared)
		shared.Close()
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("procmodel: model %s: shared buffer: %w", name, err)
		}
	}
	return newConn(ctx, nc, buf, unmap, name, opts)
}

// newConn wraps nc (and the mapped shared buffer buf, released by unmap),
// waits for the hello frame and starts the answer reader.
func newConn(ctx context.Context, nc net.Conn, buf []byte, unmap func() error, name string, opts Options) (*Conn, error) {
	if unmap == nil {
		unmap = func() error { return nil }
	}
	if opts.Timeout < 0 || opts.StartTimeout < 0 || opts.MaxBatch < 0 || opts.MaxBatch > MaxBatchLimit {
		nc.Close()
		unmap()
		return nil, fmt.Errorf("procmodel: option out of range in %+v (MaxBatch at most %d)", opts, MaxBatchLimit)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = opts.Timeout
	}
	c := &Conn{
		name: name, opts: opts, ctx: ctx, conn: nc, shared: buf, unmap: unmap,
		slots: make(chan int, connDepth), pending: make(chan *connCall, connDepth), reader: make(chan struct{}),
	}
	for s := range connDepth {
		c.slots <- s
	}
	c.stop = context.AfterFunc(ctx, func() { nc.Close() })
	r := bufio.NewReaderSize(nc, 1<<16)
	if opts.StartTimeout > 0 {
		nc.SetReadDeadline(time.Now().Add(opts.StartTimeout))
	}
	h, err := readHello(r, connEOF)
	c.start, c.k = h.held, h.k
	err = c.cause(err, opts.StartTimeout)
	nc.SetReadDeadline(time.Time{})
	if err != nil {
		c.fail(err)
		close(c.reader)
		c.release()
		return nil, c.err
	}
	go c.readAnswers(r)
	return c, nil
}

// slotBytes is the size of each request slot of the shared buffer.
func (c *Conn) slotBytes() int { return len(c.shared) / connDepth &^ 7 }

// Outputs returns the number of outputs per instance the model announced
// in its hello: 1 unless it announced K (docs/protocol.md).
func (c *Conn) Outputs() int { return c.k }

// Predict writes the model's predictions for x into dst, which must have
// length x.M·Outputs() (instance-major). It implements tempora.Model. An
// empty batch is answered without calling the model.
func (c *Conn) Predict(dst []float64, x *tempora.Tensor) error {
	if err := checkBatch(dst, x, c.k); err != nil {
		return err
	}
	if err := c.sticky(); err != nil {
		return err
	}
	if c.holds(x) {
		return predictHeld(c, dst, x)
	}
	step := x.M
	if c.opts.MaxBatch > 0 {
		step = c.opts.MaxBatch
	}
	for lo := 0; lo < x.M; lo += step {
		hi := min(lo+step, x.M)
		if err := c.call(dst[lo*c.k:hi*c.k], x.Rows(lo, hi)); err != nil {
			return err
		}
	}
	return nil
}

// call sends one request and waits for its answer.
func (c *Conn) call(dst []float64, x *tempora.Tensor) error {
	slot := <-c.slots
	defer func() { c.slots <- slot }()
	n := len(x.Data)
	shared := 8*n <= c.slotBytes()
	offset := slot * c.slotBytes()
	if shared {
		// The slot is ours until its answer is read: fill it outside the
		// write lock, while the other request may be on the wire.
		putShared(c.shared[offset:], x.Data)
	}
	cl := &connCall{dst: dst, done: make(chan error, 1)}
	c.wmu.Lock()
	if err := c.sticky(); err != nil {
		c.wmu.Unlock()
		return err
	}
	var err error
	if c.opts.Timeout > 0 {
		c.conn.SetWriteDeadline(time.Now().Add(c.opts.Timeout))
	}
	if shared {
		var h [sharedRequestHeaderSize]byte
		copy(h[:], sharedRequestMagic)
		le := binary.LittleEndian
		le.PutUint32(h[4:], Version)
		le.PutUint32(h[8:], uint32(x.M))
		le.PutUint32(h[12:], uint32(x.D))
		le.PutUint32(h[16:], uint32(x.L))
		le.PutUint64(h[20:], uint64(offset))
		_, err = c.conn.Write(h[:])
	} else {
		c.wbuf, err = writeRequest(c.conn, c.wbuf, x)
	}
	if err != nil {
		err = c.fail(c.cause(fmt.Errorf("%w while receiving a batch of %d instances: %w", ErrExited, x.M, connEOF(err)), c.opts.Timeout))
		c.wmu.Unlock()
		return err
	}
	cl.sent = time.Now()
	c.pending <- cl // never blocks: at most connDepth calls hold slots
	c.wmu.Unlock()
	return <-cl.done
}

// Hold implements resident.Model. The data is sent with the first
// PredictBlocks call on it, unless the model holds it from the start.
func (c *Conn) Hold(x *tempora.Tensor) error { return nil }

// BatchLimit implements resident.Model: Options.MaxBatch.
func (c *Conn) BatchLimit() int { return c.opts.MaxBatch }

// PredictBlocks implements resident.Model. It sends x to the model as
// resident data when the model does not hold it yet (in front of the first
// block request on it), then the blocks in requests of at most
// Options.MaxBatch rows, whose values cross through the shared buffer when
// they fit a request slot.
func (c *Conn) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	if _, _, err := checkBlocks(dst, x, blocks, c.k); err != nil {
		return err
	}
	if err := c.sticky(); err != nil {
		return err
	}
	if len(blocks) == 0 {
		return nil
	}
	if err := c.hold(x); err != nil {
		return err
	}
	return splitBlocks(dst, blocks, c.opts.MaxBatch, c.k, func(dst []float64, blocks []resident.Block) error {
		return c.callBlocks(dst, x, blocks)
	})
}

// PredictBlocksFilled implements resident.Model: when the blocks'
// values fit a request slot of the shared buffer (and no batch limit cuts
// them), fill writes them straight into the slot, and the block request
// refers to them there; otherwise fill writes into scratch and the call
// goes as PredictBlocks.
func (c *Conn) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	if len(blocks) == 0 {
		_, _, err := checkBlocks(dst, x, nil, c.k)
		return err
	}
	filled, vals := resident.Filled(blocks, scratch)
	rows, n, err := checkBlocks(dst, x, filled, c.k)
	if err != nil {
		return err
	}
	if !littleEndian || 8*n > c.slotBytes() || (c.opts.MaxBatch > 0 && rows > c.opts.MaxBatch) {
		if err := fill(vals); err != nil {
			return err
		}
		return c.PredictBlocks(dst, x, filled)
	}
	if err := c.sticky(); err != nil {
		return err
	}
	if err := c.hold(x); err != nil {
		return err
	}
	return c.callBlocksFilled(dst, x, filled, rows, n, fill)
}

// callBlocksFilled is callBlocks with the values written by fill into the
// request slot.
func (c *Conn) callBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, rows, vals int, fill func([]float64) error) error {
	slot := <-c.slots
	defer func() { c.slots <- slot }()
	offset := slot * c.slotBytes()
	if vals > 0 {
		b := c.shared[offset : offset+8*vals]
		if err := fill(unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), vals)); err != nil {
			return err
		}
	}
	return c.sendBlocks(dst, x, len(blocks), rows, func() (err error) {
		c.wbuf, err = writeBlocksHeader(c.conn, c.wbuf, blocks, rows, vals, offset)
		return err
	})
}

// holds reports whether the model holds x as its resident data: x was
// sent, or the model holds it from the start (its hello) and nothing
// replaced it.
func (c *Conn) holds(x *tempora.Tensor) bool {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	c.wmu.Lock()
	held, adopt := c.held == x, !c.sent && c.start.ok && !c.checked
	c.checked = c.checked || adopt && x.M == c.start.m && x.D == c.start.d && x.L == c.start.l
	c.wmu.Unlock()
	if held || !adopt || !c.start.matches(x) {
		return held
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.sent {
		c.held = x
	}
	return c.held == x
}

// hold makes x the model's resident data. When the model said in its
// hello that it holds data from the start and nothing replaced it yet, and
// that data is x (same shape and CRC-32), nothing is sent. Otherwise hold
// sends x through the shared buffer, as a call of its own, when the model
// does not hold it and it fits a request slot; else (no buffer, or too
// large) callBlocks sends it inline, in front of the block request, as it
// does when another caller's data took its place in between.
func (c *Conn) hold(x *tempora.Tensor) error {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	c.wmu.Lock()
	held := c.held == x
	adopt := !held && !c.sent && c.start.ok
	c.wmu.Unlock()
	if adopt && c.start.matches(x) {
		c.wmu.Lock()
		if !c.sent {
			c.held = x
		}
		held = c.held == x
		c.wmu.Unlock()
	}
	if held || 8*len(x.Data) > c.slotBytes() {
		return nil
	}
	slot := <-c.slots
	defer func() { c.slots <- slot }()
	offset := slot * c.slotBytes()
	putShared(c.shared[offset:], x.Data)
	cl := &connCall{done: make(chan error, 1)}
	c.wmu.Lock()
	if err := c.sticky(); err != nil {
		c.wmu.Unlock()
		return err
	}
	if c.held == x {
		c.wmu.Unlock()
		return nil
	}
	if c.opts.Timeout > 0 {
		c.conn.SetWriteDeadline(time.Now().Add(c.opts.Timeout))
	}
	var err error
	if c.wbuf, err = writeResident(c.conn, c.wbuf, x, offset); err != nil {
		err = c.fail(c.cause(fmt.Errorf("%w while receiving resident data of %d instances: %w", ErrExited, x.M, connEOF(err)), c.opts.Timeout))
		c.wmu.Unlock()
		return err
	}
	c.held, c.sent = x, true
	cl.sent = time.Now()
	c.pending <- cl
	c.wmu.Unlock()
	return <-cl.done
}

// sendBlocks sends one block request of n blocks and rows instances,
// written by write (preceded by the resident data if the model does not
// hold x), and waits for its answer.
func (c *Conn) sendBlocks(dst []float64, x *tempora.Tensor, n, rows int, write func() error) error {
	cl := &connCall{dst: dst, done: make(chan error, 1)}
	c.wmu.Lock()
	if err := c.sticky(); err != nil {
		c.wmu.Unlock()
		return err
	}
	if c.opts.Timeout > 0 {
		c.conn.SetWriteDeadline(time.Now().Add(c.opts.Timeout))
	}
	var err error
	if c.held != x {
		cl.hold = true
		c.held, c.sent = x, true
		c.wbuf, err = writeResident(c.conn, c.wbuf, x, -1)
	}
	if err == nil {
		err = write()
	}
	if err != nil {
		err = c.fail(c.cause(fmt.Errorf("%w while receiving %d blocks of %d instances: %w", ErrExited, n, rows, connEOF(err)), c.opts.Timeout))
		c.wmu.Unlock()
		return err
	}
	cl.sent = time.Now()
	c.pending <- cl
	c.wmu.Unlock()
	return <-cl.done
}

// callBlocks sends one block request (and the resident data before it if
// the model does not hold x) and waits for its answer.
func (c *Conn) callBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	rows, vals, _ := checkBlocks(dst, x, blocks, c.k)
	slot := <-c.slots
	defer func() { c.slots <- slot }()
	var shared []byte
	offset := slot * c.slotBytes()
	if 8*vals <= c.slotBytes() {
		shared = c.shared[offset : offset+8*vals]
	}
	return c.sendBlocks(dst, x, len(blocks), rows, func() (err error) {
		c.wbuf, err = writeBlocks(c.conn, c.wbuf, blocks, rows, vals, shared, offset)
		return err
	})
}

// readAnswers reads the answers, in request order, into the pending calls.
// After a failure it answers every remaining call with the sticky error. It
// returns when Close closes pending.
func (c *Conn) readAnswers(r *bufio.Reader) {
	defer close(c.reader)
	var (
		buf  []byte
		last time.Time // when the previous answer was read
	)
	for cl := range c.pending {
		if err := c.sticky(); err != nil {
			cl.done <- err
			continue
		}
		if d := c.opts.Timeout; d > 0 {
			// The model starts on this request when it has answered the
			// previous one.
			c.conn.SetReadDeadline(later(cl.sent, last).Add(d))
		}
		var err error
		if cl.hold {
			buf, err = readAnswer(r, buf, nil, 1, connEOF)
		}
		if err == nil {
			buf, err = readAnswer(r, buf, cl.dst, c.k, connEOF)
		}
		last = time.Now()
		if err != nil {
			err = c.fail(c.cause(err, c.opts.Timeout))
		}
		cl.done <- err
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// cause reports the context's error, or ErrTimeout for an expired
// deadline (limit d), in place of the I/O error they cause.
func (c *Conn) cause(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	if cerr := c.ctx.Err(); cerr != nil {
		return fmt.Errorf("procmodel: model stopped: %w", cerr)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w (limit %v)", ErrTimeout, d)
	}
	return err
}

func (c *Conn) sticky() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// fail records the first error (naming the connection) as sticky, closes
// the connection, and returns the sticky error.
func (c *Conn) fail(cause error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = &modelError{msg: fmt.Sprintf("%v [model %s]", cause, c.name), cause: cause}
		c.conn.Close()
	}
	return c.err
}

// release frees the shared buffer and the context watch.
func (c *Conn) release() {
	c.stop()
	c.unmap()
	c.shared = nil
}

// Close ends the connection, which tells the model to shut down. It waits
// for the calls in flight (cancel Attach's context to interrupt them).
// Close is idempotent; Predict returns ErrClosed afterwards. It returns an
// error only if closing the socket fails.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	// Wait for the calls in flight: they hold the slots.
	for range connDepth {
		<-c.slots
	}
	c.mu.Lock()
	var err error
	if c.err == nil {
		if cerr := c.conn.Close(); cerr != nil {
			err = fmt.Errorf("procmodel: closing model %s: %w", c.name, cerr)
		}
	}
	c.err = ErrClosed
	c.mu.Unlock()
	c.wmu.Lock()
	close(c.pending) // no call gets past the sticky error to send any more
	c.wmu.Unlock()
	<-c.reader
	c.release()
	for s := range connDepth {
		c.slots <- s // callers waiting for a slot get ErrClosed
	}
	return err
}

// depth is the number of calls a Pool hands the connection at once.
func (c *Conn) depth() int { return connDepth }

// littleEndian reports whether this machine stores float64 values as the
// protocol does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// putShared writes v into the shared buffer b as little-endian float64. On
// little-endian machines that is a plain memory copy, several times faster
// than encoding value by value (a Table-1 batch is 1.6 MB); b comes from
// a page-aligned mapping at a multiple of 8 bytes, so the float64 view is
// aligned.
func putShared(b []byte, v []float64) {
	if littleEndian && len(v) > 0 {
		copy(unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b[:8*len(v)]))), len(v)), v)
		return
	}
	putFloats(b, v)
}

// connEOF turns an end of file into a readable cause.
func connEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the connection was closed")
	}
	return err
}
