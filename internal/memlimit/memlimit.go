// Package memlimit checks, before anything is allocated, that a computation
// whose size the user chose (samples, permutations, instances) fits in
// memory, so that a mistyped flag gives a one-line error instead of the Go
// runtime's "fatal error: out of memory" and a goroutine dump.
//
// The limit (Default) is the first that applies of:
//
//   - the Go runtime's soft memory limit, if one is set (GOMEMLIMIT or
//     debug.SetMemoryLimit);
//   - 3/4 of the smaller of the physical memory and the memory limit of
//     the process's control group (Linux, cgroup v1 or v2; a Slurm job's
//     allocation is such a limit);
//   - Fallback (16 GiB) where neither is known.
//
// Estimates are floating-point byte counts so that absurd sizes do not
// overflow.
package memlimit

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fallback is the limit where the physical memory is unknown.
const Fallback = 16 << 30

// Fraction of the physical (or control-group) memory a computation may
// plan to use: the rest is left to the data already loaded, the model and
// the operating system.
const Fraction = 0.75

// Default returns the memory limit in bytes and a short description of where
// it comes from, for error messages.
func Default() (int64, string) {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return l, "the Go runtime's memory limit (GOMEMLIMIT)"
	}
	phys := physicalMemory()
	cg := cgroupLimit()
	switch {
	case cg > 0 && (phys == 0 || cg < phys):
		return int64(Fraction * float64(cg)), fmt.Sprintf("3/4 of the control group's %s memory limit", Format(float64(cg)))
	case phys > 0:
		return int64(Fraction * float64(phys)), fmt.Sprintf("3/4 of the %s of physical memory", Format(float64(phys)))
	}
	return Fallback, "the default of " + Format(Fallback) + " (physical memory unknown)"
}

// Check returns an error if estimate bytes exceed limit. what names the
// computation and how its size arises, e.g. "LIME with 2000000000 samples
// per instance"; source describes the limit (see Default). A limit of zero
// or less disables the check. The error is one line, without a package
// prefix: callers add theirs.
func Check(what string, estimate float64, limit int64, source string) error {
	if limit <= 0 || estimate <= float64(limit) {
		return nil
	}
	return fmt.Errorf("%s needs about %s of memory, more than the limit of %s (%s)", what, Format(estimate), Format(float64(limit)), source)
}

// Format renders a byte count with a binary unit, e.g. "1.5 GiB".
func Format(b float64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	for b >= 1024 && u < len(units)-1 {
		b /= 1024
		u++
	}
	if u == 0 {
		return strconv.FormatFloat(b, 'f', 0, 64) + " bytes"
	}
	if b >= 1024 { // beyond EiB
		return strconv.FormatFloat(b, 'g', 3, 64) + " " + units[u]
	}
	return strconv.FormatFloat(b, 'f', 1, 64) + " " + units[u]
}

// cgroupLimit returns the memory limit of the process's control group in
// bytes, or 0 if there is none or it cannot be read.
func cgroupLimit() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var limit int64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		// hierarchy-ID:controllers:path; cgroup v2 has "0::path".
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var file string
		switch {
		case f[0] == "0" && f[1] == "":
			file = "/sys/fs/cgroup" + f[2] + "/memory.max"
		case strings.Contains(","+f[1]+",", ",memory,"):
			file = "/sys/fs/cgroup/memory" + f[2] + "/memory.limit_in_bytes"
		default:
			continue
		}
		if v := readLimit(file); v > 0 && (limit == 0 || v < limit) {
			limit = v
		}
	}
	return limit
}

// readLimit reads a control group memory limit file: a byte count, or
// "max" (or a huge number) for none.
func readLimit(file string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v <= 0 || v >= 1<<60 {
		return 0
	}
	return v
}
