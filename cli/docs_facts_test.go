package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/experiments"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/internal/memlimit"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/procmodel"
	"github.com/tempora-dev/tempora/record"
)

// The documents whose facts are checked against the code: README.md and
// every page of docs/ and docs/studies/.
var checkedDocs = docPages()

// docPages returns README.md and the pages of docs/ and docs/studies/, in
// a fixed order.
func docPages() []string {
	pages := []string{readmePath}
	for _, dir := range []string{"../docs/*.md", "../docs/studies/*.md"} {
		m, err := filepath.Glob(dir)
		if err != nil {
			panic(err) // the patterns are constants
		}
		pages = append(pages, m...)
	}
	return pages
}

// readmePages are README.md and the pages of docs/ that took over parts of
// it (TIME's options, Python, new methods, benchmarks, clusters, bad
// input): what the README's reader reads.
var readmePages = []string{readmePath, "../docs/time.md", "../docs/python.md", "../docs/new-method.md",
	"../docs/benchmarks.md", "../docs/cluster.md", "../docs/bad-input.md"}

// readDoc returns a document with every run of white space (line breaks
// included) turned into one blank, so that a fact matches however the
// paragraph is wrapped.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// docFact is a statement a document makes about the code, spelt from the
// code's value: the document must contain text.
type docFact struct {
	doc, text string
}

// thousands formats n with commas between groups of three digits, as the
// documents spell large counts (262,144).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// sci formats a power of ten as the documents do: 1e−10, with a minus sign.
func sci(v float64) string {
	return "1e−" + strconv.Itoa(int(math.Round(-math.Log10(v))))
}

// powerOfTen formats n, a power of ten, as the documents do: 10⁹.
func powerOfTen(t *testing.T, n int64) string {
	t.Helper()
	k := 0
	for m := n; m > 1; m /= 10 {
		if m%10 != 0 {
			t.Fatalf("%d is not a power of ten", n)
		}
		k++
	}
	sup := []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")
	var digits []rune
	for _, d := range strconv.Itoa(k) {
		digits = append(digits, sup[d-'0'])
	}
	return "10" + string(digits)
}

// builtinDefault returns the default, or with quick the quick-scale
// default, of the parameter param of the built-in method meth, from the
// method table.
func builtinDefault(t *testing.T, p *program, meth, param string, quick bool) any {
	t.Helper()
	m, err := p.table.Lookup(meth)
	if err != nil {
		t.Fatal(err)
	}
	for _, par := range m.Params {
		if par.Name == param {
			if quick {
				if par.Quick == nil {
					t.Fatalf("%s -%s has no quick-scale default", meth, param)
				}
				return par.Quick
			}
			return par.Default
		}
	}
	t.Fatalf("%s has no parameter %s", meth, param)
	return nil
}

// suiteSettings returns a suite's settings at one scale.
func suiteSettings(t *testing.T, name string, quick bool) []experiments.Setting {
	t.Helper()
	s, err := experiments.LookupSuite(name)
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.Settings(quick, "")
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// makeVar returns the default of a variable of the Makefile (NAME ?= v).
func makeVar(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*\??:?=\s*(\S+)\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the Makefile does not set %s", name)
	}
	return string(m[1])
}

