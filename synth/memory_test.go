package synth

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestGenerateMemory checks that a problem too large for the memory limit
// is refused with a one-line error before anything is allocated (issue 12,
// defect 2: sizes that pass validation died with "fatal error: out of
// memory"), and that a problem within the limit is generated.
func TestGenerateMemory(t *testing.T) {
	// A limit of 1 GiB for the test, whatever the machine.
	old := debug.SetMemoryLimit(1 << 30)
	defer debug.SetMemoryLimit(old)

	// 2000000000 × 10 × 20 values of 8 bytes, plus six vectors: 3.0 TiB.
	_, err := Generate(Config{Instances: 2000000000}, 1)
	want := "synth: a 2000000000 × 10 × 20 problem needs about 3.0 TiB of memory, more than the limit of 1.0 GiB (the Go runtime's memory limit (GOMEMLIMIT))"
	if err == nil || err.Error() != want {
		t.Errorf("Generate(2000000000 instances) = %v, want %s", err, want)
	}
	// Just over the limit: 700000 × 10 × 20 values and six vectors are
	// 1.154e9 bytes (1.07 GiB); 600000 make 0.989e9 bytes (0.92 GiB).
	if err := CheckMemory(Config{Instances: 700000, Features: 10, Timesteps: 20}); err == nil || !strings.Contains(err.Error(), "needs about 1.1 GiB") {
		t.Errorf("CheckMemory(700000 × 10 × 20) = %v", err)
	}
	if err := CheckMemory(Config{Instances: 600000, Features: 10, Timesteps: 20}); err != nil {
		t.Errorf("CheckMemory(600000 × 10 × 20) = %v, want nil (0.9 GiB)", err)
	}
	if got, want := Memory(Config{Instances: 1000, Features: 10, Timesteps: 20}), 8.0*(1000*10*20+6*1000); got != want {
		t.Errorf("Memory(1000 × 10 × 20) = %v, want %v", got, want)
	}
	// Invalid sizes are validation errors, not memory errors.
	if _, err := Generate(Config{Instances: -2000000000, Features: -1}, 1); err == nil || strings.Contains(err.Error(), "memory") {
		t.Errorf("Generate(negative sizes) = %v, want a validation error", err)
	}
	if _, err := Generate(Config{Instances: 50, Features: 3, Timesteps: 4}, 1); err != nil {
		t.Errorf("a small problem under the limit: %v", err)
	}
	// Beyond 2^31 values a problem is refused even within the limit (the
	// largest tensor the .npy reader accepts).
	debug.SetMemoryLimit(1 << 50)
	if _, err := Generate(Config{Instances: 1 << 20, Features: 1 << 10, Timesteps: 1 << 10}, 1); err == nil || !strings.Contains(err.Error(), "more than 2147483648 values") {
		t.Errorf("Generate(2^40 values) with a limit of 1 PiB = %v", err)
	}
}
