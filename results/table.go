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
func modelsCell(g *Group) string {
	s := strconv.Itoa(len(g.Models))
	if n := len(g.Incomplete); n > 0 {
		s += fmt.Sprintf(" (%d incomplete excluded)", n)
	}
	return s
}

// The four metrics of the paper's tables, in column order.
var paperMetrics = []struct{ name, label string }{
	{"feature-power", "Feat. power"},
	{"feature-fdr", "Feat. FDR"},
	{"timestep-power", "Timestep power"},
	{"timestep-fdr", "Timestep FDR"},
}

func paperValues(r PaperRow) []float64 {
	return []float64{r.FeaturePower, r.FeatureFDR, r.TimestepPower, r.TimestepFDR}
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
	display = &Table{Title: pt.Title + ": " + settingTitle(first)}
	display.Header = []string{"Method"}
	for _, m := range paperMetrics {
		display.Header = append(display.Header, m.label, "(paper)")
	}
	display.Header = append(display.Header, "Runtime (s)", "(paper)", "Models", "(paper)")

	data = &Table{Header: []string{"suite", "setting", "method", "models", "incomplete"}}
	for _, m := range paperMetrics {
		col := strings.ReplaceAll(m.name, "-", "_")
		data.Header = append(data.Header, col+"_mean", col+"_sd")
	}
	data.Header = append(data.Header, "runtime_median_s", "runtime_sd_s")
	for _, m := range paperMetrics {
		data.Header = append(data.Header, "paper_"+strings.ReplaceAll(m.name, "-", "_"))
	}
	data.Header = append(data.Header, "paper_runtime_s", "paper_models")

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
		paper := paperValues(pr)
		paperModels := dash
		if pr.Models > 0 {
			paperModels = strconv.Itoa(pr.Models)
		}
		drow := []string{g.Method}
		crow := []string{first.Suite, first.Setting(), g.Method}
		for i, m := range paperMetrics {
			s, ok := g.Metric(m.name)
			drow = append(drow, meanSD(s, ok), fixed3(paper[i]))
		}
		drow = append(drow, seconds(g.Runtime.Median), seconds(pr.RuntimeSeconds), modelsCell(g), paperModels)
		crow = append(crow, strconv.Itoa(len(g.Models)), strconv.Itoa(len(g.Incomplete)))
		for _, m := range paperMetrics {
			if s, ok := g.Metric(m.name); ok {
				crow = append(crow, num(s.Mean), num(s.SD))
			} else {
				crow = append(crow, "", "")
			}
		}
		crow = append(crow, num(g.Runtime.Median), num(g.Runtime.SD))
		for _, v := range paper {
			crow = append(crow, num(v))
		}
		crow = append(crow, num(pr.RuntimeSeconds), paperModelsCSV(pr.Models))
		display.Rows = append(display.Rows, drow)
		data.Rows = append(data.Rows, crow)
	}
	if len(display.Rows) == 0 {
		return nil, nil, fmt.Errorf("results: %s: no records of its methods in %s", pt.Title, settingTitle(first))
	}
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

	display = &Table{Title: title, Header: []string{"Setting", "Method", "Models", "Runtime (s)"}}
	display.Header = append(display.Header, names...)
	data = &Table{Header: []string{"suite"}}
	data.Header = append(data.Header, keys...)
	data.Header = append(data.Header, "method", "models", "incomplete", "runtime_median_s", "runtime_mean_s",
		"runtime_sd_s", "model_calls_mean", "instance_evals_mean")
	for _, n := range names {
		data.Header = append(data.Header, n+"_n", n+"_mean", n+"_sd", n+"_ci95_low", n+"_ci95_high")
	}
	for i := range groups {
		g := &groups[i]
		setting := g.Setting()
		if len(keys) > 0 && setting == "" {
			setting = dash
		}
		if len(keys) == 0 {
			setting = g.Suite
		}
		drow := []string{setting, g.Method, modelsCell(g), seconds(g.Runtime.Median)}
		crow := []string{g.Suite}
		for _, k := range keys {
			v, _ := g.Param(k)
			crow = append(crow, v)
		}
		crow = append(crow, g.Method, strconv.Itoa(len(g.Models)), strconv.Itoa(len(g.Incomplete)),
			num(g.Runtime.Median), num(g.Runtime.Mean), num(g.Runtime.SD),
			num(g.ModelCalls.Mean), num(g.InstanceEvals.Mean))
		for _, n := range names {
			s, ok := g.Metric(n)
			drow = append(drow, meanSD(s, ok))
			if !ok {
				crow = append(crow, "0", "", "", "", "")
				continue
			}
			lo, hi := s.CI95()
			crow = append(crow, strconv.Itoa(s.N), num(s.Mean), num(s.SD), num(lo), num(hi))
		}
		display.Rows = append(display.Rows, drow)
		data.Rows = append(data.Rows, crow)
	}
	display.Notes = []string{
		"Mean (SD) over models; runtime is the median wall time of one explanation in seconds. " +
			"The CSV file adds n and the 95% confidence interval of each mean (mean ± 1.96·SD/√n).",
	}
	return display, data, nil
}

// paperModelsCSV is the paper's model count, empty when the paper gives
// none.
func paperModelsCSV(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
