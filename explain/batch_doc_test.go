package explain

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// TestDocBatchTolerance checks that docs/time.md states batchTolerance,
// the rounding batch auto accepts.
func TestDocBatchTolerance(t *testing.T) {
	b, err := os.ReadFile("../docs/time.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	exp := int(math.Round(math.Log10(batchTolerance)))
	if math.Pow(10, float64(exp)) != batchTolerance {
		t.Fatalf("batchTolerance %v is not a power of ten; state it otherwise", batchTolerance)
	}
	sup := map[rune]string{'-': "⁻", '0': "⁰", '1': "¹", '2': "²", '3': "³", '4': "⁴", '5': "⁵", '6': "⁶", '7': "⁷", '8': "⁸", '9': "⁹"}
	var s strings.Builder
	for _, c := range fmt.Sprint(exp) {
		s.WriteString(sup[c])
	}
	if want := "(more than 10" + s.String() + " of a prediction:"; !strings.Contains(doc, want) {
		t.Errorf("docs/time.md does not state batch auto's tolerance as %q", want)
	}
}
