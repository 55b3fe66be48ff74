// Command outputs writes the explanation JSON of three models with
// several outputs, explained by TIME through the Go API, into the
// directory given as its argument: classes.json (a nested-dichotomy
// classifier of three classes), horizons.json (a forecaster of three
// horizons) and steps.json (a sequence-to-sequence model whose last
// feature is read one step ahead). The Python tests read them
// (test_outputs.py) to check the package reads the program's per-output
// results as they are; the test regenerates them and compares, so that
// they cannot go stale:
//
//	go run ./python/tests/testdata/outputs python/tests/testdata
//
// It lives under testdata, which go's ./... patterns leave out.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

const m, d, l = 300, 4, 10

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: outputs DIR")
		os.Exit(2)
	}
	for _, p := range []struct {
		name  string
		model tempora.ModelFunc
		data  *tempora.Dataset
	}{
		{"classes", classes, classesData()},
		{"horizons", horizons, targetsOf(horizons, &tempora.Outputs{Kind: tempora.Horizons, K: 3, Names: []string{"h+1", "h+2", "h+3"}}, 2)},
		{"steps", steps, targetsOf(steps, &tempora.Outputs{Kind: tempora.Steps, K: l}, 3)},
	} {
		p.data.FeatureNames = []string{"a", "b", "c", "d"}
		ex, err := explain.TIME{Seed: 1}.Explain(context.Background(), p.model, p.data)
		if err != nil {
			fail(err)
		}
		ex.Accounting.Runtime = 0 // the one number that differs between runs
		b, err := json.MarshalIndent(ex, "", " ")
		if err != nil {
			fail(err)
		}
		if err := os.WriteFile(filepath.Join(os.Args[1], p.name+".json"), append(b, '\n'), 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "outputs:", err)
	os.Exit(1)
}

// data returns standard normal inputs of m × d × l.
func data(seed uint64) *tempora.Tensor {
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(seed, "data")
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	return x
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// classes is a nested dichotomy: class 0 against the rest by feature a
// over timesteps 6-9, then class 1 against class 2 by feature c over 1-3.
func classes(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		s1 := sigmoid(4 * mean(x.Window(i, 0, 6, 9)))
		s2 := sigmoid(4 * mean(x.Window(i, 2, 1, 3)))
		dst[3*i], dst[3*i+1], dst[3*i+2] = s1, (1-s1)*s2, (1-s1)*(1-s2)
	}
	return nil
}

// classesData draws each instance's label from the model's probabilities.
func classesData() *tempora.Dataset {
	x := data(1)
	p := make([]float64, 3*m)
	_ = classes(p, x)
	y := make([]float64, m)
	rng := tempora.NewRand(1, "labels")
	for i := range y {
		u := rng.Float64()
		switch {
		case u < p[3*i]:
			y[i] = 0
		case u < p[3*i]+p[3*i+1]:
			y[i] = 1
		default:
			y[i] = 2
		}
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Classification,
		Outputs: &tempora.Outputs{Kind: tempora.Classes, K: 3, Names: []string{"cat", "dog", "eel"}}}
}

// horizons forecasts three horizons: h+1 reads a over 7-9, h+2 reads b
// over 4-6, h+3 reads a over 7-9 and c over 0-2.
func horizons(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		a := mean(x.Window(i, 0, 7, 9))
		dst[3*i] = 2 * a
		dst[3*i+1] = 2 * mean(x.Window(i, 1, 4, 6))
		dst[3*i+2] = a + 2*mean(x.Window(i, 2, 0, 2))
	}
	return nil
}

// steps is a sequence-to-sequence model: output s reads a at s, b at
// s−1 and s−2, and c one step ahead (at s+1, where there is one).
func steps(dst []float64, x *tempora.Tensor) error {
	for i := range x.M {
		for s := range l {
			v := 2 * x.At(i, 0, s)
			if s >= 2 {
				v += x.At(i, 1, s-1) + x.At(i, 1, s-2)
			}
			if s+1 < l {
				v += 2 * x.At(i, 2, s+1)
			}
			dst[i*l+s] = v
		}
	}
	return nil
}

// targetsOf returns data whose targets are f's outputs plus N(0, 0.5²).
func targetsOf(f tempora.ModelFunc, o *tempora.Outputs, seed uint64) *tempora.Dataset {
	x := data(seed)
	y := make([]float64, m*o.K)
	_ = f(y, x)
	rng := tempora.NewRand(seed, "noise")
	for i := range y {
		y[i] += 0.5 * rng.NormFloat64()
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression, Outputs: o}
}
