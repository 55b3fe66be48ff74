package experiments

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

// fakeSource returns a tiny deterministic problem for any spec: the spec's
// instances × 3 features × 4 timesteps drawn from the seed; feature 0 is
// relevant on [1, 2] and feature 2 on [0, 3]. The model sums feature 0's
// window.
func fakeSource(_ context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
	const d, l = 3, 4
	m := spec.Instances
	rng := tempora.NewRand(seed, "fake")
	x := tempora.NewTensor(m, d, l)
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	y := make([]float64, m)
	for i := range y {
		y[i] = x.At(i, 0, 1) + x.At(i, 0, 2)
	}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			dst[i] = x.At(i, 0, 1) + x.At(i, 0, 2)
		}
		return nil
	})
	tr := &record.Truth{
		Relevant:                []bool{true, false, true},
		Windows:                 []tempora.Window{{Start: 1, End: 2}, {Start: 0, End: 3}, {Start: 0, End: 3}},
		EffectSize:              []float64{1, 0, 1},
		OrderingImportant:       []bool{true, false, false},
		WindowOrderingImportant: []bool{false, false, false},
	}
	return &Problem{Data: &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}, Model: model, Truth: tr}, nil
}

// fakeExplainer scores cells with random numbers from its seed plus the
// mean of the data, so that its output depends on the seed and the
// problem; it counts its calls and can cancel a context after a number of
// calls.
type fakeExplainer struct {
	name   string
	seed   uint64
	calls  *atomic.Int64
	cancel func(n int64) // called with the running call count
}

func (f fakeExplainer) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	if f.calls != nil {
		n := f.calls.Add(1)
		if f.cancel != nil {
			f.cancel(n)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// One model call, which the framework counts.
	if err := m.Predict(make([]float64, data.X.M), data.X); err != nil {
		return nil, err
	}
	e := tempora.NewExplanation(f.name, data)
	rng := tempora.NewRand(f.seed, "cells")
	var mean float64
	for _, v := range data.X.Data {
		mean += v
	}
	mean /= float64(len(data.X.Data))
	for k := range e.Cells {
		e.Cells[k] = rng.Float64() + mean
	}
	for j := range e.Features {
		e.Features[j].Tested = true
		e.Features[j].Important = rng.IntN(2) == 1
		e.Features[j].Window = &tempora.Window{Start: 1, End: 2}
	}
	return e, nil
}

// fakeMethods returns a paired method ("PAIR" and "PAIR-n" made from it,
// like TIME) and a single one ("SOLO").
func fakeMethods(calls *atomic.Int64, cancel func(int64)) []method.Method {
	mk := func(name string) func(c method.Config) (tempora.Explainer, error) {
		return func(c method.Config) (tempora.Explainer, error) {
			return fakeExplainer{name: name, seed: c.Seed, calls: calls, cancel: cancel}, nil
		}
	}
	pair := method.Method{Name: "PAIR", New: mk("PAIR"), Mode: method.AllNonZero, Tests: true}
	return []method.Method{
		pair,
		{Name: "PAIR-n", From: &pair, Mode: method.TopN, Tests: true},
		{Name: "SOLO", New: mk("SOLO")},
	}
}

// fakeOptions runs the testsize-regression suite (5 settings at quick
// scale share one problem per model) with the fake problems and methods.
func fakeOptions(out string, calls *atomic.Int64, cancel func(int64)) Options {
	return Options{
		Suite: "testsize-regression", Quick: true, Models: 3, Seed: 7,
		Methods: []string{"pair", "PAIR-n", "solo"}, Extra: fakeMethods(calls, cancel),
		Out: out, source: fakeSource,
	}
}

var runtimeField = regexp.MustCompile(`"runtime_seconds": [^,\n]*`)

// readRecordFiles returns every file below dir/records by relative path,
// with runtime fields (which differ between runs) zeroed. It fails on
// temporary files left behind.
func readRecordFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	root := filepath.Join(dir, "records")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return fs.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			t.Errorf("temporary file %s left behind", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = checksumField.ReplaceAllString(runtimeField.ReplaceAllString(string(b), `"runtime_seconds": 0`), `"checksum": ""`)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(t *testing.T, name string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d record files, want %d", name, len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: missing %s", name, k)
		case g != w:
			t.Errorf("%s: %s differs:\n%s\nwant\n%s", name, k, g, w)
		}
	}
}

