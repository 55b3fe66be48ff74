package procmodel

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// Errors reported by Model. Predict and Start wrap them with details (the
// command, the child's exit status and the tail of its standard error), so
// test them with errors.Is.
var (
	// ErrExited means the child process exited, or closed its standard
	// output, when an answer was due.
	ErrExited = errors.New("procmodel: model process exited")
	// ErrTimeout means the child did not answer a request within
	// Options.Timeout, or did not send its hello frame within
	// Options.StartTimeout (Options.Timeout by default).
	ErrTimeout = errors.New("procmodel: model timed out")
	// ErrProtocol means the child wrote something that is not a valid
	// frame, or an answer with the wrong number of predictions.
	ErrProtocol = errors.New("procmodel: malformed answer from model")
	// ErrModel means the child reported an error for a batch (an error
	// frame); the message it sent follows.
	ErrModel = errors.New("procmodel: model reported an error")
	// ErrClosed means Predict was called after Close.
	ErrClosed = errors.New("procmodel: model is closed")
)

// MaxBatchLimit is the largest Options.MaxBatch: the most predictions one
// answer frame carries.
const MaxBatchLimit = maxValues

// DefaultCloseTimeout is the time Close gives the child to exit after its
// standard input is closed when Options.CloseTimeout is zero.
const DefaultCloseTimeout = 5 * time.Second

// stderrTail is how many bytes of the child's standard error are kept for
// error messages.
const stderrTail = 2048

// Options configures Start. The zero value is usable: no per-request time
// limit, whole batches per request, the child's standard error copied to
// os.Stderr, the current directory and environment.
type Options struct {
	// Timeout bounds the time the child may take to answer one request
	// (one chunk, see MaxBatch). Zero means no limit. When it expires the
	// child is killed and Predict returns an error wrapping ErrTimeout.
	Timeout time.Duration
	// StartTimeout bounds the time until the child's hello frame, that
	// is, the time to load the model. Zero means Timeout, so that one
	// limit covers every wait on the child (and zero for both means no
	// limit, as for requests).
	StartTimeout time.Duration
	// CloseTimeout bounds the time Close waits for the child to exit after
	// its standard input is closed, before killing it. Zero means
	// DefaultCloseTimeout.
	CloseTimeout time.Duration
	// MaxBatch, if positive, splits a Predict call into requests of at most
	// MaxBatch instances (for models with limited memory), and so does
	// PredictBlocks with the rows of its blocks; explainers pack draws
	// into calls of at most that many instances (BatchLimit). Zero means
	// one request per call. It is at most MaxBatchLimit.
	MaxBatch int
	// Stderr receives the child's standard error as it is written. Nil
	// means os.Stderr; use io.Discard to silence the child. The last
	// lines are also kept for error messages.
	Stderr io.Writer
	// Dir is the child's working directory; empty means the current one.
	Dir string
	// Env is the child's environment; nil means the current one.
	Env []string
}

// Model is a tempora.Model computed by a child process that speaks the
// protocol described in the package documentation. One process serves the
// whole lifetime of the Model. Model is safe for concurrent use: calls are
// serialised. After any error the process is killed and every later call
// returns the same error. Close must be called to end the process.
type Model struct {
	name string
	opts Options
	ctx  context.Context
	cmd  *exec.Cmd
	pid  int

	stdin  *os.File
	stdout *bufio.Reader
	rawOut *os.File
	stderr *tailWriter
	exited chan struct{} // closed when cmd.Wait has returned
	wait   error         // cmd.Wait's result, set before exited is closed

	mu      sync.Mutex
	err     error // sticky error; ErrClosed after Close
	wbuf    []byte
	rbuf    []byte
	closed  bool
	held    *tempora.Tensor // the child's resident data
	start   heldData        // the data the child holds from the start (its hello)
	k       int             // outputs per instance (its hello)
	sent    bool            // resident data was sent, replacing start's
	checked bool            // a Predict call compared its batch with start's (see holds)
}

