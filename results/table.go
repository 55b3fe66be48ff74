package results

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Table is a rectangular table of text cells with a title and notes. The
// same table can be written as GitHub-flavoured markdown or as CSV.
type Table struct {
	// Title is the markdown heading; CSV omits it.
	Title string
	// Header names the columns; every row has len(Header) cells.
	Header []string
	Rows   [][]string
	// Notes are paragraphs printed below the markdown table; CSV omits
	// them.
	Notes []string
}

// WriteMarkdown writes t as a level-2 heading, a markdown table and its
// notes. Pipes in cells are escaped.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "## %s\n\n", t.Title)
	}
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" ")
			b.WriteString(strings.ReplaceAll(c, "|", `\|`))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	sep := make([]string, len(t.Header))
	for i := range sep {
		sep[i] = "---"
	}
	row(sep)
	for _, r := range t.Rows {
		row(r)
	}
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV writes the header and the rows of t as CSV.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Header); err != nil {
		return err
	}
	if err := cw.WriteAll(t.Rows); err != nil {
		return err
	}
	return cw.Error()
}

// dash marks a value that is not available in markdown tables.
const dash = "—"

// meanSD formats a summary as "mean (SD)" with three decimals, as in the
// paper's tables.
func meanSD(s Summary, ok bool) string {
	switch {
	case !ok || s.N == 0:
		return dash
	case math.IsNaN(s.SD):
		return fmt.Sprintf("%.3f", s.Mean)
	}
	return fmt.Sprintf("%.3f (%.3f)", s.Mean, s.SD)
}

// fixed3 formats v with three decimals, or a dash for NaN.
func fixed3(v float64) string {
	if math.IsNaN(v) {
		return dash
	}
	return fmt.Sprintf("%.3f", v)
}

// seconds formats a runtime: whole seconds from 100 s, three significant
// digits below.
func seconds(v float64) string {
	switch {
	case math.IsNaN(v):
		return dash
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// num formats v for CSV at full precision; NaN is an empty cell.
func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// modelsCell formats the number of models of a row, saying how many were
// excluded as incomplete.
// A method that refused the problem's data is shown as refused with its
// message.
func modelsCell(g *Group) string {
	s := strconv.Itoa(len(g.Models))
	if n := len(g.Incomplete) - len(g.Refused); n > 0 {
		s += fmt.Sprintf(" (%d incomplete excluded)", n)
	}
	if n := len(g.Refused); n > 0 {
		s += fmt.Sprintf(" (refused by %d: %s)", n, strings.ReplaceAll(g.Refusal, "|", "\\|"))
	}
	return s
}

// paperMetrics are the four metrics of the paper's tables, in column
// order, each with its label and its value in a paper row.
var paperMetrics = []struct {
	name, label string
	paper       func(PaperRow) float64
}{
	{"feature-power", "Feat. power", func(r PaperRow) float64 { return r.FeaturePower }},
	{"feature-fdr", "Feat. FDR", func(r PaperRow) float64 { return r.FeatureFDR }},
	{"timestep-power", "Timestep power", func(r PaperRow) float64 { return r.TimestepPower }},
	{"timestep-fdr", "Timestep FDR", func(r PaperRow) float64 { return r.TimestepFDR }},
}

// column is one column of a table: its header and how a row of type R
// fills it. A table is made from one list of columns (tabulate), so a
// header and its cells are stated together.
type column[R any] struct {
	head string
	cell func(R) string
}

// tabulate sets t's header and rows from cols, one row per element of rows.
func tabulate[R any](t *Table, cols []column[R], rows []R) {
	t.Header = make([]string, len(cols))
	for i, c := range cols {
		t.Header[i] = c.head
	}
	for _, r := range rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = c.cell(r)
		}
		t.Rows = append(t.Rows, cells)
	}
}

// checkOneSetting returns an error unless groups is non-empty and shares one
// (suite, params) setting.
func checkOneSetting(groups []Group) error {
	if len(groups) == 0 {
		return fmt.Errorf("results: no groups to tabulate")
	}
	for _, g := range groups[1:] {
		if g.Suite != groups[0].Suite || !slices.Equal(g.Params, groups[0].Params) {
			return fmt.Errorf("results: groups of settings %q and %q in one table",
				settingTitle(&groups[0]), settingTitle(&g))
		}
	}
	return nil
}

// settingTitle returns "suite" or "suite (k=v,…)".
func settingTitle(g *Group) string {
	if len(g.Params) == 0 {
		return g.Suite
	}
	return g.Suite + " (" + g.Setting() + ")"
}