func TestRunRecords(t *testing.T) {
	out := t.TempDir()
	var calls atomic.Int64
	o := fakeOptions(out, &calls, nil)
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	// 5 instance counts (100…1600) × 3 models × 2 runs (PAIR, SOLO).
	if got := calls.Load(); got != 30 {
		t.Errorf("%d explanations, want 30", got)
	}
	recs, err := record.ReadAll(filepath.Join(out, "records"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 45 {
		t.Fatalf("%d records, want 45 (5 counts × 3 models × 3 outputs)", len(recs))
	}
	for _, r := range recs {
		n := 18 // detection metrics + TIME metrics + area metrics
		if r.Method == "SOLO" {
			n = 12
		}
		if len(r.Metrics) != n {
			t.Errorf("%s: %d metrics, want %d", r.Key(), len(r.Metrics), n)
		}
		if r.Truth == nil || r.Explanation == nil || r.ModelCalls != 1 {
			t.Errorf("%s: truth, explanation or accounting missing", r.Key())
		}
	}
	// Every method sees the same problem: equal seeds per (setting, model).
	seeds := map[string]uint64{}
	for _, r := range recs {
		k := fmt.Sprint(r.Model)
		if s, ok := seeds[k]; ok && s != r.Seed {
			t.Errorf("%s: problem seed %d, other records of model %d have %d", r.Key(), r.Seed, r.Model, s)
		}
		seeds[k] = r.Seed
	}
	// PAIR and PAIR-n come from one explanation.
	a, _ := recs[0].Get("feature-power-all")
	b, _ := recs[1].Get("feature-power-all")
	if recs[0].Method != "PAIR" || recs[1].Method != "PAIR-n" || a != b || recs[0].RuntimeSeconds != recs[1].RuntimeSeconds {
		t.Errorf("PAIR and PAIR-n records disagree on their shared run: %s %v %v", recs[1].Method, a, b)
	}
	bench, err := os.ReadFile(filepath.Join(out, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(bench)), "\n")
	var nb int
	for _, l := range lines {
		if strings.HasPrefix(l, "Benchmark") {
			nb++
		}
	}
	if nb != 45 || !slices.Contains(lines, "suite: testsize-regression") || !slices.Contains(lines, "seed: 7") {
		t.Errorf("bench.txt has %d benchmark lines (want 45) or lacks its suite/seed header:\n%s", nb, bench)
	}

	// Rerunning does nothing.
	calls.Store(0)
	before := readRecordFiles(t, out)
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 {
		t.Errorf("rerun explained %d problems, want 0", calls.Load())
	}
	sameFiles(t, "rerun", readRecordFiles(t, out), before)

	// Adding a model leaves existing records alone and adds one model's.
	prog := &progressLog{suite: o.Suite}
	o.Models, o.Progress = 4, prog
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	// Told of the items done and to run, then of each item.
	if lines := strings.Split(strings.TrimSpace(prog.String()), "\n"); len(lines) != 10+1 ||
		!strings.Contains(lines[0], "30 items already done, 10 to run") || !strings.Contains(lines[1], "done model=3") {
		t.Errorf("progress:\n%s", prog.String())
	}
	if calls.Load() != 10 {
		t.Errorf("adding a model explained %d problems, want 10", calls.Load())
	}
	after := readRecordFiles(t, out)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("adding a model changed %s", k)
		}
	}

	// A directory of another run is refused.
	o.Seed = 8
	if err := Run(context.Background(), o); err == nil {
		t.Error("run with another seed into the same directory: no error")
	}
}

func TestRunResume(t *testing.T) {
	ref := t.TempDir()
	if err := Run(context.Background(), fakeOptions(ref, nil, nil)); err != nil {
		t.Fatal(err)
	}
	want := readRecordFiles(t, ref)

	out := t.TempDir()
	for _, k := range []int64{1, 5, 11} {
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int64
		// Cancel during the k-th explanation.
		o := fakeOptions(out, &calls, func(n int64) {
			if n == k {
				cancel()
			}
		})
		err := Run(ctx, o)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted run: error %v, want context.Canceled", err)
		}
		readRecordFiles(t, out) // no temporary files
	}
	// The interrupted runs finished 0, 4 and 10 items (each cancelled
	// during the k-th explanation of its own run): 14 items, alternately
	// PAIR (2 records) and SOLO (1 record).
	if got := len(readRecordFiles(t, out)); got != 21 {
		t.Errorf("after the interrupted runs: %d records, want 21", got)
	}
	if err := Run(context.Background(), fakeOptions(out, nil, nil)); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "resumed", readRecordFiles(t, out), want)
}

