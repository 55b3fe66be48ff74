package procmodel

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// testBlocks returns blocks of x of every shape: one row, many rows, one
// feature, several features in any order, one timestep, the whole range,
// with values drawn from the stream key.
func testBlocks(x *tempora.Tensor, key string) []resident.Block {
	rng := tempora.NewRand(5, key)
	spec := []resident.Block{
		{Lo: 0, Hi: x.M, Features: []int{0}, Start: 0, End: x.L - 1},
		{Lo: 1, Hi: 2, Features: []int{x.D - 1, 0}, Start: 1, End: 1},
		{Lo: 2, Hi: x.M - 1, Features: []int{1}, Start: 2, End: x.L - 1},
		{Lo: 0, Hi: x.M, Features: []int{2, 1, 0}, Start: 0, End: 2},
	}
	for k := range spec {
		b := &spec[k]
		b.Values = make([]float64, b.Rows()*len(b.Features)*(b.End-b.Start+1))
		for i := range b.Values {
			b.Values[i] = rng.NormFloat64()
		}
	}
	return spec
}

// blocksWant returns what m predicts for the blocks applied to x one at a
// time.
func blocksWant(m tempora.Model, x *tempora.Tensor, blocks []resident.Block) []float64 {
	var out []float64
	for k := range blocks {
		w := x.Clone()
		blocks[k].Apply(w)
		p := make([]float64, blocks[k].Rows())
		m.Predict(p, w.Rows(blocks[k].Lo, blocks[k].Hi))
		out = append(out, p...)
	}
	return out
}

func rowsOf(blocks []resident.Block) int {
	n := 0
	for k := range blocks {
		n += blocks[k].Rows()
	}
	return n
}

// TestBlocksRoundTrip sends blocks of two resident tensors to a
// child (procmodel.Serve) in one request and in requests cut by MaxBatch,
// and checks the predictions bit for bit.
func TestBlocksRoundTrip(t *testing.T) {
	for _, maxBatch := range []int{0, 3} {
		m, err := startHelper(t, "serve", Options{MaxBatch: maxBatch})
		if err != nil {
			t.Fatal(err)
		}
		if m.BatchLimit() != maxBatch {
			t.Errorf("batch limit %d, want %d", m.BatchLimit(), maxBatch)
		}
		for _, key := range []string{"a", "b", "a", "repeat"} {
			x := randomTensor(7, 4, 6, key)
			if err := m.Hold(x); err != nil {
				t.Fatal(err)
			}
			blocks := testBlocks(x, key)
			if key == "repeat" {
				// Blocks of the same cells in a row (the draws of one
				// test), then others, then the same again.
				b0, b1 := blocks[0], blocks[1]
				b0b := b0
				b0b.Values = append([]float64(nil), blocks[3].Values[:len(b0.Values)]...)
				blocks = []resident.Block{b0, b0b, b0, b1, b0b}
			}
			got := make([]float64, rowsOf(blocks))
			if err := m.PredictBlocks(got, x, blocks); err != nil {
				t.Fatal(err)
			}
			want := blocksWant(sumModel, x, blocks)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("max batch %d, tensor %s, prediction %d: got %v, want %v", maxBatch, key, i, got[i], want[i])
				}
			}
			// Plain requests stay valid beside block requests.
			p := make([]float64, x.M)
			if err := m.Predict(p, x); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestModelWritesIntoBlocks: a served model that writes zeros into its
// batch after predicting it (issue 33) is answered with an error naming
// the write before any prediction of the changed data is sent, whether it
// writes in the request's last block or in an earlier one.
func TestModelWritesIntoBlocks(t *testing.T) {
	x := randomTensor(7, 4, 6, "scribble")
	blocks := testBlocks(x, "scribble")
	for _, cut := range [][]resident.Block{blocks[:1], blocks} {
		m, err := startHelper(t, "serve-scribble", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Hold(x); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, rowsOf(cut))
		err = m.PredictBlocks(got, x, cut)
		m.Close()
		if err == nil || !strings.Contains(err.Error(), "the model wrote into its batch (instance ") {
			t.Fatalf("%d blocks: error %v, want one naming the write", len(cut), err)
		}
	}
}

// TestVersionOneRefused checks that a model side of protocol version 1 is
// refused at start, as soon as its hello's version is read (it sends no
// more than those 8 bytes), with an error that says how to upgrade it.
func TestVersionOneRefused(t *testing.T) {
	_, err := startHelper(t, "v1", Options{StartTimeout: time.Minute})
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("Start: %v, want ErrProtocol", err)
	}
	for _, s := range []string{"protocol version 1", "no longer serves", "update it to version 2", "tempora.serve", "procmodel.Serve"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %v, want it to mention %q", err, s)
		}
	}
}

