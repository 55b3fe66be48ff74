//go:build unix

package procmodel

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// Models of several outputs per instance (tempora.Outputs): the hello
// announces K, every answer carries M·K predictions, instance-major.

func init() {
	// A model program of three outputs per instance.
	moreHelpers["outputs3"] = func(in io.Reader, out io.Writer) {
		ServeOutputs(in, out, outputsModel(3), 3)
	}
	// A model program that announces three outputs but answers one
	// prediction per instance.
	moreHelpers["outputs3-one"] = func(in io.Reader, out io.Writer) {
		out.Write(appendHello(nil, nil, 3))
		Serve(in, &skipWriter{w: out, skip: helloSize}, sumModel) // Serve's own hello is skipped
	}
	// A model program holding heldTestData() from the start, of three
	// outputs per instance, that counts the resident data frames it gets.
	moreHelpers["held-outputs3"] = func(in io.Reader, out io.Writer) {
		x := heldTestData()
		var frames atomic.Int32
		serveHeld(stdio{in, out}, nil, outputsModel(3), appendHello(nil, x, 3), x, &frames, 3)
		os.Stderr.WriteString("frames " + string(rune('0'+frames.Load())) + "\n")
	}
}

// skipWriter writes to w all but the first skip bytes written to it.
type skipWriter struct {
	w    io.Writer
	skip int
}