// ComparisonTables lays out the groups of one setting like the paper's table
// pt: one row per method with records, in the order of groups (the paper's
// order, then the other methods, as Aggregate sorts them), with mean (SD)
// of feature and timestep power and FDR, the median runtime and the number
// of models, and the paper's numbers beside ours where pt has a row for the
// method (dashes otherwise). Methods that the paper ran but left out of pt
// (SAGE-z and PERM-f in Table 1) are left out too; methods the paper never
// ran (IsPaperMethod) get rows in every table. It returns a display table
// (for markdown) and a data table with numeric columns (for CSV). It
// returns an error if groups is empty or mixes settings.
func ComparisonTables(pt PaperTable, groups []Group) (display, data *Table, err error) {
	if err := checkOneSetting(groups); err != nil {
		return nil, nil, err
	}
	first := &groups[0]
	var rows []comparisonRow
	var extra []string
	for i := range groups {
		g := &groups[i]
		pr, inPaper := pt.Row(g.Method)
		if !inPaper {
			if IsPaperMethod(g.Method) {
				continue
			}
			extra = append(extra, g.Method)
			nan := math.NaN()
			pr = PaperRow{Method: g.Method, FeaturePower: nan, FeatureFDR: nan, TimestepPower: nan, TimestepFDR: nan, RuntimeSeconds: nan}
		}
		rows = append(rows, comparisonRow{g: g, paper: pr})
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("results: %s: no records of its methods in %s", pt.Title, settingTitle(first))
	}
	display = &Table{Title: pt.Title + ": " + settingTitle(first)}
	tabulate(display, comparisonDisplay(), rows)
	data = &Table{}
	tabulate(data, comparisonData(), rows)
	display.Notes = []string{
		"Mean (SD) over models; runtime is the median wall time of one explanation in seconds. " +
			"TIME is evaluated on every non-zero cell, TIME-n and the baselines on the top n items " +
			"(n = min(#true, #non-zero)); TIME and TIME-n share one run, PERM-f reuses PERM's run. " +
			"Models whose method stopped on its budget before converging are excluded from that row.",
		"Paper: " + pt.Title + " of Sood & Craven (arXiv:2102.11934), " + pt.Setup + ".",
	}
	if len(extra) > 0 {
		display.Notes = append(display.Notes, "Not in the paper (no published numbers): "+strings.Join(extra, ", ")+".")
	}
	if len(first.Params) > 0 {
		display.Notes = append(display.Notes, "This run's setting differs from the paper's: "+first.Setting()+".")
	}
	return display, data, nil
}

// comparisonRow is one method's row of a comparison table: our group and
// the paper's row (NaN values for a method the paper never ran).
type comparisonRow struct {
	g     *Group
	paper PaperRow
}

// comparisonDisplay returns the columns of a comparison table's markdown
// form: each metric as mean (SD) beside the paper's value.
func comparisonDisplay() []column[comparisonRow] {
	cols := []column[comparisonRow]{{"Method", func(r comparisonRow) string { return r.g.Method }}}
	for _, m := range paperMetrics {
		cols = append(cols,
			column[comparisonRow]{m.label, func(r comparisonRow) string { return meanSD(r.g.Metric(m.name)) }},
			column[comparisonRow]{"(paper)", func(r comparisonRow) string { return fixed3(m.paper(r.paper)) }})
	}
	return append(cols,
		column[comparisonRow]{"Runtime (s)", func(r comparisonRow) string { return seconds(r.g.Runtime.Median) }},
		column[comparisonRow]{"(paper)", func(r comparisonRow) string { return seconds(r.paper.RuntimeSeconds) }},
		column[comparisonRow]{"Models", func(r comparisonRow) string { return modelsCell(r.g) }},
		column[comparisonRow]{"(paper)", func(r comparisonRow) string {
			if r.paper.Models > 0 {
				return strconv.Itoa(r.paper.Models)
			}
			return dash
		}})
}

// comparisonData returns the columns of a comparison table's CSV form:
// numbers at full precision, our metrics and then the paper's.
func comparisonData() []column[comparisonRow] {
	cols := []column[comparisonRow]{
		{"suite", func(r comparisonRow) string { return r.g.Suite }},
		{"setting", func(r comparisonRow) string { return r.g.Setting() }},
		{"method", func(r comparisonRow) string { return r.g.Method }},
		{"models", func(r comparisonRow) string { return strconv.Itoa(len(r.g.Models)) }},
		{"incomplete", func(r comparisonRow) string { return strconv.Itoa(len(r.g.Incomplete)) }},
	}
	for _, m := range paperMetrics {
		col := strings.ReplaceAll(m.name, "-", "_")
		stat := func(f func(Summary) float64) func(comparisonRow) string {
			return func(r comparisonRow) string {
				if s, ok := r.g.Metric(m.name); ok {
					return num(f(s))
				}
				return ""
			}
		}
		cols = append(cols,
			column[comparisonRow]{col + "_mean", stat(func(s Summary) float64 { return s.Mean })},
			column[comparisonRow]{col + "_sd", stat(func(s Summary) float64 { return s.SD })})
	}
	cols = append(cols,
		column[comparisonRow]{"runtime_median_s", func(r comparisonRow) string { return num(r.g.Runtime.Median) }},
		column[comparisonRow]{"runtime_sd_s", func(r comparisonRow) string { return num(r.g.Runtime.SD) }})
	for _, m := range paperMetrics {
		cols = append(cols, column[comparisonRow]{"paper_" + strings.ReplaceAll(m.name, "-", "_"),
			func(r comparisonRow) string { return num(m.paper(r.paper)) }})
	}
	return append(cols,
		column[comparisonRow]{"paper_runtime_s", func(r comparisonRow) string { return num(r.paper.RuntimeSeconds) }},
		column[comparisonRow]{"paper_models", func(r comparisonRow) string { return paperModelsCSV(r.paper.Models) }})
}

