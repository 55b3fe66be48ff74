package explain_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// ExampleTIME explains a model that reads only the pulse over timesteps
// 3–6, through an order-sensitive weighted sum. The default sequential
// tests (Besag and Clifford's) cap the family of 3 features at 29
// permutations, so the pulse's p-value is 1/30 and its BH-adjusted p-value
// 3/30 = α; the other features never change the loss and stop at their
// third hit, after 3 draws. The pulse's ordering and window run to their
// power cap of 39, and its window of 4 timesteps is enumerated exactly
// (4! − 1 = 23 orderings). The draw counts show what the sequential tests
// saved against running every test to its cap.
func ExampleTIME() {
	const m, d, l = 200, 3, 10
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(1, "example data")
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			w := x.Window(i, 1, 3, 6)
			dst[i] = 1*w[0] + 2*w[1] + 3*w[2] + 4*w[3]
		}
		return nil
	})
	y := make([]float64, m)
	if err := model.Predict(y, x); err != nil {
		log.Fatal(err)
	}
	for i := range y {
		y[i] += 0.5 * rng.NormFloat64()
	}
	data := &tempora.Dataset{X: x, Y: y, Task: tempora.Regression, FeatureNames: []string{"temp", "pulse", "resp"}}

	ex, err := explain.TIME{Seed: 1}.Explain(context.Background(), model, data)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range ex.Features {
		fmt.Printf("%-5s important=%-5v p=%.3f", f.Name, f.Important, f.PAdjusted)
		if f.Important {
			fmt.Printf(" window=%v window-ordering=%v score=%.0f", *f.Window, f.WindowOrderingImportant, f.WindowScore)
		}
		fmt.Println()
	}
	if err := ex.Accounting.WriteDraws(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// temp  important=false p=1.000
	// pulse important=true  p=0.100 window=[3, 6] window-ordering=true score=61
	// resp  important=false p=1.000
	// test             tests  draws  max draws  saved
	// overall          3      35     87         59.8%
	// window search    9      18     450        96.0%
	// ordering         1      39     39         0.0%
	// window           1      39     39         0.0%
	// window ordering  1      23     23         0.0%
	// total            15     154    638        75.9%
}