// TestMissingValuesReachTheModel checks that NaN reaches the model, in
// plain and block requests, and that the model's own error about them is
// shown.
func TestMissingValuesReachTheModel(t *testing.T) {
	m, err := startHelper(t, "count-nan", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	x := randomTensor(3, 2, 2, "nan")
	x.Data[x.Index(1, 0, 1)] = math.NaN()
	x.Data[x.Index(1, 1, 0)] = math.NaN()
	got := make([]float64, 3)
	if err := m.Predict(got, x); err != nil {
		t.Fatal(err)
	}
	if got[0] != 0 || got[1] != 2 || got[2] != 0 {
		t.Errorf("NaN counts %v, want [0 2 0]", got)
	}
	b := []resident.Block{{Lo: 2, Hi: 3, Features: []int{0}, Start: 0, End: 1, Values: []float64{math.NaN(), 1}}}
	if err := m.PredictBlocks(got[:1], x, b); err != nil || got[0] != 1 {
		t.Errorf("block with a NaN: %v, %v; want 1 missing value", got[0], err)
	}
	all := x.Clone()
	for i := range all.Data {
		all.Data[i] = math.NaN()
	}
	err = m.Predict(got, all)
	if !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), "instance 0 has no observed value") {
		t.Errorf("model refusing its input: %v, want its own message", err)
	}
}

// hostileFrame builds a frame from header fields and trailing bytes.
func hostileFrame(magic string, fields []uint32, tail ...[]byte) []byte {
	b := []byte(magic)
	for _, f := range fields {
		b = binary.LittleEndian.AppendUint32(b, f)
	}
	for _, t := range tail {
		b = append(b, t...)
	}
	return b
}

