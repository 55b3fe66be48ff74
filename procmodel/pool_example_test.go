package procmodel_test

import (
	"fmt"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/procmodel"
)

// copyModel stands for a model process: it predicts the first value of each
// instance. Real members come from procmodel.Start or procmodel.Attach, or
// all at once from procmodel.StartPool.
type copyModel struct{ name string }

func (m copyModel) Predict(dst []float64, x *tempora.Tensor) error {
	for i := range dst {
		dst[i] = x.Instance(i)[0]
	}
	return nil
}

func (m copyModel) Close() error { fmt.Println("closed", m.name); return nil }

func ExampleNewPool() {
	pool, err := procmodel.NewPool(copyModel{"a"}, copyModel{"b"})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := tempora.NewTensor(3, 1, 2)
	copy(x.Data, []float64{1, 0, 2, 0, 3, 0})
	pred := make([]float64, 3)
	// Concurrent calls (an explainer's workers) go to different members;
	// each call is answered whole by one of them.
	if err := pool.Predict(pred, x); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pred, pool.Slots())
	pool.Close()
	// Unordered output:
	// [1 2 3] 2
	// closed a
	// closed b
}
