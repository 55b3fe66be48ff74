// Package explainertest checks that an explanation method keeps the
// contract tempora's command line and benchmark rely on, in the spirit of
// testing/fstest: a method's tests call Test and fail with its error.
//
//	func TestContract(t *testing.T) {
//		if err := explainertest.Test(&myMethod, explainertest.Options{}); err != nil {
//			t.Fatal(err)
//		}
//	}
//
// Test explains two small synthetic problems of its own (one regression,
// one classification; seeded random data and an additive model over two
// features' windows, not package synth) and checks that
//
//   - the method's parameter defaults build an explainer;
//   - the explanation is identical, accounting included (runtime aside),
//     with 1, 2 and 4 workers;
//   - it explains D features × L timesteps: D·L finite cell scores, one
//     feature result per feature (index, name, finite score), named with
//     the method's canonical name;
//   - feature scores agree with cell scores: for a method without tests,
//     every feature's Score is method.FeatureScore of its cells (the rule
//     the benchmark scores by); for a method with tests (method.Method.Tests),
//     only important features have non-zero cells;
//   - model calls and instance evaluations, if the explainer reports them,
//     are those its model received;
//   - a cancelled context, before the call or after the first model call,
//     ends Explain with an error wrapping context.Canceled;
//   - no model call happens after Explain returns (no goroutine is left
//     running);
//   - bad input is an error, never a panic or an explanation: targets or
//     feature names that do not match the data, infinite data, and a
//     failing model (whose error must be wrapped, errors.Is);
//   - a missing value (NaN) is either refused as incomplete data (an error
//     that is a *method.IncompleteError, method.RequireComplete's) or
//     explained: with a model that takes NaN the explanation keeps the
//     shape and finiteness rules above, and a model that fails on NaN has
//     its error reported (wrapped) or the data refused, never an
//     explanation.
//
// Each run is recovered, so a panic is reported as a broken rule.
package explainertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// Options configure Test. The zero value of every field is a documented
// default.
type Options struct {
	// Params are parameter values as text, as "tempora explain" flags give
	// them; parameters not listed take their quick-scale defaults
	// (method.Param.Quick, else Default), which keeps budgets small.
	Params map[string]string
	// Instances, Features and Timesteps are the size of the test problems;
	// zero means 40 × 3 × 5. Features must be at least 2 and Timesteps at
	// least 3.
	Instances, Features, Timesteps int
	// Seed seeds the data and the explainer; zero means 1.
	Seed uint64
}

// Workers are the worker counts whose explanations must be identical.
var Workers = []int{1, 2, 4}

