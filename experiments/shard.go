package experiments

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard selects a deterministic share of a suite's items: item k (in the
// order of Items) belongs to shard k mod N. The zero value (N = 0) means
// the whole suite.
type Shard struct {
	I, N int
}

// ParseShard parses "i/n" with 0 ≤ i < n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("experiments: shard %q, want i/n with 0 <= i < n", s)
	}
	return Shard{I: i, N: n}, nil
}

// String returns "i/n", or "" for the whole suite.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

func (s Shard) validate() error {
	if s.N == 0 && s.I == 0 {
		return nil
	}
	if s.N < 1 || s.I < 0 || s.I >= s.N {
		return fmt.Errorf("experiments: shard %d/%d, want 0 <= i < n", s.I, s.N)
	}
	return nil
}

func (s Shard) has(k int) bool { return s.N == 0 || k%s.N == s.I }