// flagDefault returns the default of a flag of a command as its help
// prints it ("" when the help prints none, i.e. for a zero value).
func flagDefault(t *testing.T, p *program, cmd, flag string) string {
	t.Helper()
	var out bytes.Buffer
	if err := p.runContext(t.Context(), []string{cmd, "-h"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(flag) + `\b.*\n((?:    .*\n)*)`)
	m := re.FindSubmatch(out.Bytes())
	if m == nil {
		t.Fatalf("tempora %s -h shows no flag -%s", cmd, flag)
	}
	d := regexp.MustCompile(`\(default "?([^")]*)"?\)\s*$`).FindSubmatch(bytes.TrimSpace(m[1]))
	if d == nil {
		return ""
	}
	return string(d[1])
}

// docFacts returns the facts the documents state about the code, each
// spelt from the value the code has now. A fact a document states is
// listed here once, next to the code it comes from.
func docFacts(t *testing.T, p *program) []docFact {
	const readme, decisions, protocol, records = "../README.md", "../docs/decisions.md", "../docs/protocol.md", "../docs/records.md"
	const timeDoc, badInput, cluster, newMethod = "../docs/time.md", "../docs/bad-input.md", "../docs/cluster.md", "../docs/new-method.md"
	const pythonDoc = "../docs/python.md"
	alpha, gamma := explain.DefaultAlpha, explain.DefaultGamma
	minP := func(m int) string { return strconv.Itoa(explain.MinPermutations(m, alpha)) }
	permAlpha := builtinDefault(t, p, "PERM", "alpha", false).(float64)
	// The caps come from the function TIME and PERM take them from
	// (explain.Tests.Family), with each method's default tests.
	capOf := func(method string, m int, a float64, perms int) string {
		tests, err := explain.ParseTests(builtinDefault(t, p, method, "tests", false).(string))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := tests.Family(m, a, perms)
		return strconv.Itoa(n)
	}
	anyCap := func(m, perms int) string {
		n, _ := explain.AnytimeTests.Family(m, alpha, perms)
		return strconv.Itoa(n)
	}
	cells := capOf("PERM", 200, permAlpha, 0)
	limeSamples := builtinDefault(t, p, "LIME", "samples", false).(int)
	sageCap := builtinDefault(t, p, "SAGE", "max-permutations", false).(int)
	for _, m := range []string{"SAGE-m", "SAGE-z"} {
		if c := builtinDefault(t, p, m, "max-permutations", false).(int); c != sageCap {
			t.Errorf("%s's permutation cap %d, SAGE's %d: the documents state one cap", m, c, sageCap)
		}
	}
	fuzz, err := time.ParseDuration(makeVar(t, "FUZZTIME"))
	if err != nil {
		t.Fatal(err)
	}
	modelTimeout, err := time.ParseDuration(flagDefault(t, p, "explain", "model-timeout"))
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(goMod)
	if goVersion == nil {
		t.Fatal("go.mod has no go line")
	}
	quickTable := suiteSettings(t, "table1", true)[0].Problem.Instances
	var heads []int
	quickTestsize := suiteSettings(t, "testsize-regression", true)
	for _, s := range quickTestsize {
		heads = append(heads, s.Head)
	}
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	demoLine := regexp.MustCompile(`(?m)^\t\./\$\(BIN\) synth .*$`).Find(makefile)
	demo := func(flag string) string {
		m := regexp.MustCompile(`-` + flag + ` (\S+)`).FindSubmatch(demoLine)
		if m == nil {
			t.Fatalf("make demo's synth command %q has no -%s", demoLine, flag)
		}
		return string(m[1])
	}
	coverage := 100 * (2*distuv.UnitNormal.CDF(explain.DefaultProbeZ) - 1)
	occlusion, err := os.ReadFile("../examples/newmethod/occlusion.go")
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

	return []docFact{
		// README.md
		{readme, "With Go " + string(goVersion[1]) + " or later"},
		{readme, fmt.Sprintf("`FUZZTIME`, %d s each by default", int(fuzz.Seconds()))},
		{readme, fmt.Sprintf("(%s instances, %s features, %s timesteps, %s of the features relevant)",
			demo("instances"), demo("features"), demo("timesteps"), map[string]string{"0.5": "half"}[demo("relevant")])},
		// docs/time.md, docs/bad-input.md, docs/cluster.md, docs/new-method.md
		{timeDoc, fmt.Sprintf("(%s for %d features at α = %s; an anytime test may draw a third more for the same smallest p-value, %s; PERM's family is every cell, %s for 200 cells)",
			capOf("TIME", 10, alpha, 0), 10, f(alpha), anyCap(10, 0), cells)},
		{timeDoc, fmt.Sprintf("(an anytime test then makes at most ⌊4N/3⌋ + 1 draws: %s for N = %d)", anyCap(10, 50), 50)},
		{timeDoc, fmt.Sprintf("- `%s`: the paper's tests, every test making exactly `-permutations` draws (%d by default)", explain.PaperTIME().Tests, explain.DefaultPermutations)},
		{badInput, fmt.Sprintf("(%d/4 of the physical or control-group memory", int(4*memlimit.Fraction))},
		{badInput, fmt.Sprintf("exits with status %d or %d (128 plus the signal's number)", 128+int(syscall.SIGINT), 128+int(syscall.SIGTERM))},
		{cluster, fmt.Sprintf("exits with status 128 + the signal number: %d for Ctrl-C, %d for SIGTERM", 128+int(syscall.SIGINT), 128+int(syscall.SIGTERM))},
		{newMethod, fmt.Sprintf("mean occlusion in %d lines", bytes.Count(occlusion, []byte("\n")))},
		{timeDoc, "(all but a share 1 − γ, γ = " + f(gamma) + " by default)"},
		{timeDoc, "α (" + f(alpha) + " by default;"},
		{timeDoc, fmt.Sprintf("measured against fixed P = %d", explain.DefaultPermutations)},
		{timeDoc, fmt.Sprintf("`-tree-fdr` tests every family at α/%.2f (Yekutieli's level adjustment)", explain.TreeLevel)},
		{pythonDoc, "A run estimated above " + powerOfTen(t, largeEvals) + " instance evaluations is announced"},
		// docs/decisions.md, numbered decisions
		{decisions, fmt.Sprintf("exactly P draws, P = %d unless set", explain.DefaultPermutations)},
		{decisions, fmt.Sprintf("(`explain.AnytimeCap`: %s for 10 features at α = %s, %s with `-permutations 50`)", anyCap(10, 0), f(alpha), anyCap(10, 50))},
		{decisions, fmt.Sprintf("%s draws for 10 features, %s for 100; each family", anyCap(10, 0), anyCap(100, 0))},
		{decisions, fmt.Sprintf("h = min(%d, ⌊α·P_max⌋ + 1), with p = h/k", explain.StopHits)},
		{decisions, fmt.Sprintf("are capped at %d, and the ordering test of a window short enough", explain.DefaultPermutations)},
		{decisions, "Default γ = " + f(gamma) + "."},
		{decisions, "Default α = " + f(alpha) + "."},
		{decisions, fmt.Sprintf("clipped to [%s, 1 − %s]", sci(tempora.ProbClip), sci(tempora.ProbClip))},
		{decisions, fmt.Sprintf("the instance as sample 0, %d samples, kernel width %s·√(D·L)", limeSamples, f(baselines.DefaultLIMEKernelScale))},
		{decisions, fmt.Sprintf("weighted ridge regression (penalty %s, intercept)", f(baselines.DefaultLIMERidge))},
		{decisions, fmt.Sprintf("(background = the first %d rows,", baselines.DefaultSAGEBackground)},
		{decisions, fmt.Sprintf("batches of %d, converged when", baselines.DefaultSAGEBatch)},
		{decisions, fmt.Sprintf("falls below %s.", f(baselines.DefaultSAGEThreshold))},
		{decisions, "**PERM-f** keeps only the cells significant under BH at " + f(permAlpha) + "."},
		{decisions, fmt.Sprintf("|score| < %s (`method.NearZero`) count as zero", sci(method.NearZero))},
		// docs/decisions.md, sections
		{decisions, fmt.Sprintf("%s for 10 features and %s for 100 at α = %s; the family {ordering, window} of an important feature gets ⌈%d·2/α⌉ − 1 = %d and a window ordering ⌈%d/α⌉ − 1 = %d, for power",
			minP(10), minP(100), f(alpha), explain.PowerHits, explain.MinPermutations(2*explain.PowerHits, alpha), explain.OrderingHits, explain.MinPermutations(explain.OrderingHits, alpha))},
		{decisions, fmt.Sprintf("`PowerHits` = %d times the nominal cap for {ordering, window 1, …, window k} (%d for one window at α = %s) and `OrderingHits` = %d times for the window orderings (%d for one window)",
			explain.PowerHits, explain.MinPermutations(2*explain.PowerHits, alpha), f(alpha), explain.OrderingHits, explain.MinPermutations(explain.OrderingHits, alpha))},
		{"../docs/time.md", fmt.Sprintf("its ordering and windows %d times the nominal cap (%d for one window), its window orderings %d times (%d for one window)",
			explain.PowerHits, explain.MinPermutations(2*explain.PowerHits, alpha), explain.OrderingHits, explain.MinPermutations(explain.OrderingHits, alpha))},
		{"../docs/time.md", fmt.Sprintf("(h = %d at a cap of %s)", explain.SequentialStop(alpha, explain.MinPermutations(10, alpha)).Hits, minP(10))},
		{decisions, fmt.Sprintf("the coverage of ±%s SE (%.2f%%), after at least %d draws", f(explain.DefaultProbeZ), coverage, explain.DefaultProbeMinDraws)},
		{decisions, fmt.Sprintf("its cap is `Permutations`, else %d", explain.DefaultPermutations)},
		{decisions, fmt.Sprintf("`MinPermutations(D·L, α)` (%s for 200 cells)", cells)},
		{decisions, fmt.Sprintf("`-tests fixed` is the paper's P = %d", baselines.DefaultPERMPermutations)},
		{decisions, fmt.Sprintf("of 0 means min(%d, M)", baselines.DefaultSAGEBackground)},
		{decisions, fmt.Sprintf("the default run seed is %d", experiments.DefaultSeed)},
		{decisions, fmt.Sprintf("(`baselines.SAGEMaxPermutations` = %s)", thousands(sageCap))},
		{decisions, fmt.Sprintf("SAGE's default permutation cap (%s)", thousands(sageCap))},
		{decisions, fmt.Sprintf("SAGE's default permutation cap (%s) holds for `tempora explain` too", thousands(sageCap))},
		{decisions, fmt.Sprintf("%d instances for the table suites, test-set-size suites synthesised at %d and analysed at %d–%d",
			quickTable, quickTestsize[0].Problem.Instances, slices.Min(heads), slices.Max(heads))},
		{decisions, fmt.Sprintf("LIME %d samples per instance", builtinDefault(t, p, "LIME", "samples", true))},
		{decisions, fmt.Sprintf("a marginal background of %d rows, not %d, and a cap of %s permutations",
			builtinDefault(t, p, "SAGE", "background", true), baselines.DefaultSAGEBackground, thousands(builtinDefault(t, p, "SAGE", "max-permutations", true).(int)))},
		{decisions, fmt.Sprintf("the parameter `instances=%d`", quickTable)},
		{decisions, fmt.Sprintf("otherwise %d/4 of the smaller of physical memory", int(4*memlimit.Fraction))},
		{decisions, fmt.Sprintf("by default the smaller of %d MiB and a quarter of the memory limit", memlimit.CopyCap>>20)},
		{readme, fmt.Sprintf("the smaller of %d MiB and a quarter of the memory limit), else one chunk", memlimit.CopyCap>>20)},
		{readme, fmt.Sprintf("the data plus at most %d MiB plus the model's own", memlimit.CopyCap>>20)},
		// docs/records.md
		{records, "## Record (`" + record.Format + "`)"},
		{records, "## Manifest (`" + experiments.ManifestFormat + "`)"},
		{records, fmt.Sprintf("is at most %d bytes, as it is a file or directory name", record.MaxKeyElement)},
		// docs/errors.md
		{"../docs/errors.md", fmt.Sprintf("the mean magnitude of its cells of magnitude at least %s", sci(method.NearZero))},
		// docs/protocol.md
		{protocol, fmt.Sprintf("# The model process protocol (version %d)", procmodel.Version)},
		{protocol, fmt.Sprintf("waits up to %d seconds (`Options.CloseTimeout`)", int(procmodel.DefaultCloseTimeout.Seconds()))},
		{protocol, fmt.Sprintf("%d minutes on the command line", int(modelTimeout.Minutes()))},
	}
}

// TestDocFacts checks that the numbers and defaults README.md and docs/*.md
// state are the code's: every fact of docFacts, spelt from the code's
// current value, appears in its document.
func TestDocFacts(t *testing.T) {
	p, err := newProgram(nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, d := range checkedDocs {
		docs[d] = readDoc(t, d)
	}
	for _, fact := range docFacts(t, p) {
		doc, ok := docs[fact.doc]
		if !ok {
			t.Fatalf("fact of unchecked document %s", fact.doc)
		}
		if !strings.Contains(doc, fact.text) {
			t.Errorf("%s does not state %q (the value the code has now)", strings.TrimPrefix(fact.doc, "../"), fact.text)
		}
	}
}

// otherToolFlags are flags the documents give to programs other than
// tempora, in code spans that start with the flag.
var otherToolFlags = map[string]string{
	"ignore": "benchstat",
	"short":  "go test",
}

// temporaFlags returns the flags of every command of p (as tempora
// <command> -h lists them), the method parameters (as tempora methods NAME
// lists them), and -h.
func temporaFlags(t *testing.T, p *program) map[string]bool {
	t.Helper()
	flags := map[string]bool{"h": true}
	re := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)
	var helps [][]string
	for _, c := range commands {
		helps = append(helps, []string{c.name, "-h"})
	}
	for _, name := range p.table.Names() {
		helps = append(helps, []string{"methods", name})
	}
	for _, args := range helps {
		var out bytes.Buffer
		if err := p.runContext(t.Context(), args, &out, &out); err != nil {
			t.Fatalf("tempora %s: %v", strings.Join(args, " "), err)
		}
		for _, m := range re.FindAllStringSubmatch(out.String(), -1) {
			flags[m[1]] = true
		}
	}
	return flags
}

// docFlags returns the flags a document names: the flags in inline code
// spans that start with one (`-max-time`, `-sequential=false -permutations
// 50`), and those of the tempora command lines of its code blocks.
func docFlags(t *testing.T, doc string) []string {
	t.Helper()
	var flags []string
	add := func(line string) {
		args, err := procmodel.SplitCommand(line)
		if err != nil {
			return // prose with an apostrophe, not a command line
		}
		for _, a := range args {
			if a == ">" || a == "|" {
				break
			}
			if m := regexp.MustCompile(`^-([a-z][a-z0-9-]*)(=|$)`).FindStringSubmatch(a); m != nil {
				flags = append(flags, m[1])
			}
		}
	}
	for _, m := range regexp.MustCompile("`(-[a-z][^`]*)`").FindAllStringSubmatch(doc, -1) {
		add(m[1])
	}
	for _, line := range readmeCommandLines(doc) {
		if args := strings.Fields(line); len(args) > 0 && strings.HasSuffix(args[0], "tempora") {
			add(line)
		}
	}
	return flags
}

// TestDocFlags checks that every flag README.md and docs/*.md name is a
// flag of tempora (or one of otherToolFlags).
func TestDocFlags(t *testing.T) {
	p, err := newProgram(nil)
	if err != nil {
		t.Fatal(err)
	}
	have := temporaFlags(t, p)
	readmeFlags := 0
	for _, path := range checkedDocs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		flags := docFlags(t, string(b))
		if slices.Contains(readmePages, path) {
			readmeFlags += len(flags)
		}
		for _, f := range flags {
			if !have[f] && otherToolFlags[f] == "" {
				t.Errorf("%s names -%s, which no tempora command has", strings.TrimPrefix(path, "../"), f)
			}
		}
	}
	if readmeFlags < 40 {
		t.Errorf("found only %d flags in README.md and its pages", readmeFlags)
	}
}