func TestShardMerge(t *testing.T) {
	ref := t.TempDir()
	if err := Run(context.Background(), fakeOptions(ref, nil, nil)); err != nil {
		t.Fatal(err)
	}
	want := readRecordFiles(t, ref)

	root := t.TempDir()
	const n = 3
	var dirs []string
	for i := range n {
		d := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		o := fakeOptions(d, nil, nil)
		o.Shard = Shard{I: i, N: n}
		if err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	merged := filepath.Join(root, "merged")
	// Two shards are not complete.
	err := Merge(merged, dirs[:2])
	var inc *IncompleteError
	if !errors.As(err, &inc) || len(inc.Missing) == 0 {
		t.Errorf("merging 2 of 3 shards: error %v, want an IncompleteError", err)
	}
	if err := Merge(merged, dirs); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "merged", readRecordFiles(t, merged), want)
	bm, _ := os.ReadFile(filepath.Join(merged, "bench.txt"))
	br, _ := os.ReadFile(filepath.Join(ref, "bench.txt"))
	if strip := func(b []byte) string { return regexp.MustCompile(`[0-9.e+-]+ sec/op`).ReplaceAllString(string(b), "") }; strip(bm) != strip(br) {
		t.Errorf("merged bench.txt differs from the unsharded one:\n%s\nwant\n%s", bm, br)
	}

	// Inputs of different runs are refused.
	other := filepath.Join(root, "other")
	o := fakeOptions(other, nil, nil)
	o.Seed, o.Shard = 99, Shard{I: 2, N: n}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if err := Merge(filepath.Join(root, "bad"), []string{dirs[0], dirs[1], other}); err == nil {
		t.Error("merging shards of runs with different seeds: no error")
	}
	if err := Merge(filepath.Join(root, "bad2"), []string{dirs[0], dirs[0]}); err == nil {
		t.Error("merging one shard twice: no error")
	}
}