// Test checks m against the contract (see the package documentation) and
// returns an error listing every rule it breaks, or nil.
func Test(m *method.Method, o Options) error {
	if o.Instances == 0 {
		o.Instances = 40
	}
	if o.Features == 0 {
		o.Features = 3
	}
	if o.Timesteps == 0 {
		o.Timesteps = 5
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Instances < 4 || o.Features < 2 || o.Timesteps < 3 {
		return fmt.Errorf("explainertest: problems of %d × %d × %d are too small (want at least 4 × 2 × 3)", o.Instances, o.Features, o.Timesteps)
	}
	c := &checker{m: m, o: o}
	vals, err := m.Values(o.Params, true)
	if err != nil {
		return fmt.Errorf("explainertest: %w", err)
	}
	c.vals = vals
	for _, task := range []tempora.Task{tempora.Regression, tempora.Classification} {
		c.task(task)
	}
	if len(c.errs) == 0 {
		return nil
	}
	return fmt.Errorf("explainertest: %s breaks the contract:\n\t%s", m.Name, strings.Join(c.errs, "\n\t"))
}

type checker struct {
	m        *method.Method
	o        Options
	vals     method.Values
	errs     []string
	counters []*counter // of the current task, checked for late calls
}

// newCounter returns a counter of model's calls, checked for calls after
// Explain returned at the end of the task.
func (c *checker) newCounter(model tempora.Model, hook func(int64)) *counter {
	k := &counter{model: model, hook: hook}
	c.counters = append(c.counters, k)
	return k
}

func (c *checker) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// explain builds the explainer with the given workers and runs it on model
// and data, recovering a panic.
func (c *checker) explain(ctx context.Context, workers int, model tempora.Model, data *tempora.Dataset) (e *tempora.Explanation, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	ex, err := c.m.Explainer(method.Config{Seed: c.o.Seed, Workers: workers, Data: data, Values: c.vals})
	if err != nil {
		return nil, err
	}
	return ex.Explain(ctx, model, data)
}

// counter counts a model's calls and flags calls after it is closed.
type counter struct {
	model  tempora.Model
	calls  atomic.Int64
	evals  atomic.Int64
	closed atomic.Bool
	late   atomic.Int64
	hook   func(n int64) // called with the call count, before predicting
}

func (k *counter) Predict(dst []float64, x *tempora.Tensor) error {
	if k.closed.Load() {
		k.late.Add(1)
	}
	n := k.calls.Add(1)
	k.evals.Add(int64(x.M))
	if k.hook != nil {
		k.hook(n)
	}
	return k.model.Predict(dst, x)
}

func (c *checker) task(task tempora.Task) {
	data, model := Problem(c.o.Instances, c.o.Features, c.o.Timesteps, task, c.o.Seed)
	where := task.String()
	var (
		first []byte
		calls int64
	)
	for _, w := range Workers {
		k := c.newCounter(model, nil)
		e, err := c.explain(context.Background(), w, k, data)
		k.closed.Store(true)
		if err != nil {
			c.fail("%s, %d workers: %v", where, w, err)
			return
		}
		if err := method.CheckExplanation(e, data); err != nil {
			c.fail("%s: %v", where, err)
			return
		}
		if e.Method != c.m.Name {
			c.fail("%s: the explanation is named %q, want the method's canonical name %q", where, e.Method, c.m.Name)
		}
		if a := e.Accounting; (a.ModelCalls != 0 || a.InstanceEvals != 0) && (a.ModelCalls != k.calls.Load() || a.InstanceEvals != k.evals.Load()) {
			c.fail("%s, %d workers: reports %d model calls and %d instance evaluations, the model received %d and %d",
				where, w, a.ModelCalls, a.InstanceEvals, k.calls.Load(), k.evals.Load())
		}
		c.consistent(where, e)
		e.Accounting.Runtime = 0
		e.Accounting.ModelCalls, e.Accounting.InstanceEvals = k.calls.Load(), k.evals.Load()
		b, err := json.Marshal(e)
		if err != nil {
			c.fail("%s: encoding the explanation: %v", where, err)
			return
		}
		if first == nil {
			first, calls = b, k.calls.Load()
		} else if !bytes.Equal(b, first) {
			c.fail("%s: the explanation with %d workers differs from the one with %d: %s", where, w, Workers[0], diff(b, first))
		}
	}
	c.cancellation(where, data, model, calls)
	c.badInput(where, data, model)
	// A goroutine left running would call the model after Explain
	// returned; give it a moment to show itself.
	time.Sleep(10 * time.Millisecond)
	var late int64
	for _, k := range c.counters {
		late += k.late.Load()
	}
	c.counters = nil
	if late > 0 {
		c.fail("%s: %d model calls after Explain returned", where, late)
	}
}

// diff shows where two JSON encodings first differ.
func diff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-40)
	cut := func(x []byte) string { return string(x[lo:min(len(x), i+40)]) }
	return fmt.Sprintf("at byte %d, …%s… versus …%s…", i, cut(a), cut(b))
}

// consistent checks feature scores against cell scores.
func (c *checker) consistent(where string, e *tempora.Explanation) {
	for j, f := range e.Features {
		row := e.Cells[j*e.L : (j+1)*e.L]
		if c.m.Tests {
			if !f.Important && method.FeatureScore(row) != 0 {
				c.fail("%s: feature %s is not important but has non-zero cell scores", where, f.Name)
			}
			continue
		}
		// FeatureScore sums at most L magnitudes and divides once, so a
		// score computed the same way from the same cells agrees to a few
		// ulps; 1e-12 relative is far above rounding and far below any
		// real disagreement.
		want := method.FeatureScore(row)
		if math.Abs(f.Score-want) > 1e-12*math.Max(1, math.Abs(want)) {
			c.fail("%s: feature %s has score %v, its cells give %v (method.FeatureScores sets the benchmark's rule)", where, f.Name, f.Score, want)
		}
	}
}

// errMissing is the error of a model that cannot take NaN.
var errMissing = errors.New("explainertest: the model cannot take a missing value")

