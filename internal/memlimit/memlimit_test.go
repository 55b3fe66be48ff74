package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestDefault(t *testing.T) {
	l, src := Default()
	t.Logf("limit %s: %s", Format(float64(l)), src)
	if l <= 0 || src == "" {
		t.Fatalf("Default() = %d, %q", l, src)
	}
	if runtime.GOOS == "linux" {
		if phys := physicalMemory(); phys <= 0 || l > phys {
			t.Errorf("limit %d, physical memory %d", l, phys)
		}
	}
	old := debug.SetMemoryLimit(3 << 30)
	defer debug.SetMemoryLimit(old)
	if l, src := Default(); l != 3<<30 || !strings.Contains(src, "GOMEMLIMIT") {
		t.Errorf("with a runtime limit of 3 GiB: Default() = %d, %q", l, src)
	}
}

func TestCheck(t *testing.T) {
	if err := Check("x", 100, 100, "test"); err != nil {
		t.Errorf("estimate at the limit: %v", err)
	}
	if err := Check("x", math.Inf(1), 0, "test"); err != nil {
		t.Errorf("limit disabled: %v", err)
	}
	err := Check("LIME with 2000000000 samples per instance", 3.5*(1<<40), 12<<30, "a test limit")
	const want = "LIME with 2000000000 samples per instance needs about 3.5 TiB of memory, more than the limit of 12.0 GiB (a test limit)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		b    float64
		want string
	}{
		{0, "0 bytes"}, {1023, "1023 bytes"}, {1024, "1.0 KiB"}, {1.5 * (1 << 30), "1.5 GiB"},
		{1 << 60, "1.0 EiB"}, {1e30, "8.67e+11 EiB"},
	} {
		if got := Format(tc.b); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
