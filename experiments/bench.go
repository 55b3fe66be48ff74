package experiments

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/record"
)

// WriteBench rewrites dir/bench.txt atomically from every record below
// dir/records, in key order, in the Go benchmark format, with header lines
// naming the platform, the seed and the suite (from dir/manifest.json).
func WriteBench(dir string) error {
	recs, err := record.ReadAll(filepath.Join(dir, "records"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	header := []record.Param{
		{Key: "goos", Value: runtime.GOOS}, {Key: "goarch", Value: runtime.GOARCH},
		{Key: "cpu", Value: cpuName()}, {Key: "go", Value: runtime.Version()},
	}
	if m, err := ReadManifest(dir); err == nil {
		header = append(header, record.Param{Key: "seed", Value: strconv.FormatUint(m.Seed, 10)}, record.Param{Key: "suite", Value: m.Suite})
		if m.Quick {
			header = append(header, record.Param{Key: "scale", Value: "quick"})
		}
		if m.Grid != "" {
			header = append(header, record.Param{Key: "grid", Value: m.Grid})
		}
	}
	return atomicfile.Write(filepath.Join(dir, "bench.txt"), func(w io.Writer) error {
		return record.WriteBench(w, header, recs)
	})
}

// cpuName returns the processor's model name, as the testing package
// prints it, or GOARCH when unknown.
func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}
