package resident_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// TestCheck checks the validation of a block of data of shape 3 × 2 × 4.
func TestCheck(t *testing.T) {
	ok := resident.Block{Lo: 0, Hi: 2, Features: []int{1}, Start: 1, End: 2, Values: make([]float64, 4)}
	if err := ok.Check(3, 2, 4); err != nil {
		t.Fatalf("well-formed block: %v", err)
	}
	bad := func(f func(b *resident.Block)) resident.Block { b := ok; f(&b); return b }
	for _, tc := range []struct {
		b    resident.Block
		want string
	}{
		{bad(func(b *resident.Block) { b.Hi = 4 }), "rows [0, 4)"},
		{bad(func(b *resident.Block) { b.Lo = -1 }), "rows [-1, 2)"},
		{bad(func(b *resident.Block) { b.Lo, b.Hi = 2, 2 }), "rows [2, 2)"},
		{bad(func(b *resident.Block) { b.Features = nil }), "0 features"},
		{bad(func(b *resident.Block) { b.Features = []int{0, 1, 0} }), "3 features"},
		{bad(func(b *resident.Block) { b.Features = []int{2} }), "feature 2 outside 0..1"},
		{bad(func(b *resident.Block) { b.Features = []int{1, 1}; b.Values = make([]float64, 8) }), "twice"},
		{bad(func(b *resident.Block) { b.End = 4 }), "window [1, 4]"},
		{bad(func(b *resident.Block) { b.Start = 3 }), "window [3, 2]"},
		{bad(func(b *resident.Block) { b.Values = b.Values[:3] }), "holds 3 values"},
	} {
		if err := tc.b.Check(3, 2, 4); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("block %+v: %v, want %q", tc.b, err, tc.want)
		}
	}
}

// TestApply checks the layout of a block's values: value (i, f, t) at
// (i·len(Features) + f)·(End−Start+1) + t, features in the block's order.
func TestApply(t *testing.T) {
	x := tempora.NewTensor(3, 3, 4)
	b := resident.Block{Lo: 1, Hi: 3, Features: []int{2, 0}, Start: 1, End: 2, Values: []float64{1, 2, 3, 4, 5, 6, 7, 8}}
	if b.Rows() != 2 || b.Len() != 8 {
		t.Fatalf("Rows %d, Len %d; want 2 and 8", b.Rows(), b.Len())
	}
	b.Apply(x)
	for _, c := range []struct {
		i, j, t int
		v       float64
	}{{1, 2, 1, 1}, {1, 2, 2, 2}, {1, 0, 1, 3}, {1, 0, 2, 4}, {2, 2, 1, 5}, {2, 2, 2, 6}, {2, 0, 1, 7}, {2, 0, 2, 8}} {
		if got := x.At(c.i, c.j, c.t); got != c.v {
			t.Errorf("x[%d, %d, %d] = %v, want %v", c.i, c.j, c.t, got, c.v)
		}
	}
	sum := 0.0
	for _, v := range x.Data {
		sum += v
	}
	if sum != 36 {
		t.Errorf("cells outside the block written: sum %v, want 36", sum)
	}
	if n := (&resident.Block{Lo: 2, Hi: 1, Features: []int{0}}).Len(); n != 0 {
		t.Errorf("Len of rows out of order: %d, want 0", n)
	}
}

// TestFilled checks that Filled lays the blocks' values out consecutively
// in scratch (grown when short), and that FillScratch fills them, then
// predicts, or returns fill's error without predicting.
func TestFilled(t *testing.T) {
	blocks := []resident.Block{
		{Lo: 0, Hi: 2, Features: []int{0}, Start: 0, End: 1},
		{Lo: 1, Hi: 2, Features: []int{1, 0}, Start: 2, End: 2},
	}
	scratch := make([]float64, 10)
	filled, vals := resident.Filled(blocks, scratch)
	if len(vals) != 6 || &vals[0] != &scratch[0] {
		t.Fatalf("values of length %d (want 6) not in scratch", len(vals))
	}
	if len(filled[0].Values) != 4 || len(filled[1].Values) != 2 || &filled[1].Values[0] != &vals[4] || blocks[0].Values != nil {
		t.Errorf("filled blocks %+v (the caller's %+v untouched)", filled, blocks)
	}
	if _, grown := resident.Filled(blocks, scratch[:3]); len(grown) != 6 {
		t.Errorf("grown scratch of %d values, want 6", len(grown))
	}
	x := tempora.NewTensor(2, 2, 3)
	var got [][]float64
	predict := func(dst []float64, x *tempora.Tensor, blocks []resident.Block) error {
		for _, b := range blocks {
			if err := b.Check(x.M, x.D, x.L); err != nil {
				return err
			}
			got = append(got, slices.Clone(b.Values))
		}
		return nil
	}
	fill := func(v []float64) error {
		for i := range v {
			v[i] = float64(i)
		}
		return nil
	}
	if err := resident.FillScratch(make([]float64, 3), x, blocks, nil, fill, predict); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got[0], []float64{0, 1, 2, 3}) || !slices.Equal(got[1], []float64{4, 5}) {
		t.Errorf("predicted blocks with values %v", got)
	}
	boom := errors.New("boom")
	got = nil
	if err := resident.FillScratch(make([]float64, 3), x, blocks, nil, func([]float64) error { return boom }, predict); err != boom || got != nil {
		t.Errorf("fill failing: %v, %d blocks predicted; want its error and none", err, len(got))
	}
}