func u32s(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func f64s(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	putFloats(b, v)
	return b
}

// TestServeHostileBlocks feeds Serve malformed resident data and block
// requests: each gets an error answer naming the problem (or, for a frame
// cut short, no answer) and ends serving with an error, never a panic or
// an allocation of the announced size.
func TestServeHostileBlocks(t *testing.T) {
	// Resident data of 2 instances, 2 features, 3 timesteps.
	resident := hostileFrame(residentMagic, []uint32{2, 2, 2, 3, 0, 0, 0}, f64s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12))
	blocks := func(k, rows, vals, where uint32, offset uint64, rest ...[]byte) []byte {
		b := hostileFrame(blocksMagic, []uint32{2, k, rows, vals, where})
		b = binary.LittleEndian.AppendUint64(b, offset)
		for _, r := range rest {
			b = append(b, r...)
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		input []byte
		want  string // in the error answer; "" for none (cut short)
	}{
		{"blocks before resident data", blocks(1, 1, 1, 0, 0, u32s(0, 1, 0, 0, 1, 0), f64s(1)), "before any resident data"},
		{"resident data of version 1", hostileFrame(residentMagic, []uint32{1, 1, 1, 1, 0, 0, 0}, f64s(1)), "protocol version 1, want 2"},
		{"resident data of version 3", hostileFrame(residentMagic, []uint32{3, 1, 1, 1, 0, 0, 0}, f64s(1)), "protocol version 3, want 2"},
		{"huge resident data", hostileFrame(residentMagic, []uint32{2, 1 << 20, 1 << 10, 1 << 10, 0, 0, 0}), "more than"},
		{"empty resident data", hostileFrame(residentMagic, []uint32{2, 0, 1, 1, 0, 0, 0}), "at least 1"},
		{"resident data in a missing buffer", hostileFrame(residentMagic, []uint32{2, 1, 1, 1, 1, 0, 0}), "do not fit the shared buffer (0 bytes)"},
		{"resident data of unknown source", hostileFrame(residentMagic, []uint32{2, 1, 1, 1, 5, 0, 0}), "unknown value source 5"},
		{"resident data inline with an offset", hostileFrame(residentMagic, []uint32{2, 1, 1, 1, 0, 8, 0}), "offset 8"},
		{"resident data cut short", hostileFrame(residentMagic, []uint32{2, 1 << 16, 1 << 10, 1, 0, 0, 0}, f64s(1, 2)), ""},
		{"resident header cut short", hostileFrame(residentMagic, []uint32{2, 1, 1, 1, 0}), ""},
		{"block request of version 1", append(resident, hostileFrame(blocksMagic, []uint32{1, 1, 1, 1, 0, 0, 0})...), "protocol version 1, want 2"},
		{"block request of version 3", append(resident, hostileFrame(blocksMagic, []uint32{3, 1, 1, 1, 0, 0, 0})...), "protocol version 3, want 2"},
		{"no blocks", append(resident, blocks(0, 1, 1, 0, 0)...), "0 blocks"},
		{"too many blocks", append(resident, blocks(1<<30, 1<<30, 1<<30, 0, 0)...), "blocks, want 1 to"},
		{"fewer rows than blocks", append(resident, blocks(2, 1, 2, 0, 0)...), "announces 1 rows"},
		{"huge values", append(resident, blocks(1, 1, math.MaxUint32, 0, 0)...), "values, want"},
		{"unknown value source", append(resident, blocks(1, 1, 1, 7, 0)...), "unknown value source 7"},
		{"inline with an offset", append(resident, blocks(1, 1, 1, 0, 8)...), "offset 8"},
		{"shared without a buffer", append(resident, blocks(1, 1, 1, 1, 0)...), "do not fit the shared buffer (0 bytes)"},
		{"rows past the end", append(resident, blocks(1, 2, 2, 0, 0, u32s(1, 3, 0, 0, 1, 0))...), "rows [1, 3)"},
		{"empty rows", append(resident, blocks(1, 1, 1, 0, 0, u32s(1, 1, 0, 0, 1, 0))...), "rows [1, 1)"},
		{"timesteps past the end", append(resident, blocks(1, 1, 1, 0, 0, u32s(0, 1, 2, 3, 1, 0))...), "timesteps [2, 3]"},
		{"reversed timesteps", append(resident, blocks(1, 1, 1, 0, 0, u32s(0, 1, 2, 1, 1, 0))...), "timesteps [2, 1]"},
		{"no features", append(resident, blocks(1, 1, 1, 0, 0, u32s(0, 1, 0, 0, 0))...), "0 features"},
		{"too many features", append(resident, blocks(1, 1, 1, 0, 0, u32s(0, 1, 0, 0, 1<<31))...), "2147483648 features"},
		{"feature out of range", append(resident, blocks(1, 1, 1, 0, 0, u32s(0, 1, 0, 0, 1, 2))...), "feature 2, resident data has 2"},
		{"feature twice", append(resident, blocks(1, 1, 2, 0, 0, u32s(0, 1, 0, 0, 2, 1, 1))...), "feature 1 twice"},
		{"more values than announced", append(resident, blocks(1, 1, 1, 0, 0, u32s(0, 1, 0, 1, 1, 0))...), "more than the 1 and 1 announced"},
		{"fewer rows than announced", append(resident, blocks(1, 2, 1, 0, 0, u32s(0, 1, 0, 0, 1, 0))...), "the header announced 2 and 1"},
		{"descriptors cut short", append(resident, blocks(2, 2, 2, 0, 0, u32s(0, 1, 0, 0, 1, 0))...), ""},
		{"values cut short", append(resident, blocks(1, 2, 6, 0, 0, u32s(0, 2, 0, 2, 1, 0), f64s(1, 2))...), ""},
		{"header cut short", append(resident, []byte("TMPP\x02\x00\x00\x00\x01")...), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Serve(bytes.NewReader(tc.input), &out, sumModel)
			if err == nil {
				t.Fatal("Serve accepted the input")
			}
			body := out.Bytes()[helloSize:]
			if bytes.HasPrefix(tc.input, resident) {
				// The resident data's acknowledgement comes first.
				if len(body) < responseHeaderSize || binary.LittleEndian.Uint32(body[8:]) != 0 {
					t.Fatalf("no acknowledgement of the resident data: % x", body)
				}
				body = body[responseHeaderSize:]
			}
			if tc.want == "" {
				if len(body) != 0 {
					t.Errorf("an answer to a frame cut short: %q", body)
				}
				return
			}
			_, rerr := readAnswer(bufio.NewReader(bytes.NewReader(body)), nil, nil, 1, eofText)
			if !errors.Is(rerr, ErrModel) || !strings.Contains(rerr.Error(), tc.want) {
				t.Errorf("answer %v, want an error answer containing %q (Serve: %v)", rerr, tc.want, err)
			}
		})
	}
}

// TestCheckBlocks checks the sending side's validation.
func TestCheckBlocks(t *testing.T) {
	x := randomTensor(3, 2, 4, "check")
	ok := resident.Block{Lo: 0, Hi: 2, Features: []int{1}, Start: 1, End: 2, Values: make([]float64, 4)}
	bad := func(f func(b *resident.Block)) resident.Block { b := ok; f(&b); return b }
	for _, tc := range []struct {
		b    resident.Block
		want string
	}{
		{bad(func(b *resident.Block) { b.Hi = 4 }), "rows [0, 4)"},
		{bad(func(b *resident.Block) { b.Features = []int{2} }), "feature 2"},
		{bad(func(b *resident.Block) { b.Features = []int{1, 1}; b.Values = make([]float64, 8) }), "twice"},
		{bad(func(b *resident.Block) { b.End = 4 }), "window [1, 4]"},
		{bad(func(b *resident.Block) { b.Values = b.Values[:3] }), "holds 3 values"},
	} {
		_, _, err := checkBlocks(make([]float64, tc.b.Rows()), x, []resident.Block{tc.b}, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("block %+v: %v, want %q", tc.b, err, tc.want)
		}
	}
	if _, _, err := checkBlocks(make([]float64, 1), x, []resident.Block{ok}, 1); err == nil || !strings.Contains(err.Error(), "1 predictions requested for blocks of 2 rows") {
		t.Errorf("wrong dst length: %v", err)
	}
}
