package tempora_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/tempora-dev/tempora"
)

// A Tensor stores instances × features × timesteps row-major, so each
// feature's series for one instance is a contiguous slice.
func ExampleTensor() {
	x := tempora.NewTensor(2, 3, 4)
	for k := range x.Data {
		x.Data[k] = float64(k)
	}
	fmt.Println(x.At(1, 2, 3), x.Series(1, 0), x.Window(0, 1, 1, 2))
	// Output:
	// 23 [12 13 14 15] [5 6]
}

// A permutation test rewrites one block of a working copy, evaluates the
// model, and restores the block: no whole-tensor copy per permutation.
func ExamplePermuteInstances() {
	src := tempora.NewTensor(3, 2, 3)
	for k := range src.Data {
		src.Data[k] = float64(k)
	}
	work := src.Clone()
	// Shuffle feature 1 over timesteps 1..2 across instances.
	tempora.PermuteInstances(work, src, []int{1}, 1, 2, []int{2, 0, 1})
	for i := 0; i < 3; i++ {
		fmt.Println(work.Series(i, 0), work.Series(i, 1))
	}
	tempora.RestoreBlock(work, src, []int{1}, 1, 2)
	fmt.Println(work.Series(0, 1))
	// Output:
	// [0 1 2] [3 16 17]
	// [6 7 8] [9 4 5]
	// [12 13 14] [15 10 11]
	// [3 4 5]
}

// A Model is one method; ModelFunc adapts a function. Losses are computed
// per instance.
func ExampleModelFunc() {
	data := &tempora.Dataset{
		X:            tempora.NewTensor(2, 1, 3),
		Y:            []float64{0, 1},
		Task:         tempora.Classification,
		FeatureNames: []string{"hr"},
	}
	copy(data.X.Data, []float64{-1, -2, 0, 1, 2, 3})
	// Predict class 1 when the last timestep is positive.
	model := tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			dst[i] = 0.1
			if x.At(i, 0, x.L-1) > 0 {
				dst[i] = 0.9
			}
		}
		return nil
	})
	if err := data.Validate(1); err != nil {
		fmt.Println(err)
		return
	}
	pred := make([]float64, data.X.M)
	if err := model.Predict(pred, data.X); err != nil {
		fmt.Println(err)
		return
	}
	loss := make([]float64, data.X.M)
	tempora.LossFor(data.Task)(loss, data.Y, pred)
	fmt.Printf("predictions %v, losses %.4f\n", pred, loss)
	// Output:
	// predictions [0.1 0.9], losses [0.1054 0.1054]
}

// Streams of randomness are derived from a run seed and a key, so each
// piece of work can create its own generator wherever it runs.
func ExampleNewRand() {
	a := tempora.NewRand(13997, "feature", "3", "overall")
	b := tempora.NewRand(13997, "feature", "3", "overall")
	fmt.Println(a.Perm(5), b.Perm(5))
	fmt.Println(tempora.DeriveSeed(13997, "feature", "3") == tempora.DeriveSeed(13997, "feature", "4"))
	// Output:
	// [1 0 2 3 4] [1 0 2 3 4]
	// false
}

// WriteCSV writes one row per feature; values that were not computed are
// empty.
func ExampleExplanation_WriteCSV() {
	data := &tempora.Dataset{X: tempora.NewTensor(1, 2, 2), Y: []float64{0}, FeatureNames: []string{"hr", "bp"}}
	e := tempora.NewExplanation("example", data)
	e.Features[0].Tested, e.Features[0].Important = true, true
	e.Features[0].Score, e.Features[0].PValue, e.Features[0].PAdjusted = 0.5, 0.02, 0.04
	e.Features[0].Window = &tempora.Window{Start: 0, End: 1}
	e.Cells[0], e.Cells[1] = 0.5, 0.5
	if err := e.WriteCSV(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// index,name,tested,important,score,p_value,p_adjusted,window_start,window_end,window_score,window_p_value,window_p_adjusted,window_significant,ordering_p_value,ordering_p_adjusted,ordering_important,window_ordering_p_value,window_ordering_important,windows
	// 0,hr,true,true,0.5,0.02,0.04,0,1,0,,,false,,,false,,false,
	// 1,bp,false,false,0,,,,,0,,,false,,,false,,false,
}

// The JSON form writes p-values that were not computed as null.
func ExampleExplanation_MarshalJSON() {
	data := &tempora.Dataset{X: tempora.NewTensor(1, 1, 2), Y: []float64{0}}
	e := tempora.NewExplanation("example", data)
	e.Features[0].Score, e.Features[0].PValue = 0.25, 0.5
	b, err := json.Marshal(e)
	if err != nil {
		fmt.Println(err)
		return
	}
	var v struct {
		Features []map[string]any `json:"features"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		fmt.Println(err)
		return
	}
	f := v.Features[0]
	fmt.Println(f["score"], f["p_value"], f["p_adjusted"], f["window"])
	// Output:
	// 0.25 0.5 <nil> <nil>
}
