//go:build unix

package procmodel

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tempora-dev/tempora"
)

// heldHello returns a hello frame saying that the model holds x (or
// nothing, for x nil), with the CRC-32 crc (x's own when crc is nil).
func heldHello(x *tempora.Tensor, crc *uint32) []byte {
	b := appendHello(nil, x, 1)
	if x != nil && crc != nil {
		binary.LittleEndian.PutUint32(b[24:], *crc)
	}
	return b
}

// TestConnHeld checks the hand-off of data the model holds from the start:
// a model that says it holds the data receives no resident data frame, one
// that holds other data (a different shape or CRC-32) or nothing receives
// it, and the predictions are the same in every case, inline and through
// the shared buffer.
func TestConnHeld(t *testing.T) {
	x := randomTensor(6, 3, 5, "held")
	other := x.Clone()
	other.Data[7] += 1e-12 // one value differs in its last bits
	badCRC := tensorCRC(x) ^ 1
	for _, tc := range []struct {
		name   string
		hello  []byte
		pre    *tempora.Tensor
		frames int32
	}{
		{"holds x", heldHello(x, nil), x, 0},
		{"holds other data", heldHello(other, nil), other, 1},
		{"holds another shape", heldHello(randomTensor(6, 3, 4, "shape"), nil), randomTensor(6, 3, 4, "shape"), 1},
		{"wrong CRC", heldHello(x, &badCRC), x, 1},
		{"holds nothing", heldHello(nil, nil), nil, 1},
	} {
		for _, sharedBytes := range []int{0, 1 << 16} {
			t.Run(tc.name+map[bool]string{true: " shared", false: " inline"}[sharedBytes > 0], func(t *testing.T) {
				ours, theirs := socketPair(t)
				var (
					buf    *os.File
					shared []byte
				)
				if sharedBytes > 0 {
					buf, shared = sharedFile(t, sharedBytes)
				}
				var frames atomic.Int32
				go serveHeld(theirs, shared, sumModel, tc.hello, tc.pre, &frames, 1)
				c, err := Attach(context.Background(), ours, buf, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				// A plain prediction of the data the model holds goes as a
				// block request (serveHeld answers no plain request): before
				// any block when the model holds x from the start, after the
				// blocks in every case.
				plain := func(when string) {
					got := make([]float64, x.M)
					if err := c.Predict(got, x); err != nil {
						t.Fatalf("%s: %v", when, err)
					}
					want := make([]float64, x.M)
					sumModel.Predict(want, x)
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("%s: prediction %d: got %v, want %v", when, i, got[i], want[i])
						}
					}
				}
				if tc.frames == 0 {
					plain("before the blocks")
				}
				defer plain("after the blocks")
				for round := range 2 { // the second call sends nothing more
					blocks := testBlocks(x, "held")
					got := make([]float64, rowsOf(blocks))
					if err := c.PredictBlocks(got, x, blocks); err != nil {
						t.Fatal(err)
					}
					want := blocksWant(sumModel, x, blocks)
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("round %d, prediction %d: got %v, want %v", round, i, got[i], want[i])
						}
					}
				}
				if n := frames.Load(); n != tc.frames {
					t.Errorf("%d resident data frames sent, want %d", n, tc.frames)
				}
			})
		}
	}
}

// TestConnHeldReplaced checks that once other data has been sent, the
// data the model held from the start is no longer taken as held: the
// first data is sent again.
func TestConnHeldReplaced(t *testing.T) {
	x, y := randomTensor(4, 3, 3, "x"), randomTensor(4, 3, 3, "y")
	ours, theirs := socketPair(t)
	var frames atomic.Int32
	go serveHeld(theirs, nil, sumModel, heldHello(x, nil), x, &frames, 1)
	c, err := Attach(context.Background(), ours, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for k, d := range []*tempora.Tensor{x, y, x} {
		blocks := testBlocks(d, "r")
		got := make([]float64, rowsOf(blocks))
		if err := c.PredictBlocks(got, d, blocks); err != nil {
			t.Fatal(err)
		}
		want := blocksWant(sumModel, d, blocks)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("call %d, prediction %d: got %v, want %v", k, i, got[i], want[i])
			}
		}
	}
	if n := frames.Load(); n != 2 {
		t.Errorf("%d resident data frames sent, want 2 (y, then x again)", n)
	}
}

