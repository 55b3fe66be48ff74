package experiments

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/internal/scorefile"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/metrics"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/synth"
)

// readTruth reads the ground truth of a synthetic problem directory
// written by synth (synth.ReadTruth), without loading the data, and checks
// it against its number of timesteps.
func readTruth(dir string) (*record.Truth, int, error) {
	ft, l, err := synth.ReadTruth(dir)
	if err != nil {
		return nil, 0, err
	}
	tr := truthOf(ft)
	if err := metrics.CheckTruth(tr, len(ft), l); err != nil {
		return nil, 0, fmt.Errorf("%w (in %s)", err, filepath.Join(dir, synth.TruthFile))
	}
	return tr, l, nil
}

// readScores reads an outside tool's score file (scorefile.Read), with
// feature results filled from the cells (method.FeatureScores) when the
// file has none.
func readScores(path string) (*tempora.Explanation, error) {
	e, err := scorefile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	return withFeatures(e), nil
}

// withFeatures fills e's feature results from its cells
// (method.FeatureScores) when it has none, naming features by index.
func withFeatures(e *tempora.Explanation) *tempora.Explanation {
	if len(e.Features) == 0 {
		e.Features = make([]tempora.FeatureResult, e.D)
		for j := range e.Features {
			e.Features[j] = tempora.NewFeatureResult(j, strconv.Itoa(j))
		}
		method.FeatureScores(e)
	}
	return e
}

// readAttributions reads per-instance attributions (dataio's one layout:
// n instances × D × L for the first n instances of a problem's data, any
// n from 1 to the data's instances, or n × K × D × L for the K outputs of
// a model with several), as a tensor of n·K rows (row i·K + k: instance
// i's of output k) and K (1 for a 3-D array).
func readAttributions(path string) (*tempora.Tensor, int, error) {
	local, k, err := dataio.ReadAttributionsNPY(path)
	if err != nil {
		return nil, 0, fmt.Errorf("experiments: attributions: %w", err)
	}
	return local, k, nil
}

// EvaluateFiles scores an outside tool's explanation of the synthetic
// problem in dir (written by tempora synth or tempora problems) against
// the problem's truth and returns the record without its identity fields
// (see metrics.Score): the detection metrics in the given mode, and the
// per-feature metrics when tests is set or the file is an explanation with
// test outcomes (one result per feature, some with a p-value or a window).
// scores names a score file: a D × L matrix as JSON or CSV, or an
// explanation as tempora explain writes it, optionally with the tool's
// cost ({"cells": …, "accounting": {"runtime_seconds": s, "model_calls":
// n, "instance_evaluations": k}}); see internal/scorefile. attributions,
// if not empty, names per-instance attributions, a .npy array of n
// instances × D × L for the problem's first n instances, whose
// per-instance metrics against the per-instance truth of the problem's
// model (synth.Model.InstanceTruth; dir must then hold the problem's model
// and data) are added to the record. scores may then be empty: the cell
// scores are each cell's mean magnitude over the instances.
func EvaluateFiles(dir, scores, attributions string, mode method.Mode, tests bool) (*record.Record, error) {
	if scores == "" && attributions == "" {
		return nil, fmt.Errorf("experiments: nothing to evaluate (no scores and no attributions)")
	}
	tr, l, err := readTruth(dir)
	if err != nil {
		return nil, err
	}
	var local *tempora.Tensor
	k := 1
	if attributions != "" {
		if local, k, err = readAttributions(attributions); err != nil {
			return nil, err
		}
		if local.D != len(tr.Relevant) || local.L != l {
			return nil, fmt.Errorf("experiments: %s has attributions of %d features × %d timesteps, the problem in %s has %d features × %d timesteps",
				attributions, local.D, local.L, dir, len(tr.Relevant), l)
		}
	}
	var e *tempora.Explanation
	path := scores
	if scores != "" {
		if e, err = readScores(scores); err != nil {
			return nil, err
		}
	} else {
		e, path = withFeatures(scorefile.GlobalCells(local)), attributions
	}
	if e.D != len(tr.Relevant) || e.L != l {
		return nil, fmt.Errorf("experiments: %s has %d × %d scores, the problem in %s has %d features × %d timesteps",
			path, e.D, e.L, dir, len(tr.Relevant), l)
	}
	if tests && !scorefile.HasTests(e) {
		return nil, fmt.Errorf("experiments: %s holds scores only, but the method is scored on per-feature test outcomes (an explanation with p-values and windows)", path)
	}
	rec, err := metrics.Score(tr, e, mode, tests || scorefile.HasTests(e))
	if err != nil || local == nil {
		return rec, err
	}
	p, err := synth.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("experiments: per-instance truth: %w", err)
	}
	if k != p.Data.K() {
		return nil, fmt.Errorf("experiments: %s has attributions of %d outputs, the model of the problem in %s has %d (attributions of several outputs are instances × outputs × features × timesteps)", attributions, k, dir, p.Data.K())
	}
	if local.M/k > p.Data.X.M {
		return nil, fmt.Errorf("experiments: %s has attributions of %d instances, the problem in %s has %d", attributions, local.M/k, dir, p.Data.X.M)
	}
	ms, err := localScores(p.Model, p.Data, local, nil)
	if err != nil {
		return nil, err
	}
	rec.Metrics = append(rec.Metrics, ms...)
	return rec, nil
}