// TestDocBenchstat checks that every benchstat command of the documents
// and the Makefile that reads a suite's bench.txt pools its models
// (-ignore /model): each record is one line named .../model=N/..., so
// without it benchstat prints one row per model with a single sample.
func TestDocBenchstat(t *testing.T) {
	b, err := os.ReadFile("../results/reference/table1/bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Benchmark\S*/model=\d+/`).Match(b) {
		t.Fatal("bench.txt lines no longer name the model; revisit -ignore /model in the documents")
	}
	re := regexp.MustCompile("benchstat (-[^`\n]*|old/bench\\.txt[^`\n]*)")
	n := 0
	for _, path := range append(slices.Clone(checkedDocs), "../Makefile") {
		doc := readDoc(t, path)
		for _, m := range re.FindAllString(doc, -1) {
			n++
			if !strings.Contains(m, "-ignore /model") && !strings.Contains(m, "out/bench.txt") {
				t.Errorf("%s: %q does not pool the models (-ignore /model)", strings.TrimPrefix(path, "../"), m)
			}
		}
	}
	if n == 0 {
		t.Error("no benchstat command found in the documents")
	}
}

// markdownTable returns the rows (header and separator included) of the
// first markdown table of doc whose header starts with head, each split
// into trimmed cells.
func markdownTable(t *testing.T, name, doc, head string) [][]string {
	t.Helper()
	var rows [][]string
	for _, l := range strings.Split(doc, "\n") {
		switch {
		case len(rows) == 0 && strings.HasPrefix(l, head):
		case len(rows) > 0 && strings.HasPrefix(l, "|"):
		case len(rows) > 0:
			return rows
		default:
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(l, "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table starting %q", name, head)
	}
	return rows
}

// benchmarksPath is the page of benchmark results.
const benchmarksPath = "../docs/benchmarks.md"

// TestDocResultTables checks that the result tables docs/benchmarks.md
// shows are those of the committed reports it links to: Table 1/S1 at
// paper scale and the retraining table of the learned quick run (without
// its network and problems columns, which the page states in prose).
func TestDocResultTables(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme := read(benchmarksPath)

	const t1 = "| Method | Feat. power |"
	got := markdownTable(t, "docs/benchmarks.md", readme, t1)
	want := markdownTable(t, "table-s1.md", read("../results/reference/table1/tables/table-s1.md"), t1)
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("docs/benchmarks.md's Table 1 differs from results/reference/table1/tables/table-s1.md:\n%v\nwant\n%v", got, want)
	}

	got = markdownTable(t, "docs/benchmarks.md", readme, "| feature set |")
	sel := markdownTable(t, "selection.md", read("../results/reference/learned/quick/selection.md"), "| network | feature set |")
	want = nil
	for _, r := range sel {
		want = append(want, r[1:len(r)-1])
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("docs/benchmarks.md's retraining table differs from results/reference/learned/quick/selection.md:\n%v\nwant\n%v", got, want)
	}
	if n := sel[len(sel)-1][len(sel[0])-1]; !strings.Contains(readme, "holdout AUROC mean (SD) over "+n+" problems") {
		t.Errorf("docs/benchmarks.md does not say the retraining table is over %s problems", n)
	}
	// Table S2 at paper scale with 20 models, in its own section.
	const s2 = "## Reproduced: Table S2 at paper scale"
	at := strings.Index(readme, s2)
	if at < 0 {
		t.Fatalf("docs/benchmarks.md has no section %q", s2)
	}
	got = markdownTable(t, "docs/benchmarks.md", readme[at:], t1)
	want = markdownTable(t, "table-s2.md", read("../results/reference/table-s2-20models/tables/table-s2.md"), t1)
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("docs/benchmarks.md's Table S2 differs from results/reference/table-s2-20models/tables/table-s2.md:\n%v\nwant\n%v", got, want)
	}
	// The test-set-size sweeps: feature power at the smallest and the
	// largest test set, as the page quotes them.
	var sweep []string
	for _, task := range []string{"regression", "classification"} {
		rows := markdownTable(t, task, read("../results/reference/testsize-20models/tables/suite-testsize-"+task+".md"), "| Setting |")
		col := slices.Index(rows[0], "feature-power")
		if col < 0 || len(rows) < 4 {
			t.Fatalf("suite-testsize-%s.md has no feature power: %v", task, rows)
		}
		mean := func(r []string) string { m, _, _ := strings.Cut(r[col], " "); return m }
		sweep = append(sweep, mean(rows[2])+" → "+mean(rows[len(rows)-1])+" for "+task)
	}
	if s := "(feature power " + strings.Join(sweep, ", ") + ")"; !strings.Contains(strings.Join(strings.Fields(readme), " "), s) {
		t.Errorf("docs/benchmarks.md does not state %q", s)
	}

	nets := markdownTable(t, "networks.md", read("../results/reference/learned/quick/networks.md"), "| network |")
	col := slices.Index(nets[0], "test AUROC")
	if col < 0 || len(nets) < 3 || nets[2][0] != "CNN" {
		t.Fatalf("networks.md's first row is not the CNN's, with a test AUROC: %v", nets)
	}
	if s := "the CNN's test AUROC is " + nets[2][col]; !strings.Contains(readme, s) {
		t.Errorf("docs/benchmarks.md does not state %q", s)
	}
}

