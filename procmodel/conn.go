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

	"github.com/tempora-dev/tempora"
)

// sharedRequestMagic starts a request whose values are in the connection's
// shared buffer instead of following the header (see docs/protocol.md,
// "Connections and shared buffers").
const sharedRequestMagic = "TMPM"

// Conn is a tempora.Model answered by a model over an already connected
// stream socket, typically one end of a socketpair inherited from the
// process that started tempora (the Python package starts tempora this way,
// so that the model stays in the user's process). It speaks the same frames
// as Model; the connection replaces the child's standard input and output,
// and closing it is the shutdown signal.
//
// A Conn may have a shared buffer: a file (on Linux, a memfd) mapped by
// both sides. A request whose values fit in the buffer is then sent as a
// "TMPM" header alone, with the values written into the buffer, which saves
// copying them through the socket; larger requests are sent inline as
// usual.
//
// Conn is safe for concurrent use: calls are serialised. After any error
// the connection is closed and every later call returns the same error.
// Close must be called to end the connection.
type Conn struct {
	name   string
	opts   Options
	ctx    context.Context
	conn   net.Conn
	r      *bufio.Reader
	shared []byte       // mapped shared buffer, nil if none
	unmap  func() error // releases shared
	stop   func() bool  // unregisters the context watch

	mu     sync.Mutex
	err    error // sticky error; ErrClosed after Close
	wbuf   []byte
	rbuf   []byte
	closed bool
}

var _ tempora.Model = (*Conn)(nil)

// Attach returns a Conn over sock, a connected stream socket (such as an
// inherited socketpair end), optionally with the shared buffer file shared
// (nil for none; it must be a regular or memory file of at least 8 bytes),
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

// newConn wraps nc (and the mapped shared buffer buf, released by unmap) and
// waits for the hello frame.
func newConn(ctx context.Context, nc net.Conn, buf []byte, unmap func() error, name string, opts Options) (*Conn, error) {
	if opts.Timeout < 0 || opts.StartTimeout < 0 || opts.MaxBatch < 0 {
		nc.Close()
		if unmap != nil {
			unmap()
		}
		return nil, fmt.Errorf("procmodel: negative option in %+v", opts)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if unmap == nil {
		unmap = func() error { return nil }
	}
	c := &Conn{name: name, opts: opts, ctx: ctx, conn: nc, r: bufio.NewReaderSize(nc, 1<<16), shared: buf, unmap: unmap}
	c.stop = context.AfterFunc(ctx, func() { nc.Close() })
	err := c.within(opts.StartTimeout, func() error {
		var h [helloSize]byte
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			return fmt.Errorf("%w before its hello frame: %w", ErrExited, connEOF(err))
		}
		if string(h[:4]) != helloMagic {
			return fmt.Errorf("%w: expected the hello frame %q, got %q", ErrProtocol, helloMagic, h[:])
		}
		if v := binary.LittleEndian.Uint32(h[4:]); v != Version {
			return fmt.Errorf("%w: model speaks protocol version %d, want %d", ErrProtocol, v, Version)
		}
		return nil
	})
	if err != nil {
		c.fail(err)
		c.release()
		return nil, c.err
	}
	return c, nil
}

// SharedSize returns the size in bytes of the shared buffer, 0 without one.
func (c *Conn) SharedSize() int { return len(c.shared) }

