package results

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/record/report"
)

// ErrNoRecords is returned by WriteReport when there is nothing to report.
var ErrNoRecords = errors.New("results: no records")

// WriteReport writes into dir every table and figure that recs support, and
// an index.md that links them. suites holds what each suite declares about
// its report in decls (report.Suite, by suite name; a suite without an
// entry gets what every suite gets):
//
//   - tables/<table>.md and .csv: each paper table (PaperTables) that a
//     suite declares, for each of the suite's settings (ComparisonTables);
//   - tables/suite-<suite>.md and .csv: every suite, one row per setting and
//     method with every metric (GenericTables);
//   - figures/sweep-<suite>.png and .svg: the power and FDR of every method
//     of the suite versus the swept parameter, for every suite whose records
//     vary one numeric parameter over at least two values (the
//     test-set-size suites: SweepFigure with TimeSweepMetrics);
//   - figures/<name>.png and .svg: the figures a suite declares
//     (DeclaredSweep, DeclaredBars);
//   - figures/areas-<suite>[_<key>-<value>…].png and .svg: the
//     threshold-free metrics of every method of a setting (AreaFigure), for
//     every setting where some method has per-instance metrics (suite
//     local, outside methods' attributions);
//   - figures/heatmap-<suite>[_<key>-<value>…]-model<N>.png and .svg: the
//     truth and the cells of HeatmapMethods (the paper's Figure 3: TIME and
//     SAGE) and of every method the paper never ran, for the lowest-numbered
//     model that has the most of them, for every setting of a suite that
//     fills a paper table and for the last setting (in Aggregate's order)
//     of any other suite (HeatmapFigure).
//
// Comparison tables and heat maps have rows and panels for the methods
// present in recs, whatever they are: the paper's numbers are an overlay
// where the paper has a row.
//
// It returns the paths written, relative to dir and slash-separated, in
// the order written (index.md last). Files are replaced atomically. A figure
// that cannot be drawn is reported in index.md rather than failing the
// report. WriteReport returns ErrNoRecords when recs is empty, and an
// error for a declaration that cannot be drawn (report.Suite.Check) or
// that names a paper table PaperTables does not have.
func WriteReport(dir string, recs []*record.Record, decls map[string]report.Suite) ([]string, error) {
	if len(recs) == 0 {
		return nil, ErrNoRecords
	}
	if err := checkDeclarations(decls); err != nil {
		return nil, err
	}
	groups, err := Aggregate(recs)
	if err != nil {
		return nil, err
	}
	w := &reportWriter{dir: dir}
	var idx bytes.Buffer
	writeSummary(&idx, recs, groups)

	// Paper tables.
	var paperIdx bytes.Buffer
	for _, pt := range PaperTables() {
		for _, s := range settings(groups) {
			if !slices.Contains(decls[s.Suite].PaperTables, pt.ID) {
				continue
			}
			gs := selectGroups(groups, s.Suite, s.Params)
			display, data, err := ComparisonTables(pt, gs)
			if err != nil {
				return w.files, err
			}
			name := "tables/" + pt.ID + slug(s.Params)
			if err := w.tables(name, display, data); err != nil {
				return w.files, err
			}
			// The index repeats the table under its own heading.
			display.Title = ""
			var tb bytes.Buffer
			if err := display.WriteMarkdown(&tb); err != nil {
				return w.files, err
			}
			fmt.Fprintf(&paperIdx, "### %s: %s\n\n[markdown](%s.md) · [csv](%s.csv)\n\n%s\n", pt.Title, settingTitle(&s), name, name, tb.String())
		}
	}
	if paperIdx.Len() > 0 {
		fmt.Fprintf(&idx, "## Paper tables\n\n%s", paperIdx.String())
	}

	// Generic tables, one per suite.
	fmt.Fprintf(&idx, "## Suite tables\n\n")
	for _, suite := range suites(groups) {
		gs := suiteGroups(groups, suite)
		display, data, err := GenericTables("Suite "+suite, gs)
		if err != nil {
			return w.files, err
		}
		name := "tables/suite-" + fileSafe(suite)
		if err := w.tables(name, display, data); err != nil {
			return w.files, err
		}
		fmt.Fprintf(&idx, "- %s: [markdown](%s.md) · [csv](%s.csv) (%d rows)\n", suite, name, name, len(gs))
	}

	// Figures.
	fmt.Fprintf(&idx, "\n## Figures\n\n")
	var skipped []string
	for _, suite := range suites(groups) {
		param, ok := sweepParam(groups, suite)
		if ok {
			methods := groupMethods(suiteGroups(groups, suite))
			f, err := SweepFigure(groups, suite, methods, param, TimeSweepMetrics)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("sweep of %s: %v", suite, err))
			} else {
				name := "figures/sweep-" + fileSafe(suite)
				if err := w.figure(name, f); err != nil {
					return w.files, err
				}
				fmt.Fprintf(&idx, "### %s: %s versus %s\n\n![%s](%s.png)\n\n[png](%s.png) · [svg](%s.svg)\n\n",
					suite, strings.Join(methods, ", "), param, suite, name, name, name)
			}
		}
		if err := w.declaredFigures(&idx, groups, suite, decls[suite]); err != nil {
			return w.files, err
		}
		// Threshold-free metrics by method, for every setting with
		// per-instance metrics.
		for _, s := range settings(suiteGroups(groups, suite)) {
			gs := selectGroups(groups, suite, s.Params)
			if !hasInstanceMetrics(gs) {
				continue
			}
			f, err := AreaFigure(gs)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("areas of %s: %v", settingTitle(&s), err))
				continue
			}
			name := fmt.Sprintf("figures/areas-%s%s", fileSafe(suite), slug(s.Params))
			if err := w.figure(name, f); err != nil {
				return w.files, err
			}
			fmt.Fprintf(&idx, "### Threshold-free metrics: %s\n\n![areas](%s.png)\n\n[png](%s.png) · [svg](%s.svg)\n\n",
				settingTitle(&s), name, name, name)
		}
		// Heat maps for every setting of the paper's table suites, and for
		// the last setting (the largest swept value) of any other suite.
		ss := settings(suiteGroups(groups, suite))
		if len(decls[suite].PaperTables) == 0 {
			ss = ss[len(ss)-1:]
		}
		for _, s := range ss {
			methods := heatmapMethods(recs, suite, s.Params)
			model, found := heatmapModel(recs, suite, s.Params, methods)
			if !found {
				continue
			}
			f, err := HeatmapFigure(recs, suite, s.Params, model, methods)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("heat map of %s: %v", settingTitle(&s), err))
				continue
			}
			name := fmt.Sprintf("figures/heatmap-%s%s-model%d", fileSafe(suite), slug(s.Params), model)
			if err := w.figure(name, f); err != nil {
				return w.files, err
			}
			fmt.Fprintf(&idx, "### Heat maps: %s, model %d\n\n![heat maps](%s.png)\n\n[png](%s.png) · [svg](%s.svg)\n\n",
				settingTitle(&s), model, name, name, name)
		}
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&idx, "### Figures not drawn\n\n")
		for _, s := range skipped {
			fmt.Fprintf(&idx, "- %s\n", s)
		}
		fmt.Fprintln(&idx)
	}
	if err := w.write("index.md", func(out io.Writer) error {
		_, err := out.Write(idx.Bytes())
		return err
	}); err != nil {
		return w.files, err
	}
	return w.files, nil
}