// missing checks the rule for data with a missing value: a refusal as
// incomplete data, or an explanation with a model that takes NaN (here
// model with NaN read as 0) and an error with one that fails on it.
func (c *checker) missing(where string, data *tempora.Dataset, model tempora.Model) {
	refused := func(err error) bool {
		var inc *method.IncompleteError
		return errors.As(err, &inc)
	}
	takesNaN := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		y := x.Clone()
		for k, v := range y.Data {
			if v != v {
				y.Data[k] = 0
			}
		}
		return model.Predict(dst, y)
	})
	e, err := c.explain(context.Background(), 2, takesNaN, data)
	switch {
	case err != nil && strings.HasPrefix(err.Error(), "panic: "):
		c.fail("%s: data with a missing value: %v", where, err)
	case err != nil && !refused(err):
		c.fail("%s: data with a missing value and a model that takes NaN: error %q, want an explanation or a refusal of incomplete data (method.RequireComplete)", where, err)
	case err == nil:
		if err := method.CheckExplanation(e, data); err != nil {
			c.fail("%s: data with a missing value: %v", where, err)
		}
	}
	failsOnNaN := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for _, v := range x.Data {
			if v != v {
				return errMissing
			}
		}
		return model.Predict(dst, x)
	})
	e, err = c.explain(context.Background(), 2, failsOnNaN, data)
	switch {
	case err == nil:
		c.fail("%s: data with a missing value and a model that fails on NaN: no error (%s)", where, describe(e))
	case strings.HasPrefix(err.Error(), "panic: "):
		c.fail("%s: data with a missing value: %v", where, err)
	case !refused(err) && !errors.Is(err, errMissing):
		c.fail("%s: data with a missing value and a model that fails on NaN: error %q neither refuses the data nor wraps the model's error", where, err)
	}
}

// cancellation checks that a cancelled context ends Explain with its error.
func (c *checker) cancellation(where string, data *tempora.Dataset, model tempora.Model, calls int64) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	k := c.newCounter(model, nil)
	e, err := c.explain(ctx, 2, k, data)
	k.closed.Store(true)
	if !errors.Is(err, context.Canceled) {
		c.fail("%s: with a cancelled context Explain returned (%v, %v), want an error wrapping context.Canceled", where, describe(e), err)
	}
	if calls < 2 {
		return // nothing to interrupt between calls
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	k = c.newCounter(model, func(n int64) {
		if n == 1 {
			cancel()
		}
	})
	e, err = c.explain(ctx, 2, k, data)
	k.closed.Store(true)
	if !errors.Is(err, context.Canceled) {
		c.fail("%s: cancelled after the first of %d model calls, Explain returned (%v, %v), want an error wrapping context.Canceled", where, calls, describe(e), err)
	}
}

func describe(e *tempora.Explanation) string {
	if e == nil {
		return "no explanation"
	}
	return "an explanation"
}

// errModel is the error of the failing model.
var errModel = errors.New("explainertest: the model failed on purpose")

// badInput checks that bad data and a failing model give errors.
func (c *checker) badInput(where string, data *tempora.Dataset, model tempora.Model) {
	bad := func(what string, d *tempora.Dataset, m tempora.Model, want error) {
		e, err := c.explain(context.Background(), 2, m, d)
		switch {
		case err == nil:
			c.fail("%s: %s: no error (%s)", where, what, describe(e))
		case strings.HasPrefix(err.Error(), "panic: "):
			c.fail("%s: %s: %v", where, what, err)
		case want != nil && !errors.Is(err, want):
			c.fail("%s: %s: error %q does not wrap the model's error", where, what, err)
		}
	}
	short := *data
	short.Y = data.Y[:len(data.Y)-1]
	bad("one target too few", &short, model, nil)

	names := *data
	names.FeatureNames = []string{"only"}
	bad("one feature name for several features", &names, model, nil)

	withValue := func(v float64) *tempora.Dataset {
		x := data.X.Clone()
		x.Set(x.M/2, 1, 1, v)
		d := *data
		d.X = x
		return &d
	}
	bad("data holding +Inf", withValue(math.Inf(1)), model, nil)
	c.missing(where, withValue(math.NaN()), model)

	failing := tempora.ModelFunc(func([]float64, *tempora.Tensor) error { return errModel })
	bad("a failing model", data, failing, errModel)
}