var _ HeldMember = (*Model)(nil)

// Start starts command (the program and its arguments, e.g. from
// SplitCommand) as a child process in its own process group and waits for
// its hello frame. Cancelling ctx kills the child (and its process group);
// the Model is unusable afterwards.
//
// Start returns an error if command is empty, the program cannot be started,
// or the child exits, sends no hello frame within Options.StartTimeout
// (Options.Timeout by default; the error then wraps ErrTimeout and says that
// the hello frame is missing) or writes something other than a hello frame
// of this protocol version (a model side of version 1 is told how to
// upgrade). The error includes the tail of the child's standard error.
func Start(ctx context.Context, command []string, opts Options) (*Model, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, errors.New("procmodel: empty model command")
	}
	if opts.Timeout < 0 || opts.StartTimeout < 0 || opts.CloseTimeout < 0 || opts.MaxBatch < 0 {
		return nil, fmt.Errorf("procmodel: negative option in %+v", opts)
	}
	if opts.MaxBatch > MaxBatchLimit {
		return nil, fmt.Errorf("procmodel: MaxBatch %d: at most %d instances per call", opts.MaxBatch, MaxBatchLimit)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = opts.Timeout
	}
	if opts.CloseTimeout == 0 {
		opts.CloseTimeout = DefaultCloseTimeout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	m := &Model{
		name:   command[0],
		opts:   opts,
		ctx:    ctx,
		stderr: &tailWriter{w: opts.Stderr},
		exited: make(chan struct{}),
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env
	cmd.Stderr = m.stderr
	setProcessGroup(cmd)
	cmd.Cancel = func() error { killGroup(cmd.Process); return nil }
	// Wait must not block forever on a grandchild that inherited the
	// standard error pipe; the group is killed anyway.
	cmd.WaitDelay = time.Second

	// The pipes are made here, not with StdinPipe/StdoutPipe, because Wait
	// closes those: a crash report could then race with reading the last
	// answer.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("procmodel: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("procmodel: %w", err)
	}
	enlargePipe(inW)
	enlargePipe(outR)
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("procmodel: starting model: %w", err)
	}
	m.cmd, m.pid = cmd, cmd.Process.Pid
	m.stdin, m.rawOut = inW, outR
	m.stdout = bufio.NewReaderSize(outR, 1<<16)
	go func() {
		m.wait = cmd.Wait()
		close(m.exited)
	}()

	err = m.withTimeout(opts.StartTimeout, "no hello frame (a model program writes it once its model is loaded, see docs/protocol.md)", func() error {
		h, err := readHello(m.stdout, eofText)
		m.start, m.k = h.held, h.k
		return err
	})
	if err != nil {
		return nil, m.fail(err)
	}
	return m, nil
}

// Pid returns the process id of the child.
func (m *Model) Pid() int { return m.pid }

// Outputs returns the number of outputs per instance the child announced
// in its hello: 1 unless it announced K (docs/protocol.md).
func (m *Model) Outputs() int { return m.k }

