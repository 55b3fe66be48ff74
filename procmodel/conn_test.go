//go:build unix

package procmodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
)

// socketPair returns the two ends of a connected unix stream socket.
func socketPair(t *testing.T) (ours, theirs *os.File) {
	t.Helper()
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0]) // no helper process may inherit a copy
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "test-ours"), os.NewFile(uintptr(fds[1]), "test-theirs")
}

// sharedFile returns a file of size bytes and its mapping for the model side
// of a test.
func sharedFile(t *testing.T, size int) (*os.File, []byte) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "shared"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	view, unmap, err := mapShared(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unmap() })
	return f, view
}

// connServer is the model side of a Conn for tests: it serves m over rw,
// reading shared requests from shared, and counts the requests of each kind.
type connServer struct {
	shared         []byte
	inline, viaBuf atomic.Int64
}

func (s *connServer) serve(rw io.ReadWriteCloser, m tempora.Model) error {
	defer rw.Close()
	if _, err := rw.Write(appendHello(nil, nil, 1)); err != nil {
		return err
	}
	br := bufio.NewReader(rw)
	var x tempora.Tensor
	for {
		var h [requestHeaderSize]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		shared := string(h[:4]) == sharedRequestMagic
		copy(h[:4], requestMagic)
		mm, d, l, err := parseRequestHeader(h[:])
		if err != nil {
			return err
		}
		x.M, x.D, x.L, x.Data = mm, d, l, make([]float64, mm*d*l)
		if shared {
			var off [8]byte
			if _, err := io.ReadFull(br, off[:]); err != nil {
				return err
			}
			s.viaBuf.Add(1)
			getFloats(x.Data, s.shared[binary.LittleEndian.Uint64(off[:]):])
		} else {
			s.inline.Add(1)
			if _, err := readFloats(br, nil, x.Data); err != nil {
				return err
			}
		}
		pred := make([]float64, mm)
		var out []byte
		if err := m.Predict(pred, &x); err != nil {
			msg := err.Error()
			out = binary.LittleEndian.AppendUint32([]byte(responseMagic), statusError)
			out = binary.LittleEndian.AppendUint32(out, uint32(len(msg)))
			out = append(out, msg...)
		} else {
			out = binary.LittleEndian.AppendUint32([]byte(responseMagic), statusOK)
			out = binary.LittleEndian.AppendUint32(out, uint32(mm))
			out = append(out, make([]byte, 8*mm)...)
			putFloats(out[responseHeaderSize:], pred)
		}
		if _, err := rw.Write(out); err != nil {
			return err
		}
	}
}

// attachServed returns a Conn to a connServer serving m in a goroutine, with
// a shared buffer of sharedBytes (none if 0).
func attachServed(t *testing.T, m tempora.Model, sharedBytes int, opts Options) (*Conn, *connServer) {
	t.Helper()
	ours, theirs := socketPair(t)
	srv := &connServer{}
	var buf *os.File
	if sharedBytes > 0 {
		buf, srv.shared = sharedFile(t, sharedBytes)
	}
	go srv.serve(theirs, m)
	c, err := Attach(context.Background(), ours, buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv
}

// TestConnPredicts checks that a Conn returns exactly the served model's
// predictions, through the shared buffer when the batch fits and inline
// otherwise, whole or chunked.
func TestConnPredicts(t *testing.T) {
	const d, l = 3, 5
	for _, tc := range []struct {
		name        string
		sharedBytes int
		maxBatch    int
		batches     []int
		wantShared  int64
		wantInline  int64
	}{
		{"no buffer", 0, 0, []int{1, 10, 40}, 0, 3},
		// 10 instances fit in a slot of 8·10·15 = 1200 bytes, half the
		// buffer; 40 do not.
		{"buffer", 2400, 0, []int{1, 10, 40}, 2, 1},
		{"buffer chunked", 2400, 10, []int{40}, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, srv := attachServed(t, sumModel, tc.sharedBytes, Options{MaxBatch: tc.maxBatch})
			for _, m := range tc.batches {
				x := randomTensor(m, d, l, tc.name)
				got, want := make([]float64, m), make([]float64, m)
				if err := c.Predict(got, x); err != nil {
					t.Fatal(err)
				}
				sumModel(want, x)
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("batch of %d, instance %d: got %v, want %v", m, i, got[i], want[i])
					}
				}
			}
			if s, in := srv.viaBuf.Load(), srv.inline.Load(); s != tc.wantShared || in != tc.wantInline {
				t.Errorf("%d shared and %d inline requests, want %d and %d", s, in, tc.wantShared, tc.wantInline)
			}
		})
	}
}