// checkDeclarations returns an error for a suite declaration that cannot
// be drawn or that names a paper table PaperTables does not have.
func checkDeclarations(decls map[string]report.Suite) error {
	var ids []string
	for _, pt := range PaperTables() {
		ids = append(ids, pt.ID)
	}
	for _, name := range slices.Sorted(maps.Keys(decls)) {
		s := decls[name]
		if err := s.Check(); err != nil {
			return fmt.Errorf("results: suite %s: %w", name, err)
		}
		for _, id := range s.PaperTables {
			if !slices.Contains(ids, id) {
				return fmt.Errorf("results: suite %s fills paper table %q, which is not one of %s", name, id, strings.Join(ids, ", "))
			}
		}
	}
	return nil
}

// reportWriter writes files below dir and remembers their names.
type reportWriter struct {
	dir   string
	files []string
}

func (w *reportWriter) write(name string, fill func(io.Writer) error) error {
	p := filepath.Join(w.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := atomicfile.Write(p, fill); err != nil {
		return fmt.Errorf("results: writing %s: %w", p, err)
	}
	w.files = append(w.files, name)
	return nil
}

func (w *reportWriter) tables(name string, display, data *Table) error {
	if err := w.write(name+".md", display.WriteMarkdown); err != nil {
		return err
	}
	return w.write(name+".csv", data.WriteCSV)
}

func (w *reportWriter) figure(name string, f *Figure) error {
	for _, format := range Formats {
		if err := w.write(name+"."+format, func(out io.Writer) error { return f.Encode(out, format) }); err != nil {
			return err
		}
	}
	return nil
}

// writeSummary writes the heading of index.md and a table of suites.
func writeSummary(w *bytes.Buffer, recs []*record.Record, groups []Group) {
	incomplete, warned := 0, 0
	for _, r := range recs {
		if r.Incomplete {
			incomplete++
		}
		if len(r.Warnings) > 0 {
			warned++
		}
	}
	fmt.Fprintf(w, "# tempora report\n\n")
	fmt.Fprintf(w, "%d records in %d suites; %d incomplete (excluded from their rows), %d with warnings.\n\n",
		len(recs), len(suites(groups)), incomplete, warned)
	fmt.Fprintf(w, "| Suite | Settings | Methods | Models | Incomplete |\n| --- | --- | --- | --- | --- |\n")
	for _, suite := range suites(groups) {
		gs := suiteGroups(groups, suite)
		var methods []string
		var models []int
		nInc := 0
		for _, g := range gs {
			if !slices.Contains(methods, g.Method) {
				methods = append(methods, g.Method)
			}
			for _, m := range slices.Concat(g.Models, g.Incomplete) {
				if !slices.Contains(models, m) {
					models = append(models, m)
				}
			}
			nInc += len(g.Incomplete)
		}
		slices.SortFunc(methods, compareMethods)
		fmt.Fprintf(w, "| %s | %d | %s | %d | %d |\n", suite, len(settings(gs)), strings.Join(methods, ", "), len(models), nInc)
	}
	fmt.Fprintln(w)
}

// suites returns the distinct suites of groups in order.
func suites(groups []Group) []string {
	var out []string
	for _, g := range groups {
		if len(out) == 0 || out[len(out)-1] != g.Suite {
			out = append(out, g.Suite)
		}
	}
	return out
}

func suiteGroups(groups []Group, suite string) []Group {
	var out []Group
	for _, g := range groups {
		if g.Suite == suite {
			out = append(out, g)
		}
	}
	return out
}

// groupMethods returns the distinct methods of groups in order.
func groupMethods(groups []Group) []string {
	var out []string
	for _, g := range groups {
		if !slices.Contains(out, g.Method) {
			out = append(out, g.Method)
		}
	}
	slices.SortStableFunc(out, compareMethods)
	return out
}

// sweepParam returns the parameter a suite's records sweep: the one
// parameter of every group of the suite, numeric, with at least two values.
func sweepParam(groups []Group, suite string) (string, bool) {
	key := ""
	var values []string
	for _, g := range groups {
		if g.Suite != suite {
			continue
		}
		if len(g.Params) != 1 || (key != "" && g.Params[0].Key != key) {
			return "", false
		}
		if _, err := strconv.ParseFloat(g.Params[0].Value, 64); err != nil {
			return "", false
		}
		key = g.Params[0].Key
		if !slices.Contains(values, g.Params[0].Value) {
			values = append(values, g.Params[0].Value)
		}
	}
	return key, len(values) >= 2
}

// heatmapMethods returns the methods a setting's heat maps draw: those of
// HeatmapMethods, then every method the paper never ran, among the methods
// with an explanation in some record of the setting.
func heatmapMethods(recs []*record.Record, suite string, params []record.Param) []string {
	var present []string
	for _, r := range recs {
		if r.Suite == suite && slices.Equal(r.Params, params) && r.Explanation != nil && !slices.Contains(present, r.Method) {
			present = append(present, r.Method)
		}
	}
	slices.SortStableFunc(present, compareMethods)
	var out []string
	for _, m := range HeatmapMethods {
		if slices.Contains(present, m) {
			out = append(out, m)
		}
	}
	for _, m := range present {
		if !IsPaperMethod(m) {
			out = append(out, m)
		}
	}
	return out
}

// heatmapModel returns the lowest model of a setting that has the ground
// truth and an explanation of the most of methods.
func heatmapModel(recs []*record.Record, suite string, params []record.Param, methods []string) (int, bool) {
	if len(methods) == 0 {
		return 0, false
	}
	truth := map[int]bool{} // lookup only; never iterated
	count := map[int]int{}  // lookup only; never iterated
	var models []int
	for _, r := range recs {
		if r.Suite != suite || !slices.Equal(r.Params, params) {
			continue
		}
		if !slices.Contains(models, r.Model) {
			models = append(models, r.Model)
		}
		if r.Truth != nil {
			truth[r.Model] = true
		}
		if r.Explanation != nil && slices.Contains(methods, r.Method) {
			count[r.Model]++
		}
	}
	slices.Sort(models)
	best, bestN := -1, 0
	for _, m := range models {
		if truth[m] && count[m] > bestN {
			best, bestN = m, count[m]
		}
	}
	return best, best >= 0
}

// slug returns "" for no params, else "_k-v_k-v" made safe for file names.
func slug(ps []record.Param) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("_" + fileSafe(p.Key) + "-" + fileSafe(p.Value))
	}
	return b.String()
}

