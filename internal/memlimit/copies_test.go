package memlimit

import "testing"

// TestChunkRows checks the working-copy rule: small data and data whose
// copies fit the budget are copied whole; larger data is chunked into as
// many whole instances as a chunk holds, at least one.
func TestChunkRows(t *testing.T) {
	for _, tc := range []struct {
		m, width, workers int
		budget            int64
		chunk, want       int
	}{
		{100, 10, 4, 1, 1000, 100},           // at most a chunk: whole
		{100, 10, 4, 4 * 8 * 1000, 500, 100}, // four copies fit the budget exactly
		{100, 10, 4, 4*8*1000 - 1, 500, 50},  // one byte short: chunks of 50
		{100, 1000, 2, 1, 500, 1},            // an instance wider than a chunk
		{100, 10, 1, 0, 500, 100},            // the default budget holds 8 KB
		{100, 10, 4, 4 * 8 * 200, 500, 20},   // four chunks of 500 values would not fit: 200 values each
		{100, 10, 4, 1, 500, 1},              // a budget below one instance per worker: one instance
	} {
		if got := ChunkRows(tc.m, tc.width, tc.workers, tc.budget, tc.chunk); got != tc.want {
			t.Errorf("ChunkRows(%d, %d, %d, %d, %d) = %d, want %d", tc.m, tc.width, tc.workers, tc.budget, tc.chunk, got, tc.want)
		}
	}
	if b := CopyBudget(); b <= 0 || b > CopyCap {
		t.Errorf("CopyBudget() = %d, want in (0, CopyCap = %d]", b, CopyCap)
	}
}
