package synth_test

import (
	"fmt"
	"log"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/synth"
)

func ExampleGenerate() {
	cfg := synth.Config{
		Instances: 500, Features: 6, Timesteps: 12,
		FractionRelevant: 0.5,
		Task:             tempora.Classification,
		Noise:            synth.AutoNoise,
	}
	p, err := synth.Generate(cfg, 2021)
	if err != nil {
		log.Fatal(err)
	}
	x := p.Data.X
	fmt.Printf("%d×%d×%d %v problem, β = %.2f\n", x.M, x.D, x.L, p.Data.Task, p.Model.Beta())
	for _, t := range p.Truth {
		if t.Relevant {
			f := p.Model.Feature(t.Index)
			fmt.Printf("feature %s: window %v, %v of %v, α = %+.2f, ordering %v, window ordering %v\n",
				t.Name, t.Window, f.Nonlinearity, f.Aggregator, f.Coefficient, t.OrderingImportant, t.WindowOrderingImportant)
		}
	}
	prob := make([]float64, x.M)
	if err := p.Model.Predict(prob, x); err != nil {
		log.Fatal(err)
	}
	correct := 0
	for i, q := range prob {
		if (q > 0.5) == (p.Data.Y[i] == 1) {
			correct++
		}
	}
	fmt.Printf("accuracy %.3f\n", float64(correct)/float64(x.M))
	// Output:
	// 500×6×12 classification problem, β = 0.26
	// feature 2: window [0, 10], abs of random_weighted_sum, α = -0.24, ordering true, window ordering true
	// feature 3: window [0, 9], square of random_weighted_sum, α = +0.28, ordering true, window ordering true
	// feature 5: window [1, 8], identity of average, α = +0.83, ordering true, window ordering false
	// accuracy 0.900
}
