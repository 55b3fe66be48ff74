package procmodel_test

import (
	"fmt"

	"github.com/tempora-dev/tempora/procmodel"
)

func ExampleSplitCommand() {
	cmd, err := procmodel.SplitCommand(`python3 serve_model.py --weights "my model.pt" --task classification`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range cmd {
		fmt.Printf("%q\n", w)
	}
	// Output:
	// "python3"
	// "serve_model.py"
	// "--weights"
	// "my model.pt"
	// "--task"
	// "classification"
}