func (s *skipWriter) Write(p []byte) (int, error) {
	n := min(s.skip, len(p))
	s.skip -= n
	if _, err := s.w.Write(p[n:]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// blocksWantK is blocksWant for a model of k outputs.
func blocksWantK(m tempora.Model, k int, x *tempora.Tensor, blocks []resident.Block) []float64 {
	var out []float64
	for n := range blocks {
		w := x.Clone()
		blocks[n].Apply(w)
		p := make([]float64, blocks[n].Rows()*k)
		m.Predict(p, w.Rows(blocks[n].Lo, blocks[n].Hi))
		out = append(out, p...)
	}
	return out
}

func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d predictions, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: prediction %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestHelloOutputsLayout pins the hello of a model of several outputs
// (docs/protocol.md): the flags' O bit set and K after the CRC-32, 32
// bytes; with K = 1 the hello is the 28 bytes of a model of one output.
func TestHelloOutputsLayout(t *testing.T) {
	want := []byte{
		'T', 'M', 'P', 'H', 2, 0, 0, 0, // magic, version
		2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // flags (O), M, D, L, CRC-32
		3, 0, 0, 0, // K
	}
	if got := appendHello(nil, nil, 3); !bytes.Equal(got, want) {
		t.Errorf("hello of 3 outputs\n got % x\nwant % x", got, want)
	}
	if got, one := appendHello(nil, nil, 1), appendHello(nil, nil, 1); len(got) != helloSize || !bytes.Equal(got, one) {
		t.Errorf("hello of one output: % x", got)
	}
	x := &tempora.Tensor{M: 1, D: 1, L: 3, Data: []float64{0, 0.5, -1}}
	held := appendHello(nil, x, 4)
	if le := binary.LittleEndian; len(held) != helloSize+helloOutputsSize || le.Uint32(held[8:]) != 3 || le.Uint32(held[28:]) != 4 ||
		!bytes.Equal(held[12:28], appendHello(nil, x, 1)[12:28]) {
		t.Errorf("hello holding x, 4 outputs: % x", held)
	}
	for _, k := range []int{1, 2, 3, MaxOutputs} {
		h, err := readHello(bytes.NewReader(appendHello(nil, x, k)), eofText)
		if err != nil || h.k != k || !h.held.matches(x) {
			t.Errorf("K = %d: read back %+v, %v", k, h, err)
		}
	}
}

// TestServeOutputs serves a model of three outputs from a child process
// (ServeOutputs) and checks Predict, chunked Predict and block requests
// bit for bit against the model in process.
func TestServeOutputs(t *testing.T) {
	const k = 3
	model := outputsModel(k)
	for _, maxBatch := range []int{0, 2} {
		m, err := startHelper(t, "outputs3", Options{MaxBatch: maxBatch})
		if err != nil {
			t.Fatal(err)
		}
		if m.Outputs() != k {
			t.Errorf("Outputs() = %d, want %d", m.Outputs(), k)
		}
		x := randomTensor(7, 4, 6, "outputs")
		want := make([]float64, x.M*k)
		model(want, x)
		got := make([]float64, x.M*k)
		if err := m.Predict(got, x); err != nil {
			t.Fatal(err)
		}
		sameBits(t, "Predict", got, want)
		blocks := testBlocks(x, "outputs")
		got = make([]float64, rowsOf(blocks)*k)
		if err := m.PredictBlocks(got, x, blocks); err != nil {
			t.Fatal(err)
		}
		sameBits(t, "PredictBlocks", got, blocksWantK(model, k, x, blocks))
		// The data is resident now: a Predict of it goes as a block.
		got = make([]float64, x.M*k)
		if err := m.Predict(got, x); err != nil {
			t.Fatal(err)
		}
		sameBits(t, "Predict of the resident data", got, want)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOutputsMismatch checks the refusals when the caller and the model
// disagree on the outputs: a model of three outputs asked for one
// prediction per instance (data without outputs), a model of one output
// asked for three, and a model that announces three outputs but answers
// one prediction per instance.
func TestOutputsMismatch(t *testing.T) {
	x := randomTensor(4, 2, 3, "mismatch")
	three, err := startHelper(t, "outputs3", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer three.Close()
	err = three.Predict(make([]float64, x.M), x)
	checkContains(t, err, []string{"4 predictions requested for 4 instances", "returns 3 outputs per instance", "Dataset.Outputs"})
	err = three.PredictBlocks(make([]float64, 4), x, testBlocks(x, "m")[:1])
	checkContains(t, err, []string{"returns 3 outputs per instance", "blocks of 4 rows"})
	// The refusals happen before anything is sent: the model still works.
	if err := three.Predict(make([]float64, 3*x.M), x); err != nil {
		t.Fatal(err)
	}

	one, err := startHelper(t, "serve", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if one.Outputs() != 1 {
		t.Errorf("a model of one output: Outputs() = %d", one.Outputs())
	}
	err = one.Predict(make([]float64, 3*x.M), x)
	checkContains(t, err, []string{"12 predictions requested for 4 instances (3 outputs each)", "returns one output per instance"})

	liar, err := startHelper(t, "outputs3-one", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer liar.Close()
	err = liar.Predict(make([]float64, 3*x.M), x)
	if !errors.Is(err, ErrProtocol) {
		t.Errorf("a model answering one prediction per instance: %v, want ErrProtocol", err)
	}
	checkContains(t, err, []string{"4 predictions for a batch of 4 instances × 3 outputs (want 12)"})
}

// TestOutputsAnswerCount checks that an answer of M predictions to a model
// of K outputs is a protocol error naming both counts.
func TestOutputsAnswerCount(t *testing.T) {
	answer := answerFrame(statusOK, 4, make([]byte, 8*4))
	_, err := readAnswer(bytes.NewReader(answer), nil, make([]float64, 12), 3, eofText)
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("got %v, want ErrProtocol", err)
	}
	checkContains(t, err, []string{"4 predictions for a batch of 4 instances × 3 outputs (want 12)"})
	dst := make([]float64, 6)
	body := f64s(1, 2, 3, 4, 5, 6)
	if _, err := readAnswer(bytes.NewReader(answerFrame(statusOK, 6, body)), nil, dst, 3, eofText); err != nil || dst[5] != 6 {
		t.Fatalf("an answer of 2 × 3 predictions: %v, %v", dst, err)
	}
}

// TestConnOutputs serves a model of three outputs over a connection, with
// and without a shared buffer and a batch limit, holding the data from
// the start or not, and checks every kind of call bit for bit; the model
// holding the data gets no resident data frame.
func TestConnOutputs(t *testing.T) {
	const k = 3
	model := outputsModel(k)
	x := randomTensor(6, 3, 5, "conn outputs")
	for _, tc := range []struct {
		name        string
		sharedBytes int
		maxBatch    int
		held        bool
	}{{"inline", 0, 0, false}, {"shared", 1 << 16, 0, false}, {"shared cut", 1 << 16, 4, false}, {"held", 0, 0, true}, {"held shared cut", 1 << 16, 4, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ours, theirs := socketPair(t)
			var (
				buf    *os.File
				shared []byte
				pre    *tempora.Tensor
				frames atomic.Int32
			)
			if tc.sharedBytes > 0 {
				buf, shared = sharedFile(t, tc.sharedBytes)
			}
			if tc.held {
				pre = x.Clone()
			}
			done := make(chan error, 1)
			go func() { done <- serveHeld(theirs, shared, model, appendHello(nil, pre, k), pre, &frames, k) }()
			c, err := Attach(context.Background(), ours, buf, Options{MaxBatch: tc.maxBatch})
			if err != nil {
				t.Fatal(err)
			}
			if c.Outputs() != k {
				t.Errorf("Outputs() = %d, want %d", c.Outputs(), k)
			}
			// (serveHeld answers block requests only: the blocks come
			// first, then a Predict of the data it holds then.)
			blocks := testBlocks(x, "conn")
			wantBlocks := blocksWantK(model, k, x, blocks)
			got := make([]float64, len(wantBlocks))
			if err := c.PredictBlocks(got, x, blocks); err != nil {
				t.Fatal(err)
			}
			sameBits(t, "PredictBlocks", got, wantBlocks)
			want := make([]float64, x.M*k)
			model(want, x)
			got = make([]float64, x.M*k)
			if err := c.Predict(got, x); err != nil {
				t.Fatal(err)
			}
			sameBits(t, "Predict", got, want)
			got = make([]float64, len(wantBlocks))
			if err := c.PredictBlocksFilled(got, x, blocks, nil, fillFrom(blocks)); err != nil {
				t.Fatal(err)
			}
			sameBits(t, "PredictBlocksFilled", got, wantBlocks)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			<-done
			if n := frames.Load(); tc.held != (n == 0) {
				t.Errorf("%d resident data frames; held from the start: %v", n, tc.held)
			}
		})
	}
}

// TestHeldChildOutputs runs a model program of three outputs that holds
// the data from the start: it gets no resident data frame, and a pool of
// two answers as one.
func TestHeldChildOutputs(t *testing.T) {
	const k = 3
	x := heldTestData()
	want := make([]float64, x.M*k)
	outputsModel(k)(want, x)
	stderr := &syncBuffer{}
	cmd, env := helperCommand("held-outputs3")
	p, err := StartPool(context.Background(), cmd, 2, Options{Env: env, Stderr: stderr})
	if err != nil {
		t.Fatal(err)
	}
	if p.Outputs() != k {
		t.Errorf("pool Outputs() = %d, want %d", p.Outputs(), k)
	}
	for range 2 {
		got := make([]float64, x.M*k)
		if err := p.Predict(got, x); err != nil {
			t.Fatal(err)
		}
		sameBits(t, "pool Predict", got, want)
	}
	blocks := testBlocks(x, "held pool")
	got := make([]float64, rowsOf(blocks)*k)
	if err := p.Held().PredictBlocks(got, x, blocks); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "pool PredictBlocks", got, blocksWantK(outputsModel(k), k, x, blocks))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s := stderr.String(); strings.Count(s, "frames 0") != 2 {
		t.Errorf("model programs' standard error %q, want \"frames 0\" from each", s)
	}
}

// TestPoolOutputsDisagree checks that a pool refuses members that return
// different numbers of outputs.
func TestPoolOutputsDisagree(t *testing.T) {
	one, err := startHelper(t, "serve", Options{})
	if err != nil {
		t.Fatal(err)
	}
	three, err := startHelper(t, "outputs3", Options{})
	if err != nil {
		one.Close()
		t.Fatal(err)
	}
	defer one.Close()
	defer three.Close()
	_, err = NewHeldPool(one, three)
	checkContains(t, err, []string{"pool models 0 and 1 return 1 and 3 outputs per instance"})
}

// TestServeOutputsBadK checks that ServeOutputs refuses a count of outputs
// the hello cannot announce, before writing anything.
func TestServeOutputsBadK(t *testing.T) {
	for _, k := range []int{0, -1, MaxOutputs + 1} {
		var out bytes.Buffer
		err := ServeOutputs(strings.NewReader(""), &out, sumModel, k)
		if err == nil || out.Len() != 0 {
			t.Errorf("K = %d: %v, wrote %d bytes", k, err, out.Len())
		}
	}
}