func TestConnErrors(t *testing.T) {
	x := randomTensor(4, 2, 3, "errors")
	dst := make([]float64, 4)

	t.Run("model error is sticky", func(t *testing.T) {
		c, _ := attachServed(t, tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
			return errors.New("ValueError: bad input")
		}), 1024, Options{})
		err := c.Predict(dst, x)
		if !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), "ValueError: bad input") {
			t.Fatalf("got %v, want ErrModel with the model's message", err)
		}
		if err2 := c.Predict(dst, x); err2 != err {
			t.Errorf("second call: %v, want the sticky %v", err2, err)
		}
	})
	t.Run("closed connection", func(t *testing.T) {
		ours, theirs := socketPair(t)
		go func() {
			theirs.Write(appendHello(nil, nil, 1))
			io.ReadFull(theirs, make([]byte, requestHeaderSize))
			theirs.Close()
		}()
		c, err := Attach(context.Background(), ours, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Predict(dst, x); !errors.Is(err, ErrExited) {
			t.Errorf("got %v, want ErrExited", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		ours, theirs := socketPair(t)
		defer theirs.Close()
		theirs.Write(appendHello(nil, nil, 1))
		c, err := Attach(context.Background(), ours, nil, Options{Timeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Predict(dst, x); !errors.Is(err, ErrTimeout) {
			t.Errorf("got %v, want ErrTimeout", err)
		}
	})
	t.Run("no hello", func(t *testing.T) {
		ours, theirs := socketPair(t)
		defer theirs.Close()
		_, err := Attach(context.Background(), ours, nil, Options{StartTimeout: 50 * time.Millisecond})
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("got %v, want ErrTimeout", err)
		}
	})
	t.Run("bad hello", func(t *testing.T) {
		ours, theirs := socketPair(t)
		defer theirs.Close()
		theirs.Write([]byte("Loading.\n"))
		_, err := Attach(context.Background(), ours, nil, Options{})
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("got %v, want ErrProtocol", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ours, theirs := socketPair(t)
		defer theirs.Close()
		theirs.Write(appendHello(nil, nil, 1))
		ctx, cancel := context.WithCancel(context.Background())
		c, err := Attach(ctx, ours, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		time.AfterFunc(20*time.Millisecond, cancel)
		if err := c.Predict(dst, x); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
	t.Run("not a socket", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := Attach(context.Background(), r, nil, Options{}); err == nil || !strings.Contains(err.Error(), "not a connected socket") {
			t.Errorf("got %v, want a not-a-socket error", err)
		}
	})
	t.Run("AttachFD checks kinds", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		if _, err := AttachFD(context.Background(), int(r.Fd()), -1, Options{}); err == nil || !strings.Contains(err.Error(), "is not a socket") {
			t.Errorf("pipe as socket: got %v", err)
		}
		// The descriptor was not taken: it is still usable.
		if _, err := w.Write([]byte("x")); err != nil {
			t.Errorf("pipe closed by a failed AttachFD: %v", err)
		}
		if _, err := AttachFD(context.Background(), 1<<20, -1, Options{}); err == nil {
			t.Error("unopened descriptor: no error")
		}
	})
	t.Run("closed", func(t *testing.T) {
		c, _ := attachServed(t, sumModel, 0, Options{})
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := c.Predict(dst, x); !errors.Is(err, ErrClosed) {
			t.Errorf("got %v, want ErrClosed", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestConnPipelines checks that a Conn sends a second request before the
// first is answered, and matches the in-order answers to their calls: the
// model below reads two requests before answering either, which would
// deadlock a connection that waits for each answer.
func TestConnPipelines(t *testing.T) {
	ours, theirs := socketPair(t)
	go func() {
		defer theirs.Close()
		theirs.Write(appendHello(nil, nil, 1))
		br := bufio.NewReader(theirs)
		for {
			var xs [2]*tempora.Tensor
			for k := range xs {
				var h [requestHeaderSize]byte
				if _, err := io.ReadFull(br, h[:]); err != nil {
					return
				}
				m, d, l, err := parseRequestHeader(h[:])
				if err != nil {
					return
				}
				xs[k] = tempora.NewTensor(m, d, l)
				if _, err := readFloats(br, nil, xs[k].Data); err != nil {
					return
				}
			}
			for _, x := range xs {
				pred := make([]float64, x.M)
				sumModel(pred, x)
				out := binary.LittleEndian.AppendUint32([]byte(responseMagic), statusOK)
				out = binary.LittleEndian.AppendUint32(out, uint32(x.M))
				out = append(out, make([]byte, 8*x.M)...)
				putFloats(out[responseHeaderSize:], pred)
				theirs.Write(out)
			}
		}
	}()
	c, err := Attach(context.Background(), ours, nil, Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	errs := make(chan error, 6)
	for k := range 6 {
		go func() {
			m := 3 + k // different sizes: a mismatched answer is an error
			x := randomTensor(m, 2, 4, strconv.Itoa(k))
			got, want := make([]float64, m), make([]float64, m)
			sumModel(want, x)
			if err := c.Predict(got, x); err != nil {
				errs <- err
				return
			}
			for i := range got {
				if got[i] != want[i] {
					errs <- fmt.Errorf("call %d, instance %d: got %v, want %v", k, i, got[i], want[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestPutShared checks that the fast copy into a shared buffer writes the
// protocol's bytes, special values included.
func TestPutShared(t *testing.T) {
	v := []float64{0, math.Copysign(0, -1), 1.5, -2, math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64, math.MaxFloat64}
	got, want := make([]byte, 8*len(v)+8), make([]byte, 8*len(v)+8)
	putShared(got, v)
	putFloats(want, v)
	if !bytes.Equal(got, want) {
		t.Errorf("putShared wrote % x, want % x", got, want)
	}
}