// Predict writes the child's predictions for x into dst, which must have
// length x.M·Outputs() (instance-major). It implements tempora.Model. An
// empty batch is answered without calling the child.
func (m *Model) Predict(dst []float64, x *tempora.Tensor) error {
	if err := checkBatch(dst, x, m.k); err != nil {
		return err
	}
	if x.M > 0 && m.holds(x) {
		return predictHeld(m, dst, x)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	if x.M == 0 {
		return nil
	}
	step := x.M
	if m.opts.MaxBatch > 0 {
		step = m.opts.MaxBatch
	}
	for lo := 0; lo < x.M; lo += step {
		hi := min(lo+step, x.M)
		err := m.withTimeout(m.opts.Timeout, fmt.Sprintf("no answer to a batch of %d instances", hi-lo), func() error {
			return m.roundTrip(dst[lo*m.k:hi*m.k], x.Rows(lo, hi))
		})
		if err != nil {
			return m.fail(err)
		}
	}
	return nil
}

// roundTrip sends one request and reads its answer into dst.
func (m *Model) roundTrip(dst []float64, x *tempora.Tensor) error {
	var err error
	if m.wbuf, err = writeRequest(m.stdin, m.wbuf, x); err != nil {
		return fmt.Errorf("%w while receiving a batch of %d instances: %v", ErrExited, x.M, err)
	}
	m.rbuf, err = readAnswer(m.stdout, m.rbuf, dst, m.k, eofText)
	return err
}

// holds reports whether the child holds x as its resident data: x was
// sent, or the child holds it from the start (its hello) and nothing
// replaced it. Like Conn, it compares only the first batch of the held
// data's shape with it.
func (m *Model) holds(x *tempora.Tensor) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return false
	}
	if m.held == x {
		return true
	}
	if m.sent || !m.start.ok || m.checked || x.M != m.start.m || x.D != m.start.d || x.L != m.start.l {
		return false
	}
	m.checked = true
	if m.start.matches(x) {
		m.held = x
		return true
	}
	return false
}

// Hold implements resident.Model. The data is sent with the first
// PredictBlocks call on it, unless the child holds it from the start.
func (m *Model) Hold(x *tempora.Tensor) error { return nil }

// BatchLimit implements resident.Model: Options.MaxBatch.
func (m *Model) BatchLimit() int { return m.opts.MaxBatch }

// PredictBlocks implements resident.Model. It sends x to the child as
// resident data when the child does not hold it yet, then the blocks in
// requests of at most Options.MaxBatch rows.
func (m *Model) PredictBlocks(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
	if _, _, err := checkBlocks(dst, x, blocks, m.k); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	if len(blocks) == 0 {
		return nil
	}
	if m.held != x && !m.sent && m.start.matches(x) {
		m.held = x // the child holds x from the start (its hello)
	}
	if m.held != x {
		err := m.withTimeout(m.opts.Timeout, fmt.Sprintf("no answer to resident data of %d instances", x.M), func() error {
			var err error
			if m.wbuf, err = writeResident(m.stdin, m.wbuf, x, -1); err != nil {
				return fmt.Errorf("%w while receiving resident data of %d instances: %v", ErrExited, x.M, err)
			}
			m.rbuf, err = readAnswer(m.stdout, m.rbuf, nil, 1, eofText)
			return err
		})
		if err != nil {
			return m.fail(err)
		}
		m.held, m.sent = x, true
	}
	return splitBlocks(dst, blocks, m.opts.MaxBatch, m.k, func(dst []float64, blocks []resident.Block) error {
		rows, vals, _ := checkBlocks(dst, x, blocks, m.k)
		err := m.withTimeout(m.opts.Timeout, fmt.Sprintf("no answer to %d blocks of %d instances", len(blocks), rows), func() error {
			var err error
			if m.wbuf, err = writeBlocks(m.stdin, m.wbuf, blocks, rows, vals, nil, 0); err != nil {
				return fmt.Errorf("%w while receiving %d blocks of %d instances: %v", ErrExited, len(blocks), rows, err)
			}
			m.rbuf, err = readAnswer(m.stdout, m.rbuf, dst, m.k, eofText)
			return err
		})
		if err != nil {
			return m.fail(err)
		}
		return nil
	})
}

// PredictBlocksFilled implements resident.Model: a child over pipes has
// no memory tempora can write into, so fill writes into scratch
// (resident.FillScratch) and the call goes as PredictBlocks.
func (m *Model) PredictBlocksFilled(dst []float64, x *tempora.Tensor, blocks []resident.Block, scratch []float64, fill func([]float64) error) error {
	return resident.FillScratch(dst, x, blocks, scratch, fill, m.PredictBlocks)
}

