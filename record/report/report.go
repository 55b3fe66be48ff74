package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tempora-dev/tempora/record"
)

// Suite is what a suite's report shows beyond what every suite gets. The
// zero value adds nothing.
type Suite struct {
	// PaperTables are the IDs of the paper's tables (results.PaperTables)
	// that each setting of the suite fills, e.g. "table1" and "table-s1".
	// The report then also draws heat maps for every setting of the
	// suite, rather than for its last one only.
	PaperTables []string
	// Sweeps and Bars are the suite's own figures, drawn in this order
	// (sweeps first) after the sweep figure every suite may get.
	Sweeps []Sweep
	Bars   []Bars
}

// Sweep is a figure of lines, like the paper's Figure 4: the power (top
// row) and the FDR (bottom row) of every line against the numeric
// parameter X, with 95% confidence bands, one column per Column.
type Sweep struct {
	// Name names the figure's files, figures/<Name>.png and .svg.
	Name string
	// Heading is the figure's heading in index.md and Alt its image's
	// alternative text there ("" for the suite's name).
	Heading, Alt string
	// Title is the figure's title; "" for "<suite>: <lines> power and FDR
	// versus <X>".
	Title string
	// X is the swept parameter; its values are numbers.
	X string
	// Where selects the settings drawn: those with every parameter of
	// Where.
	Where []record.Param
	// Lines are the figure's lines, in legend order. A line without any
	// setting is left out.
	Lines []Line
	// Columns are the figure's columns.
	Columns []Column
}

// Line is one line of a Sweep, or one bar of each group of a Bars: the
// records of method Method in the settings with every parameter of Where.
// In a Sweep, "{key}" in Label stands for the value of the setting's
// parameter key, and a Line whose Label holds such a placeholder stands
// for one line per value found, in the order of the report's rows.
type Line struct {
	Label  string
	Method string
	Where  []record.Param
}

// Column is one column of a Sweep: the metrics Power (top) and FDR
// (bottom) of the settings with every parameter of Where, titled Title.
type Column struct {
	Title      string
	Where      []record.Param
	Power, FDR string
}

// Bars is a figure of bars: one panel per Panel, in it one group of bars
// per metric of Metrics, one bar per Line of Bars (the mean over models,
// with a whisker to the upper bound of the 95% confidence interval of the
// mean), and the FDR level α dotted. A panel lacking the setting of one of
// its bars is left out.
type Bars struct {
	// Name, Heading, Alt and Title are as for Sweep; Title is required.
	Name, Heading, Alt, Title string
	// Where selects the settings drawn, as for Sweep.
	Where []record.Param
	// Panels are the figure's panels, top to bottom.
	Panels []Panel
	// Bars are the bars of each group, left to right, with their legend
	// labels. Their labels hold no placeholder.
	Bars []Line
	// Metrics are the groups of bars, left to right.
	Metrics []Metric
}

// Panel is one panel of a Bars: the settings with every parameter of
// Where, titled Title.
type Panel struct {
	Title string
	Where []record.Param
}

// Metric is a metric of a record and its label in a figure.
type Metric struct {
	Name, Label string
}

// Check returns an error for a declaration that cannot be drawn whatever
// the records: a figure without a name, lines, columns, panels or metrics,
// two figures of one name, a Sweep without X, a line without a method, or
// a placeholder in a bar's label.
func (s *Suite) Check() error {
	var names []string
	named := func(kind, name string) error {
		if name == "" {
			return fmt.Errorf("report: a %s figure has no name", kind)
		}
		if slices.Contains(names, name) {
			return fmt.Errorf("report: two figures named %s", name)
		}
		names = append(names, name)
		return nil
	}
	for _, f := range s.Sweeps {
		if err := named("sweep", f.Name); err != nil {
			return err
		}
		switch {
		case f.X == "":
			return fmt.Errorf("report: figure %s sweeps no parameter", f.Name)
		case len(f.Lines) == 0 || len(f.Columns) == 0:
			return fmt.Errorf("report: figure %s has no lines or no columns", f.Name)
		}
		for _, l := range f.Lines {
			if l.Method == "" {
				return fmt.Errorf("report: figure %s: line %q has no method", f.Name, l.Label)
			}
		}
	}
	for _, f := range s.Bars {
		if err := named("bar", f.Name); err != nil {
			return err
		}
		switch {
		case f.Title == "":
			return fmt.Errorf("report: figure %s has no title", f.Name)
		case len(f.Panels) == 0 || len(f.Bars) == 0 || len(f.Metrics) == 0:
			return fmt.Errorf("report: figure %s has no panels, bars or metrics", f.Name)
		}
		for _, b := range f.Bars {
			if b.Method == "" || strings.Contains(b.Label, "{") {
				return fmt.Errorf("report: figure %s: bar %q needs a method and a label without placeholders", f.Name, b.Label)
			}
		}
	}
	return nil
}
