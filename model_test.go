package tempora

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestTask(t *testing.T) {
	for _, task := range []Task{Regression, Classification} {
		got, err := ParseTask(task.String())
		if err != nil || got != task {
			t.Errorf("ParseTask(%q) = %v, %v", task.String(), got, err)
		}
		b, err := json.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		var back Task
		if err := json.Unmarshal(b, &back); err != nil || back != task {
			t.Errorf("JSON round trip of %v via %s gave %v, %v", task, b, back, err)
		}
	}
	if s := Task(7).String(); s != "Task(7)" {
		t.Errorf("Task(7).String() = %q", s)
	}
	if _, err := ParseTask("Classification"); err == nil || !strings.Contains(err.Error(), `unknown task "Classification"`) {
		t.Errorf("ParseTask is case-sensitive and names the value: got %v", err)
	}
	if _, err := json.Marshal(Task(7)); err == nil {
		t.Error("marshalling an invalid task: no error")
	}
	var task Task
	if err := json.Unmarshal([]byte(`"forecast"`), &task); err == nil {
		t.Error("unmarshalling an unknown task: no error")
	}
}

// validDataset returns a valid 4 × 2 × 3 classification dataset.
func validDataset() *Dataset {
	return &Dataset{X: sequential(4, 2, 3), Y: []float64{0, 1, 1, 0}, Task: Classification, FeatureNames: []string{"hr", "bp"}}
}

func TestDatasetValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(d *Dataset)
		minM   int
		want   string // "" for no error
		isNilD bool
	}{
		{name: "valid", edit: func(d *Dataset) {}, minM: 4},
		{name: "valid regression with real targets", edit: func(d *Dataset) { d.Task = Regression; d.Y[0] = -3.5 }},
		{name: "nil feature names mean default names", edit: func(d *Dataset) { d.FeatureNames = nil }},
		{name: "nil dataset", isNilD: true, want: "nil dataset"},
		{name: "nil tensor", edit: func(d *Dataset) { d.X = nil }, want: "nil data tensor"},
		{name: "non-finite data", edit: func(d *Dataset) { d.X.Set(3, 1, 2, math.NaN()) }, want: "instance 3, feature 1, timestep 2 is NaN"},
		{name: "too few instances", edit: func(d *Dataset) {}, minM: 5, want: "4 instances, need at least 5"},
		{name: "too few targets", edit: func(d *Dataset) { d.Y = d.Y[:3] }, want: "3 targets for 4 instances"},
		{name: "invalid task", edit: func(d *Dataset) { d.Task = 2 }, want: "invalid task 2"},
		{name: "infinite target", edit: func(d *Dataset) { d.Task = Regression; d.Y[2] = math.Inf(1) }, want: "target of instance 2 is +Inf"},
		{name: "non-binary label", edit: func(d *Dataset) { d.Y[1] = 0.5 }, want: "classification target of instance 1 is 0.5, want 0 or 1"},
		{name: "wrong number of names", edit: func(d *Dataset) { d.FeatureNames = []string{"hr"} }, want: "1 feature names for 2 features"},
		{name: "empty name", edit: func(d *Dataset) { d.FeatureNames[1] = "" }, want: "feature 1 has an empty name"},
		{name: "duplicate names", edit: func(d *Dataset) { d.FeatureNames[1] = "hr" }, want: `features 0 and 1 share the name "hr"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d *Dataset
			if !tc.isNilD {
				d = validDataset()
				tc.edit(d)
			}
			err := d.Validate(tc.minM)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			case err != nil && !strings.HasPrefix(err.Error(), "tempora: "):
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestDatasetName(t *testing.T) {
	d := validDataset()
	if d.Name(1) != "bp" {
		t.Errorf("Name(1) = %q, want bp", d.Name(1))
	}
	d.FeatureNames = nil
	if d.Name(1) != "1" {
		t.Errorf("default Name(1) = %q, want 1", d.Name(1))
	}
}

func TestCheckPredictions(t *testing.T) {
	for _, tc := range []struct {
		task Task
		pred []float64
		want string
	}{
		{Regression, []float64{-5, 0, 1e9}, ""},
		{Classification, []float64{0, 0.5, 1}, ""},
		{Regression, []float64{0, math.NaN()}, "predicted NaN for instance 1"},
		{Classification, []float64{math.Inf(-1)}, "predicted -Inf for instance 0"},
		{Classification, []float64{0.2, 1.5}, "predicted 1.5 for instance 1, want a probability in [0, 1] for classification"},
		{Classification, []float64{-0.1}, "predicted -0.1 for instance 0"},
	} {
		err := CheckPredictions(tc.task, tc.pred)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckPredictions(%v, %v) = %v, want %q", tc.task, tc.pred, err, tc.want)
		}
	}
}

func TestModelFunc(t *testing.T) {
	var m Model = ModelFunc(func(dst []float64, x *Tensor) error {
		for i := range dst {
			dst[i] = x.At(i, 1, 2)
		}
		return nil
	})
	x := sequential(3, 2, 4)
	dst := make([]float64, 3)
	if err := m.Predict(dst, x); err != nil {
		t.Fatal(err)
	}
	if dst[0] != 102 || dst[2] != 20102 {
		t.Errorf("predictions %v", dst)
	}
}