// TestHelloHeldMalformed checks that a hello with an inconsistent
// description of the held data is refused at start, naming
// the field.
func TestHelloHeldMalformed(t *testing.T) {
	x := randomTensor(2, 2, 2, "m")
	for _, tc := range []struct {
		name string
		edit func([]byte)
		want string
	}{
		{"flags 4", func(b []byte) { binary.LittleEndian.PutUint32(b[8:], 4) }, "flags 4"},
		{"O without H, shape given", func(b []byte) { binary.LittleEndian.PutUint32(b[8:], 2) }, "want zeros"},
		{"zero shape", func(b []byte) { binary.LittleEndian.PutUint32(b[16:], 0) }, "unusable shape"},
		{"nothing held, shape given", func(b []byte) { binary.LittleEndian.PutUint32(b[8:], 0) }, "want zeros"},
		{"cut short", nil, "after 20 bytes of its hello frame"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hello := heldHello(x, nil)
			if tc.edit != nil {
				tc.edit(hello)
			} else {
				hello = hello[:20]
			}
			ours, theirs := socketPair(t)
			go func() {
				theirs.Write(hello)
				if tc.edit == nil {
					theirs.Close()
				}
			}()
			c, err := Attach(context.Background(), ours, nil, Options{})
			if err == nil {
				c.Close()
				t.Fatal("attached")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want it to mention %q", err, tc.want)
			}
			if tc.edit != nil && !errors.Is(err, ErrProtocol) {
				t.Errorf("got %v, want ErrProtocol", err)
			}
			theirs.Close()
		})
	}
}

// TestTensorCRC checks the fingerprint against the value the Python
// package computes for the same data, zlib.crc32 of the bytes of
// numpy.array([0, 0.5, -1], "<f8"): the two sides must agree.
func TestTensorCRC(t *testing.T) {
	x := &tempora.Tensor{M: 1, D: 1, L: 3, Data: []float64{0, 0.5, -1}}
	if got, want := tensorCRC(x), uint32(0x2ac987f2); got != want {
		t.Errorf("tensorCRC = %#08x, want %#08x", got, want)
	}
}

// stdio joins a model program's standard input and output.
type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return nil }

func init() {
	// A model program (started with -model-cmd) that holds the data
	// heldTestData() from the start, in its hello, and counts on its
	// standard error the resident data frames it gets.
	moreHelpers["held"] = func(in io.Reader, out io.Writer) {
		x := heldTestData()
		var frames atomic.Int32
		serveHeld(stdio{in, out}, nil, sumModel, heldHello(x, nil), x, &frames, 1)
		os.Stderr.WriteString("frames " + string(rune('0'+frames.Load())) + "\n")
	}
}

func heldTestData() *tempora.Tensor { return randomTensor(6, 3, 5, "held child") }

// TestModelHeld checks the hand-off of held data with a model process
// started by tempora (procmodel.Model): no resident data frame for the data
// the child holds, one for other data, and the same predictions.
func TestModelHeld(t *testing.T) {
	x, y := heldTestData(), randomTensor(6, 3, 5, "other")
	for _, tc := range []struct {
		name   string
		data   []*tempora.Tensor
		frames string
	}{{"held", []*tempora.Tensor{x, x}, "frames 0"}, {"other", []*tempora.Tensor{y, x}, "frames 2"}} {
		t.Run(tc.name, func(t *testing.T) {
			stderr := &syncBuffer{}
			m, err := startHelper(t, "held", Options{Stderr: stderr})
			if err != nil {
				t.Fatal(err)
			}
			// A plain prediction of the held data goes as a block request
			// (the child answers no plain request).
			if tc.frames == "frames 0" {
				got, want := make([]float64, x.M), make([]float64, x.M)
				if err := m.Predict(got, x); err != nil {
					t.Fatal(err)
				}
				sumModel.Predict(want, x)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("plain prediction %d: got %v, want %v", i, got[i], want[i])
					}
				}
			}
			for k, d := range tc.data {
				blocks := testBlocks(d, "child")
				got := make([]float64, rowsOf(blocks))
				if err := m.PredictBlocks(got, d, blocks); err != nil {
					t.Fatal(err)
				}
				want := blocksWant(sumModel, d, blocks)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("call %d, prediction %d: got %v, want %v", k, i, got[i], want[i])
					}
				}
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stderr.String(), tc.frames) {
				t.Errorf("child's standard error %q, want %q", stderr.String(), tc.frames)
			}
		})
	}
}