// EvaluateOptions configure EvaluateProblems.
type EvaluateOptions struct {
	// Problems is a directory written by WriteProblems.
	Problems string
	// Scores is the name of the score file in each problem's directory;
	// Attributions, if not empty, the name of its per-instance
	// attributions (see EvaluateFiles). One of them must be set.
	Scores, Attributions string
	// Method is the method name of the records.
	Method string
	// Mode and Tests say how to score, as for EvaluateFiles.
	Mode  method.Mode
	Tests bool
	// Out is the output directory: records below Out/records, plus
	// Out/manifest.json and Out/bench.txt, as Run writes them.
	Out string
}

// EvaluateProblems scores the score file of every problem listed in
// o.Problems/index.json against that problem's truth and writes one record
// per (setting, model), with the identity (suite, setting, model and problem
// seed) of a Run on the same problems, so that Merge and the reports take
// them beside such a run: the outside method gets its own rows. The
// records' runtime and model calls are those of the score file's
// accounting, when it has one (see EvaluateFiles), else 0. It returns the
// number of records written. An output directory holding a run of other
// problems is refused.
func EvaluateProblems(o EvaluateOptions) (int, error) {
	if o.Out == "" || o.Problems == "" || (o.Scores == "" && o.Attributions == "") {
		return 0, fmt.Errorf("experiments: EvaluateProblems needs Problems, Scores or Attributions, and Out")
	}
	if err := method.CheckName(o.Method); err != nil {
		return 0, fmt.Errorf("experiments: %w", err)
	}
	idx, err := ReadIndex(o.Problems)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("experiments: %s has no %s (write one with tempora problems)", o.Problems, IndexFile)
		}
		return 0, err
	}
	man := &Manifest{Format: ManifestFormat, Suite: idx.Suite, Grid: idx.Grid, Quick: idx.Quick, Seed: idx.Seed,
		Models: idx.Models, Methods: []string{o.Method}}
	if old, err := ReadManifest(o.Out); err == nil {
		if !old.sameProblems(man) {
			return 0, fmt.Errorf("experiments: %s holds a run of suite %s (grid %q, quick %v, seed %d), not suite %s (grid %q, quick %v, seed %d)",
				o.Out, old.Suite, old.Grid, old.Quick, old.Seed, man.Suite, man.Grid, man.Quick, man.Seed)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	var recs []*record.Record
	for _, e := range idx.Problems {
		dir := filepath.Join(o.Problems, filepath.FromSlash(e.Dir))
		var scores, attributions string
		if o.Scores != "" {
			scores = filepath.Join(dir, o.Scores)
		}
		if o.Attributions != "" {
			attributions = filepath.Join(dir, o.Attributions)
		}
		rec, err := EvaluateFiles(dir, scores, attributions, o.Mode, o.Tests)
		if err != nil {
			return 0, err
		}
		rec.Suite, rec.Params, rec.Model, rec.Seed, rec.Method = idx.Suite, e.Params, e.Model, e.Seed, o.Method
		rec.Explanation.Method = o.Method
		if err := rec.Validate(); err != nil { // refused before anything is written
			return 0, err
		}
		recs = append(recs, rec)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return 0, err
	}
	if err := writeManifest(o.Out, man); err != nil {
		return 0, err
	}
	for _, r := range recs {
		if err := record.Write(filepath.Join(o.Out, "records"), r); err != nil {
			return 0, err
		}
	}
	return len(recs), WriteBench(o.Out)
}