// TestREADMEGoCode checks the Go code of README.md and the documents of
// docs/: the complete program (the block that starts with "package main")
// builds, and every other block is a verbatim excerpt of the example
// module examples/newmethod.
func TestREADMEGoCode(t *testing.T) {
	var blocks [][]string
	for _, path := range checkedDocs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
			blocks = append(blocks, []string{strings.TrimPrefix(path, "../"), m[1]})
		}
	}
	if len(blocks) < 3 {
		t.Fatalf("the documents have %d Go blocks, want at least 3", len(blocks))
	}
	var example []byte
	for _, f := range []string{"main.go", "occlusion.go", "occlusion_test.go"} {
		src, err := os.ReadFile("../examples/newmethod/" + f)
		if err != nil {
			t.Fatal(err)
		}
		example = append(example, src...)
	}
	programs := 0
	for _, m := range blocks {
		code := m[1]
		if !strings.HasPrefix(code, "package main\n") {
			if !bytes.Contains(example, []byte(code)) {
				t.Errorf("%s's Go block\n%s\nis not in examples/newmethod", m[0], code)
			}
			continue
		}
		programs++
		goCmd, err := exec.LookPath("go")
		if err != nil {
			t.Skip("no go command to build the documents' program with")
		}
		dir := t.TempDir()
		src := filepath.Join(dir, "main.go")
		if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		// The overlay puts the program in a directory of the module that
		// does not exist, so that it builds against this module's code.
		root, err := filepath.Abs("..")
		if err != nil {
			t.Fatal(err)
		}
		overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, "cmd", "readme-program", "main.go"): src}})
		if err != nil {
			t.Fatal(err)
		}
		ov := filepath.Join(dir, "overlay.json")
		if err := os.WriteFile(ov, overlay, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), goCmd, "build", "-overlay", ov, "-o", os.DevNull, "./cmd/readme-program")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s's Go program does not build: %v\n%s", m[0], err, out)
		}
	}
	if programs != 1 {
		t.Errorf("the documents have %d Go programs, want 1", programs)
	}
}

