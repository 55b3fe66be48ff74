//go:build unix

package procmodel

import (
	"bufio"
	"context"
	"io"
	"os"
	"sync/atomic"
	"testing"

	"github.com/tempora-dev/tempora"
)

// serveBlocks is the model side of a connection for tests: resident data
// and block requests, with the values inline or in shared, parsed by the
// code Serve uses.
func serveBlocks(rw io.ReadWriteCloser, shared []byte, m tempora.Model) error {
	return serveHeld(rw, shared, m, appendHello(nil, nil, 1), nil, nil, 1)
}

// serveHeld is serveBlocks with the hello frame hello, holding pre (if not
// nil) as its resident data from the start, and counting the resident
// data frames it receives in frames (if not nil), for a model m of k
// outputs per instance.
func serveHeld(rw io.ReadWriteCloser, shared []byte, m tempora.Model, hello []byte, pre *tempora.Tensor, frames *atomic.Int32, k int) error {
	defer rw.Close()
	if _, err := rw.Write(hello); err != nil {
		return err
	}
	br := bufio.NewReader(rw)
	bw := bufio.NewWriter(rw)
	var (
		res  modelSide
		out  []byte
		hdr  [blocksHeaderSize]byte
		pred []float64
	)
	if pre != nil {
		res.x, res.work, res.seen = pre, pre.Clone(), make([]int, pre.D)
	}
	for {
		if _, err := io.ReadFull(br, hdr[:requestHeaderSize]); err != nil {
			return nil
		}
		switch string(hdr[:4]) {
		case residentMagic:
			if frames != nil {
				frames.Add(1)
			}
			if _, err := io.ReadFull(br, hdr[requestHeaderSize:residentHeaderSize]); err != nil {
				return err
			}
			if err := res.read(br, hdr[:residentHeaderSize], shared); err != nil {
				writeError(bw, err.Error())
				return err
			}
			if err := writeAnswer(bw, &out, nil); err != nil {
				return err
			}
		case blocksMagic:
			if _, err := io.ReadFull(br, hdr[requestHeaderSize:]); err != nil {
				return err
			}
			req, err := res.readBlocks(br, hdr[:], shared)
			if err != nil {
				writeError(bw, err.Error())
				return err
			}
			pred = growFloats(pred, req.rows*k)
			if err := res.predict(m, pred, req.blocks, k); err != nil {
				writeError(bw, err.Error())
				continue
			}
			if err := writeAnswer(bw, &out, pred); err != nil {
				return err
			}
		default:
			writeError(bw, "serveBlocks: unexpected frame "+string(hdr[:4]))
			return nil
		}
	}
}

// attachServed2 returns a Conn to serveBlocks serving m in a goroutine, with a
// shared buffer of sharedBytes (none if 0).
func attachServed2(t *testing.T, m tempora.Model, sharedBytes int, opts Options) (*Conn, []byte) {
	t.Helper()
	ours, theirs := socketPair(t)
	var (
		buf    *os.File
		shared []byte
	)
	if sharedBytes > 0 {
		buf, shared = sharedFile(t, sharedBytes)
	}
	go serveBlocks(theirs, shared, m)
	c, err := Attach(context.Background(), ours, buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, shared
}

// TestConnBlocks checks block requests over a connection, with the values
// through the shared buffer and inline, against a model side that parses
// them with the same code as Serve.
func TestConnBlocks(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sharedBytes int
		maxBatch    int
	}{{"inline", 0, 0}, {"shared", 1 << 16, 0}, {"shared cut", 1 << 16, 4}, {"too large for the buffer", 256, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := attachServed2(t, sumModel, tc.sharedBytes, Options{MaxBatch: tc.maxBatch})
			for _, key := range []string{"a", "b"} {
				x := randomTensor(6, 3, 5, key)
				blocks := testBlocks(x, key)
				got := make([]float64, rowsOf(blocks))
				if err := c.PredictBlocks(got, x, blocks); err != nil {
					t.Fatal(err)
				}
				want := blocksWant(sumModel, x, blocks)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("tensor %s, prediction %d: got %v, want %v", key, i, got[i], want[i])
					}
				}
			}
		})
	}
}