// metricNames returns the union of the groups' metric names in order of
// first appearance.
func metricNames(groups []Group) []string {
	var names []string
	for _, g := range groups {
		for _, m := range g.Metrics {
			if !slices.Contains(names, m.Name) {
				names = append(names, m.Name)
			}
		}
	}
	return names
}

// paramKeys returns the union of the groups' parameter keys in order of
// first appearance.
func paramKeys(groups []Group) []string {
	var keys []string
	for _, g := range groups {
		for _, p := range g.Params {
			if !slices.Contains(keys, p.Key) {
				keys = append(keys, p.Key)
			}
		}
	}
	return keys
}

// GenericTables lays out any groups, typically those of one suite: one row
// per setting and method (in the order of groups, as Aggregate sorts them)
// with every metric. The display table shows mean (SD) per metric and the
// median runtime; the data table has one column per parameter and, per
// metric, n, mean, SD and the 95% confidence interval of the mean. A metric
// a group lacks is a dash (display) or empty (data). It returns an error if
// groups is empty.
func GenericTables(title string, groups []Group) (display, data *Table, err error) {
	if len(groups) == 0 {
		return nil, nil, fmt.Errorf("results: no groups to tabulate")
	}
	names := metricNames(groups)
	keys := paramKeys(groups)
	rows := make([]*Group, len(groups))
	for i := range groups {
		rows[i] = &groups[i]
	}
	display = &Table{Title: title}
	tabulate(display, genericDisplay(names, keys), rows)
	data = &Table{}
	tabulate(data, genericData(names, keys), rows)
	display.Notes = []string{
		"Mean (SD) over models; runtime is the median wall time of one explanation in seconds. " +
			"The CSV file adds n and the 95% confidence interval of each mean (mean ± 1.96·SD/√n).",
	}
	return display, data, nil
}

// genericDisplay returns the columns of a generic table's markdown form:
// the setting (the suite when no group has parameters), the method, and
// mean (SD) of every metric.
func genericDisplay(names, keys []string) []column[*Group] {
	cols := []column[*Group]{
		{"Setting", func(g *Group) string {
			switch setting := g.Setting(); {
			case len(keys) == 0:
				return g.Suite
			case setting == "":
				return dash
			default:
				return setting
			}
		}},
		{"Method", func(g *Group) string { return g.Method }},
		{"Models", modelsCell},
		{"Runtime (s)", func(g *Group) string { return seconds(g.Runtime.Median) }},
	}
	for _, n := range names {
		cols = append(cols, column[*Group]{n, func(g *Group) string { return meanSD(g.Metric(n)) }})
	}
	return cols
}

// genericData returns the columns of a generic table's CSV form: one per
// parameter, the cost, and per metric n, mean, SD and the 95% confidence
// interval of the mean (n 0 and empty cells for a metric a group lacks).
func genericData(names, keys []string) []column[*Group] {
	cols := []column[*Group]{{"suite", func(g *Group) string { return g.Suite }}}
	for _, k := range keys {
		cols = append(cols, column[*Group]{k, func(g *Group) string { v, _ := g.Param(k); return v }})
	}
	cols = append(cols,
		column[*Group]{"method", func(g *Group) string { return g.Method }},
		column[*Group]{"models", func(g *Group) string { return strconv.Itoa(len(g.Models)) }},
		column[*Group]{"incomplete", func(g *Group) string { return strconv.Itoa(len(g.Incomplete)) }},
		column[*Group]{"runtime_median_s", func(g *Group) string { return num(g.Runtime.Median) }},
		column[*Group]{"runtime_mean_s", func(g *Group) string { return num(g.Runtime.Mean) }},
		column[*Group]{"runtime_sd_s", func(g *Group) string { return num(g.Runtime.SD) }},
		column[*Group]{"model_calls_mean", func(g *Group) string { return num(g.ModelCalls.Mean) }},
		column[*Group]{"instance_evals_mean", func(g *Group) string { return num(g.InstanceEvals.Mean) }})
	for _, n := range names {
		stat := func(f func(Summary) string, missing string) func(*Group) string {
			return func(g *Group) string {
				if s, ok := g.Metric(n); ok {
					return f(s)
				}
				return missing
			}
		}
		cols = append(cols,
			column[*Group]{n + "_n", stat(func(s Summary) string { return strconv.Itoa(s.N) }, "0")},
			column[*Group]{n + "_mean", stat(func(s Summary) string { return num(s.Mean) }, "")},
			column[*Group]{n + "_sd", stat(func(s Summary) string { return num(s.SD) }, "")},
			column[*Group]{n + "_ci95_low", stat(func(s Summary) string { lo, _ := s.CI95(); return num(lo) }, "")},
			column[*Group]{n + "_ci95_high", stat(func(s Summary) string { _, hi := s.CI95(); return num(hi) }, "")})
	}
	return cols
}

// paperModelsCSV is the paper's model count, empty when the paper gives
// none.
func paperModelsCSV(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