func TestRunErrors(t *testing.T) {
	base := fakeOptions(t.TempDir(), nil, nil)
	for _, c := range []struct {
		name string
		edit func(o *Options)
	}{
		{"no out", func(o *Options) { o.Out = "" }},
		{"unknown suite", func(o *Options) { o.Suite = "table2" }},
		{"unknown method", func(o *Options) { o.Methods = []string{"FOO"} }},
		{"bad shard", func(o *Options) { o.Shard = Shard{I: 3, N: 3} }},
		{"grid for table1", func(o *Options) { o.Suite, o.Grid = "table1", "noise=0" }},
		{"bad grid", func(o *Options) { o.Suite, o.Grid = "grid", "noise=-1" }},
		{"negative models", func(o *Options) { o.Models = -1 }},
	} {
		o := base
		c.edit(&o)
		if err := Run(context.Background(), o); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestRunResumeDamaged damages finished records the ways a full disk, a
// crash or a hand edit can (issue 12, defect 1: a resumed run counted a
// truncated record as finished, then failed on it forever) and checks that
// the resumed run moves each aside to OUT/damaged, reruns its item, and ends
// with the records of an uninterrupted run.
func TestRunResumeDamaged(t *testing.T) {
	ref := t.TempDir()
	if err := Run(context.Background(), fakeOptions(ref, nil, nil)); err != nil {
		t.Fatal(err)
	}
	want := readRecordFiles(t, ref)

	out := t.TempDir()
	if err := Run(context.Background(), fakeOptions(out, nil, nil)); err != nil {
		t.Fatal(err)
	}
	const prefix = "testsize-regression/"
	path := func(key string) string { return filepath.Join(out, "records", filepath.FromSlash(prefix+key)) }
	read := func(key string) string {
		b, err := os.ReadFile(path(key))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Five damaged files in five different items (PAIR and PAIR-n share
	// one).
	damage := map[string]string{
		"instances=100/model=0/method=PAIR.json":   read("instances=100/model=0/method=PAIR.json")[:100],                                        // truncated
		"instances=200/model=1/method=SOLO.json":   "garbage\x00",                                                                               // garbage
		"instances=400/model=2/method=PAIR-n.json": "",                                                                                          // empty
		"instances=800/model=0/method=SOLO.json":   strings.Replace(read("instances=800/model=0/method=SOLO.json"), `"seed": `, `"seed": 1`, 1), // another problem
		"instances=1600/model=1/method=SOLO.json":  read("instances=1600/model=2/method=SOLO.json"),                                             // another key's record
	}
	for key, content := range damage {
		if err := os.WriteFile(path(key), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The record of another problem is valid (rehashed), not a hand edit
	// that its checksum would catch first.
	const otherProblem = "instances=800/model=0/method=SOLO.json"
	if _, err := record.Rehash(path(otherProblem)); err != nil {
		t.Fatal(err)
	}
	damage[otherProblem] = read(otherProblem)
	var calls atomic.Int64
	o := fakeOptions(out, &calls, nil)
	prog := &progressLog{suite: o.Suite}
	o.Progress = prog
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("resuming over damaged records: %v\n%s", err, prog.String())
	}
	if got := calls.Load(); got != int64(len(damage)) {
		t.Errorf("resumed run explained %d problems, want %d (one per damaged item)", got, len(damage))
	}
	sameFiles(t, "resumed over damaged records", readRecordFiles(t, out), want)
	for key, content := range damage {
		moved := filepath.Join(out, DamagedDir, filepath.FromSlash(prefix+key))
		b, err := os.ReadFile(moved)
		if err != nil || string(b) != content {
			t.Errorf("damaged %s not moved to %s intact: %v", key, moved, err)
		}
		line := fmt.Sprintf("testsize-regression: damaged record records/%s%s (", prefix, key)
		if !strings.Contains(prog.String(), line) || !strings.Contains(prog.String(), ") moved to damaged/"+prefix+key+"; its item runs again\n") {
			t.Errorf("progress does not report %s:\n%s", key, prog.String())
		}
	}
	for _, why := range []string{"(unexpected end of JSON input)", "(it holds the record testsize-regression/instances=1600/model=2/method=SOLO)", "its problem seed is 1"} {
		if !strings.Contains(prog.String(), why) {
			t.Errorf("progress does not say %q:\n%s", why, prog.String())
		}
	}
	if !strings.Contains(prog.String(), "testsize-regression: 25 items already done, 5 to run\n") {
		t.Errorf("progress:\n%s", prog.String())
	}

	// Damaged again: the second copy gets a numbered name; a clean rerun
	// then does nothing.
	key := "instances=100/model=0/method=PAIR.json"
	os.WriteFile(path(key), []byte("{"), 0o644)
	calls.Store(0)
	if err := Run(context.Background(), o); err != nil || calls.Load() != 1 {
		t.Fatalf("second damage: %v, %d explanations", err, calls.Load())
	}
	if b, err := os.ReadFile(filepath.Join(out, DamagedDir, filepath.FromSlash(prefix+"instances=100/model=0/method=PAIR.1.json"))); err != nil || string(b) != "{" {
		t.Errorf("second damaged copy: %q, %v", b, err)
	}
	calls.Store(0)
	prog.Reset()
	if err := Run(context.Background(), o); err != nil || calls.Load() != 0 || strings.Contains(prog.String(), "damaged") {
		t.Errorf("clean rerun: %v, %d explanations, progress:\n%s", err, calls.Load(), prog.String())
	}
	sameFiles(t, "after a clean rerun", readRecordFiles(t, out), want)
}

// TestRunMemory checks that a run or a problem set whose problems do not fit
// in memory fails before anything is written or allocated (issue 12,
// defect 2).
func TestRunMemory(t *testing.T) {
	old := debug.SetMemoryLimit(1 << 30) // 1 GiB, whatever the machine
	defer debug.SetMemoryLimit(old)
	out := filepath.Join(t.TempDir(), "run")
	o := Options{Suite: "grid", Grid: "instances=100,2000000000", Methods: []string{"TIME"}, Out: out}
	want := "experiments: setting instances=2000000000: a 2000000000 × 10 × 20 problem needs about 3.0 TiB of memory, more than the limit of 1.0 GiB (the Go runtime's memory limit (GOMEMLIMIT))"
	if err := Run(context.Background(), o); err == nil || err.Error() != want {
		t.Errorf("Run: %v, want %s", err, want)
	}
	if _, err := WriteProblems(context.Background(), o); err == nil || err.Error() != want {
		t.Errorf("WriteProblems: %v, want %s", err, want)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused run created %s (%v)", out, err)
	}
}

// progressLog records what a run tells its Progress as lines, the items
// as "suite: done model=N method=M" (tempora run's display is cli's).
type progressLog struct {
	suite string
	b     strings.Builder
}

func (p *progressLog) Moved(note string) { fmt.Fprintf(&p.b, "%s: %s\n", p.suite, note) }

func (p *progressLog) Begin(todo, skipped int) {
	if skipped > 0 {
		fmt.Fprintf(&p.b, "%s: %d items already done, %d to run\n", p.suite, skipped, todo)
	} else {
		fmt.Fprintf(&p.b, "%s: %d items to run\n", p.suite, todo)
	}
}

func (p *progressLog) Start(*Item) {}

func (p *progressLog) Done(it *Item) {
	fmt.Fprintf(&p.b, "%s: done model=%d method=%s\n", p.suite, it.Model, it.Method)
}

func (p *progressLog) String() string { return p.b.String() }

func (p *progressLog) Reset() { p.b.Reset() }