// TestDocMakeTargets checks that every make target the documents name
// ("make demo", `make paper-quick`, `make windows-reference`) is a target
// of the Makefile: one of its rules, or a suite's target made by one of its
// pattern rules (%-quick, paper-%, …).
func TestDocMakeTargets(t *testing.T) {
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllSubmatch(b, -1) {
		targets[string(m[1])] = true
	}
	patterns := regexp.MustCompile(`(?m)^([a-z-]*%[a-z-]*):`).FindAllSubmatch(b, -1)
	if len(patterns) < 4 {
		t.Fatalf("the Makefile has %d pattern rules, want the suites' four", len(patterns))
	}
	for _, m := range patterns {
		for _, s := range experiments.Suites {
			targets[strings.Replace(string(m[1]), "%", s.Name, 1)] = true
		}
	}
	if !targets["windows-quick"] || !targets["paper-table1"] || !targets["correlated-paper-reference"] {
		t.Errorf("the pattern rules do not make windows-quick, paper-table1 and correlated-paper-reference")
	}
	re := regexp.MustCompile("(?m)(?:`|^)make ([a-z][a-z0-9-]*)")
	n := 0
	for _, path := range checkedDocs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			n++
			if !targets[m[1]] {
				t.Errorf("%s names make %s, which the Makefile lacks", strings.TrimPrefix(path, "../"), m[1])
			}
		}
	}
	if n < 10 {
		t.Errorf("found only %d make targets in the documents", n)
	}
}