// withTimeout runs f, killing the child if it takes longer than d (no limit
// if d is zero), and reports ErrTimeout (with what, the missing frame) or the
// context's error in place of the I/O error the kill causes. A kill that
// lands just as f succeeds still counts as a time-out, since the child is
// gone.
func (m *Model) withTimeout(d time.Duration, what string, f func() error) error {
	var (
		mu      sync.Mutex
		done    bool
		expired bool
	)
	if d > 0 {
		t := time.AfterFunc(d, func() {
			mu.Lock()
			defer mu.Unlock()
			if !done {
				expired = true
				killGroup(m.cmd.Process)
			}
		})
		defer t.Stop()
	}
	err := f()
	mu.Lock()
	done = true
	timedOut := expired
	mu.Unlock()
	if timedOut {
		return fmt.Errorf("%w after %v: %s", ErrTimeout, d, what)
	}
	if err == nil {
		return nil
	}
	if cerr := m.ctx.Err(); cerr != nil {
		return fmt.Errorf("procmodel: model stopped: %w", cerr)
	}
	return err
}

// fail kills the child, waits for it, records the error (with the child's
// command, exit status and standard error tail) as sticky, and returns it.
func (m *Model) fail(cause error) error {
	m.terminate(0)
	var b strings.Builder
	fmt.Fprintf(&b, "%v [model %s", cause, m.name)
	if ps := m.cmd.ProcessState; ps != nil {
		fmt.Fprintf(&b, ", %v", ps)
	}
	b.WriteByte(']')
	if tail := m.stderr.tail(); tail != "" {
		fmt.Fprintf(&b, "; model's last standard error lines:\n%s", tail)
	}
	m.err = &modelError{msg: b.String(), cause: cause}
	return m.err
}

// terminate closes the child's standard input, gives it grace to exit, then
// kills its process group and waits for it.
func (m *Model) terminate(grace time.Duration) {
	m.stdin.Close()
	if grace > 0 {
		select {
		case <-m.exited:
		case <-time.After(grace):
		}
	}
	// Kill the group even if the leader exited, so grandchildren die too.
	killGroup(m.cmd.Process)
	<-m.exited
	m.rawOut.Close()
}

// Close ends the child: it closes the child's standard input (the protocol's
// shutdown signal), waits up to Options.CloseTimeout for it to exit, then
// kills its process group and waits for it. It returns an error if the child
// had to be killed or exited with a failure status on its own; errors
// already reported by Predict are not repeated. Close waits for a Predict
// in progress (cancel Start's context to interrupt one). Close is idempotent;
// Predict returns ErrClosed afterwards.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	if m.err != nil {
		m.err = ErrClosed
		return nil
	}
	m.err = ErrClosed
	m.terminate(m.opts.CloseTimeout)
	if m.wait != nil {
		msg := fmt.Sprintf("procmodel: model %s did not exit cleanly on shutdown: %v", m.name, m.wait)
		if tail := m.stderr.tail(); tail != "" {
			msg += "; model's last standard error lines:\n" + tail
		}
		return errors.New(msg)
	}
	return nil
}

// modelError is a sticky Predict error: its message has the details, and it
// unwraps to the cause (and so to ErrTimeout, ErrExited and the others).
type modelError struct {
	msg   string
	cause error
}

func (e *modelError) Error() string { return e.msg }
func (e *modelError) Unwrap() error { return e.cause }

func eofText(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("its standard output ended")
	}
	return err
}

// tailWriter copies to w and keeps the last stderrTail bytes written.
type tailWriter struct {
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*stderrTail {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-stderrTail:]...)
	}
	t.mu.Unlock()
	// A failing destination must not kill the child through a broken
	// pipe: report success regardless.
	t.w.Write(p)
	return len(p), nil
}

// tail returns the last complete lines of what was written, at most
// stderrTail bytes, trimmed.
func (t *tailWriter) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > stderrTail {
		b = b[len(b)-stderrTail:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n\r\t ")
}
