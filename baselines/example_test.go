package baselines_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
)

// exampleProblem returns 500 instances of 2 features × 3 timesteps with
// standard normal values, and the regression model y = 2·x[0,1] − x[0,2]
// (feature 0 at timesteps 1 and 2), with noise-free targets.
func exampleProblem() (tempora.Model, *tempora.Dataset) {
	const m, d, l = 500, 2, 3
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(1, "example")
	for k := range x.Data {
		x.Data[k] = rng.NormFloat64()
	}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			dst[i] = 2*x.At(i, 0, 1) - x.At(i, 0, 2)
		}
		return nil
	})
	y := make([]float64, m)
	if err := model(y, x); err != nil {
		log.Fatal(err)
	}
	return model, &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}
}

func printCells(e *tempora.Explanation) {
	for j := range e.D {
		fmt.Printf("%s feature %d:", e.Method, j)
		for t := range e.L {
			fmt.Printf(" %5.2f", e.Cell(j, t))
		}
		fmt.Println()
	}
}

func ExampleLIME() {
	model, data := exampleProblem()
	// Explain the first 20 instances with 1000 samples each. The weights
	// are a·SD ≈ (2, −1) for the used cells.
	e, err := baselines.LIME{Samples: 1000, Instances: 20, Seed: 1}.Explain(context.Background(), model, data)
	if err != nil {
		log.Fatal(err)
	}
	printCells(e)
	fmt.Println("model calls:", e.Accounting.ModelCalls)
	// Output:
	// LIME feature 0:  0.00  1.94  0.99
	// LIME feature 1:  0.00  0.00  0.00
	// model calls: 20
}

func ExampleSAGE() {
	model, data := exampleProblem()
	// SAGE-m with mean imputation: the values are about a²·Var = (4, 1).
	e, err := baselines.SAGE{Imputer: baselines.Mean, Seed: 1}.Explain(context.Background(), model, data)
	if err != nil {
		log.Fatal(err)
	}
	printCells(e)
	fmt.Println("incomplete:", e.Accounting.Incomplete)
	// Output:
	// SAGE-m feature 0:  0.00  3.69  0.89
	// SAGE-m feature 1:  0.00  0.00  0.00
	// incomplete: false
}

func ExamplePERM() {
	model, data := exampleProblem()
	// One sequential permutation test per cell; the effect sizes are about
	// 2·a²·Var = (8, 2). The 6 cells cap each test at 59 permutations, so a
	// cell the model relies on gets p = 1/60 and one it never reads stops
	// after 6 draws with p = 1.
	r, err := baselines.PERM{Seed: 1}.Analyze(context.Background(), model, data)
	if err != nil {
		log.Fatal(err)
	}
	printCells(r.Explanation(false))
	fmt.Printf("p-value of cell (0, 1): %.3f after %d draws\n", r.PValue(0, 1), r.Draws[1])
	fmt.Printf("p-value of cell (1, 1): %.3f after %d draws\n", r.PValue(1, 1), r.Draws[4])
	// Output:
	// PERM feature 0:  0.00  7.61  1.98
	// PERM feature 1:  0.00  0.00  0.00
	// p-value of cell (0, 1): 0.017 after 59 draws
	// p-value of cell (1, 1): 1.000 after 6 draws
}