// Predict writes the model's predictions for x into dst, which must have
// length x.M. It implements tempora.Model. An empty batch is answered
// without calling the model.
func (c *Conn) Predict(dst []float64, x *tempora.Tensor) error {
	if err := checkBatch(dst, x); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	step := x.M
	if c.opts.MaxBatch > 0 {
		step = c.opts.MaxBatch
	}
	for lo := 0; lo < x.M; lo += step {
		hi := min(lo+step, x.M)
		if err := c.within(c.opts.Timeout, func() error { return c.roundTrip(dst[lo:hi], x.Rows(lo, hi)) }); err != nil {
			return c.fail(err)
		}
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

// roundTrip sends one request (through the shared buffer if it fits) and
// reads its answer into dst.
func (c *Conn) roundTrip(dst []float64, x *tempora.Tensor) error {
	var err error
	if n := len(x.Data); n > 0 && 8*n <= len(c.shared) {
		putFloats(c.shared, x.Data)
		var h [requestHeaderSize]byte
		copy(h[:], sharedRequestMagic)
		le := binary.LittleEndian
		le.PutUint32(h[4:], Version)
		le.PutUint32(h[8:], uint32(x.M))
		le.PutUint32(h[12:], uint32(x.D))
		le.PutUint32(h[16:], uint32(x.L))
		_, err = c.conn.Write(h[:])
	} else {
		c.wbuf, err = writeRequest(c.conn, c.wbuf, x)
	}
	if err != nil {
		return fmt.Errorf("%w while receiving a batch of %d instances: %w", ErrExited, x.M, connEOF(err))
	}
	c.rbuf, err = readAnswer(c.r, c.rbuf, dst)
	return err
}

// readAnswer reads one answer frame for len(dst) instances from r into dst,
// decoding through buf (returned for reuse).
func readAnswer(r io.Reader, buf []byte, dst []float64) ([]byte, error) {
	var h [responseHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return buf, fmt.Errorf("%w before answering a batch of %d instances: %w", ErrExited, len(dst), connEOF(err))
	}
	if string(h[:4]) != responseMagic {
		return buf, fmt.Errorf("%w: expected an answer frame starting %q, got %q", ErrProtocol, responseMagic, h[:])
	}
	status, n := binary.LittleEndian.Uint32(h[4:]), int(binary.LittleEndian.Uint32(h[8:]))
	switch status {
	case statusOK:
		if n != len(dst) {
			return buf, fmt.Errorf("%w: %d predictions for a batch of %d instances", ErrProtocol, n, len(dst))
		}
		var err error
		if buf, err = readFloats(r, buf, dst); err != nil {
			return buf, fmt.Errorf("%w in the middle of an answer (%d predictions announced): %w", ErrExited, n, connEOF(err))
		}
		return buf, nil
	case statusError:
		if n > maxMessage {
			return buf, fmt.Errorf("%w: error message of %d bytes", ErrProtocol, n)
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(r, msg); err != nil {
			return buf, fmt.Errorf("%w in the middle of an error message: %w", ErrExited, connEOF(err))
		}
		return buf, fmt.Errorf("%w: %s", ErrModel, msg)
	}
	return buf, fmt.Errorf("%w: unknown status %d", ErrProtocol, status)
}

// within runs f with a deadline d on the connection (none if d is zero) and
// reports ErrTimeout or the context's error in place of the I/O error they
// cause.
func (c *Conn) within(d time.Duration, f func() error) error {
	if d > 0 {
		c.conn.SetDeadline(time.Now().Add(d))
		defer c.conn.SetDeadline(time.Time{})
	}
	err := f()
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

// fail closes the connection, records the error (naming the connection) as
// sticky and returns it.
func (c *Conn) fail(cause error) error {
	c.conn.Close()
	c.err = &modelError{msg: fmt.Sprintf("%v [model %s]", cause, c.name), cause: cause}
	return c.err
}

// release frees the shared buffer and the context watch.
func (c *Conn) release() {
	c.stop()
	c.unmap()
	c.shared = nil
}

// Close ends the connection, which tells the model to shut down. It waits
// for a Predict in progress (cancel Attach's context to interrupt one). Close
// is idempotent; Predict returns ErrClosed afterwards. It returns an error
// only if closing the socket fails.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	var err error
	if c.err == nil {
		if cerr := c.conn.Close(); cerr != nil {
			err = fmt.Errorf("procmodel: closing model %s: %w", c.name, cerr)
		}
	}
	c.err = ErrClosed
	c.release()
	return err
}

// connEOF turns an end of file into a readable cause.
func connEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the connection was closed")
	}
	return err
}
