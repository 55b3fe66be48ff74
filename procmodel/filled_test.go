//go:build unix

package procmodel

import (
	"errors"
	"testing"

	"github.com/tempora-dev/tempora/resident"
)

// fillFrom returns a fill function writing the values of blocks (in
// order) into the slice it gets.
func fillFrom(blocks []resident.Block) func([]float64) error {
	return func(v []float64) error {
		at := 0
		for _, b := range blocks {
			at += copy(v[at:], b.Values)
		}
		return nil
	}
}

// TestConnFilled checks PredictBlocksFilled over a connection: the values
// go straight into the shared buffer when they fit a request slot (the
// caller's scratch is left alone), through scratch otherwise (no buffer, a
// buffer too small, a batch limit that cuts the blocks), with the
// predictions of PredictBlocks in every case, directly and through a Pool.
func TestConnFilled(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sharedBytes int
		maxBatch    int
		inSlot      bool
	}{{"shared", 1 << 16, 0, true}, {"inline", 0, 0, false}, {"too large for the buffer", 256, 0, false}, {"cut", 1 << 16, 4, false}} {
		for _, pooled := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{true: " pool", false: ""}[pooled], func(t *testing.T) {
				c, _ := attachServed2(t, sumModel, tc.sharedBytes, Options{MaxBatch: tc.maxBatch})
				var m resident.Model = c
				if pooled {
					p, err := NewHeldPool(c)
					if err != nil {
						t.Fatal(err)
					}
					m = p.Held()
				}
				x := randomTensor(6, 3, 5, "filled")
				blocks := testBlocks(x, "filled")
				n := 0
				for _, b := range blocks {
					n += len(b.Values)
				}
				scratch := make([]float64, n)
				for i := range scratch {
					scratch[i] = -7
				}
				descs := make([]resident.Block, len(blocks))
				for k, b := range blocks {
					b.Values = nil
					descs[k] = b
				}
				got := make([]float64, rowsOf(blocks))
				if err := m.PredictBlocksFilled(got, x, descs, scratch, fillFrom(blocks)); err != nil {
					t.Fatal(err)
				}
				want := blocksWant(sumModel, x, blocks)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("prediction %d: got %v, want %v", i, got[i], want[i])
					}
				}
				untouched := true
				for _, v := range scratch {
					untouched = untouched && v == -7
				}
				if untouched != tc.inSlot {
					t.Errorf("scratch untouched: %v, want %v (values written into the shared buffer)", untouched, tc.inSlot)
				}
				// fill's own error is returned as it is and does not stop the model.
				boom := errors.New("boom")
				if err := m.PredictBlocksFilled(got, x, descs, scratch, func([]float64) error { return boom }); err != boom {
					t.Errorf("fill failing: got %v, want its error", err)
				}
				if err := m.PredictBlocksFilled(got, x, descs, scratch, fillFrom(blocks)); err != nil {
					t.Errorf("after fill failed: %v", err)
				}
			})
		}
	}
}