// fileSafe replaces characters other than letters, digits, '.', '-' and
// '_' by '_'.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// declaredFigures draws the figures suite declares (decl) into the report,
// each with its heading in index.md, or saying there why it could not be
// drawn.
func (w *reportWriter) declaredFigures(idx *bytes.Buffer, groups []Group, suite string, decl report.Suite) error {
	type declared struct {
		name, heading, alt string
		draw               func() (*Figure, error)
	}
	var figs []declared
	for _, f := range decl.Sweeps {
		figs = append(figs, declared{f.Name, f.Heading, f.Alt, func() (*Figure, error) { return DeclaredSweep(groups, suite, f) }})
	}
	for _, f := range decl.Bars {
		figs = append(figs, declared{f.Name, f.Heading, f.Alt, func() (*Figure, error) { return DeclaredBars(groups, suite, f) }})
	}
	for _, fig := range figs {
		f, err := fig.draw()
		if err != nil {
			fmt.Fprintf(idx, "### %s\n\nnot drawn: %v\n\n", fig.heading, err)
			continue
		}
		name := "figures/" + fileSafe(fig.name)
		if err := w.figure(name, f); err != nil {
			return err
		}
		alt := fig.alt
		if alt == "" {
			alt = suite
		}
		fmt.Fprintf(idx, "### %s\n\n![%s](%s.png)\n\n[png](%s.png) · [svg](%s.svg)\n\n", fig.heading, alt, name, name, name)
	}
	return nil
}
