package experiments

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// The scale measurement of issue 12 (docs/decisions.md, "Memory of a TIME
// run"): TIME on the test-set-size problem (30 features, 50 timesteps, 10
// relevant, regression) at M instances. It is skipped unless
// TEMPORA_SCALE_DIR is set, and runs in two processes so that the peak
// resident memory of explaining is not that of generating:
//
//	TEMPORA_SCALE_DIR=/tmp/scale TEMPORA_SCALE_M=20000 go test ./experiments/ -run '^TestScaleGenerate$' -v -timeout 0
//	TEMPORA_SCALE_DIR=/tmp/scale TEMPORA_SCALE_WORKERS=2 go test ./experiments/ -run '^TestScaleExplain$' -v -timeout 0

func scaleEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skipf("%s is not set: the scale measurement is run by hand", name)
	}
	return v
}

// procStatus returns a memory field of /proc/self/status ("VmRSS",
// "VmHWM": the current and the peak resident set size) in bytes.
func procStatus(t *testing.T, field string) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: the scale measurement needs Linux")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb * 1024
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// peakRSS returns the peak resident set size of this process in bytes,
// since the start or the last resetPeakRSS.
func peakRSS(t *testing.T) float64 { return procStatus(t, "VmHWM") }

// resetPeakRSS resets the peak resident set size to the current one (Linux
// 4.0 and later).
func resetPeakRSS(t *testing.T) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
}

func cpuSeconds(t testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func TestScaleGenerate(t *testing.T) {
	dir := scaleEnv(t, "TEMPORA_SCALE_DIR")
	m, err := strconv.Atoi(scaleEnv(t, "TEMPORA_SCALE_M"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p, err := synth.Generate(synth.Config{
		Instances: m, Features: 30, Timesteps: 50, FractionRelevant: 0.33,
		Task: tempora.Regression, Noise: synth.AutoNoise,
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("generated and saved %d × 30 × 50 in %v; peak RSS %.0f MB", m, time.Since(start).Round(time.Millisecond), peakRSS(t)/1e6)
}

func TestScaleExplain(t *testing.T) {
	dir := scaleEnv(t, "TEMPORA_SCALE_DIR")
	workers, err := strconv.Atoi(scaleEnv(t, "TEMPORA_SCALE_WORKERS"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := synth.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	x := p.Data.X
	runtime.GC()
	debug.FreeOSMemory()
	loadPeak := peakRSS(t)
	resetPeakRSS(t)
	loaded := procStatus(t, "VmRSS")
	data := float64(8 * x.M * x.D * x.L)
	start, cpu0 := time.Now(), cpuSeconds(t)
	e, err := explain.TIME{Seed: 1, Workers: workers}.Explain(context.Background(), p.Model, p.Data)
	if err != nil {
		t.Fatal(err)
	}
	wall, cpu := time.Since(start), cpuSeconds(t)-cpu0
	peak := peakRSS(t)
	important := 0
	for _, f := range e.Features {
		if f.Important {
			important++
		}
	}
	t.Logf("TIME on %d × %d × %d (data %.0f MB) with %d workers: wall %v, CPU %.1f s, %d model calls, %d of %d features important",
		x.M, x.D, x.L, data/1e6, workers, wall.Round(time.Millisecond), cpu, e.Accounting.ModelCalls, important, x.D)
	t.Logf("RSS %.0f MB after loading (peak while loading %.0f MB); peak while explaining %.0f MB: explaining added %.0f MB = %.2f data copies",
		loaded/1e6, loadPeak/1e6, peak/1e6, (peak-loaded)/1e6, (peak-loaded)/data)
}
