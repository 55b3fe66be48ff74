package experiments

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
)

// The expected wall times of "tempora run -h" (Suite.Time and QuickTime)
// come from measured costs, held in costs.json: for each measured suite and
// scale, the CPU seconds per model of every default method's runs (all of
// the suite's settings of one model) and of synthesising the model's
// problems, with the machine, its load and how each figure was obtained.
// TestSuiteCosts regenerates the file from a measured run
// (TEMPORA_COSTS=…; see its comment). CPU time, not wall time, is
// measured, so that a loaded machine gives the figures an idle one would
// (up to cache contention); the expected wall time on Cores cores is then
// the suite's models × CPU per model ÷ Cores, every explainer keeping
// the cores busy.

//go:embed costs.json
var costsJSON []byte

// costTable is costs.json.
type costTable struct {
	// Machine is the processor, Cores the cores the wall times assume,
	// Go the toolchain, Date the day of the last measurement.
	Machine string `json:"machine"`
	Cores   int    `json:"cores"`
	Go      string `json:"go"`
	Date    string `json:"date"`
	// Suites maps a suite's name to its costs at "paper" and "quick"
	// scale.
	Suites map[string]map[string]suiteCost `json:"suites"`
}

// suiteCost is one suite's measured cost per model at one scale.
type suiteCost struct {
	// Models is the number of models measured, Load the machine's load
	// average (and its CPUs) while measuring.
	Models int    `json:"models"`
	Load   string `json:"load"`
	// Problem is the CPU seconds of synthesising one model's problems.
	Problem float64 `json:"problem"`
	// Methods holds the CPU seconds per model of each method run (the
	// source method of an item; TIME's run also yields TIME-n).
	Methods map[string]float64 `json:"methods"`
	// Notes says how a figure was obtained when not by running the method
	// in full, by method.
	Notes map[string]string `json:"notes,omitempty"`
}

// costs is the parsed costs.json.
var costs = func() costTable {
	var t costTable
	if err := json.Unmarshal(costsJSON, &t); err != nil {
		panic("experiments: costs.json: " + err.Error())
	}
	return t
}()

// perModel returns the CPU seconds per model of the suite's run at the
// scale (problems and every method run), and false when costs.json has no
// measurement for it.
func (c costTable) perModel(suite string, quick bool) (float64, bool) {
	sc, ok := c.Suites[suite][scaleName(quick)]
	if !ok {
		return 0, false
	}
	total := sc.Problem
	for _, v := range sc.Methods {
		total += v
	}
	return total, true
}

func scaleName(quick bool) string {
	if quick {
		return "quick"
	}
	return "paper"
}

// expectedSeconds returns the expected wall seconds of a run of the suite
// with models models on costs.Cores cores, from costs.json.
func (c costTable) expectedSeconds(suite string, quick bool, models int) (float64, bool) {
	cpu, ok := c.perModel(suite, quick)
	if !ok {
		return 0, false
	}
	return cpu * float64(models) / float64(c.Cores), true
}

// measuredTime returns the expected wall time of the named suite's run with
// its default models at the scale, as Suite.Time states it, from
// costs.json ("" when it holds no measurement).
func measuredTime(suite string, quick bool, models int) string {
	sec, ok := costs.expectedSeconds(suite, quick, models)
	if !ok {
		return ""
	}
	return aboutDuration(sec)
}

// aboutDuration writes a duration in seconds as "about N s" (under two
// minutes), "about N min" (under two hours) or "about N h", rounded to two
// significant digits.
func aboutDuration(sec float64) string {
	round := func(v float64) float64 {
		if v < 10 {
			return math.Max(1, math.Round(v))
		}
		p := math.Pow(10, math.Floor(math.Log10(v))-1)
		return math.Round(v/p) * p
	}
	switch {
	case sec < 120:
		return fmt.Sprintf("about %.0f s", round(sec))
	case sec < 2*3600:
		return fmt.Sprintf("about %.0f min", round(sec/60))
	}
	return fmt.Sprintf("about %.0f h", round(sec/3600))
}

// costMethods returns the method runs the measurement of a suite's
// default methods holds: the sources of its default methods, in the
// suite's order.
func costMethods(s *Suite) ([]string, error) {
	t, err := Table()
	if err != nil {
		return nil, err
	}
	runs, _, err := resolveRuns(t, s.Methods)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.source.Name
	}
	return names, nil
}

// measured sets s's expected wall times at the scales costs.json measures
// (measuredTime) and returns s.
func measured(s *Suite) *Suite {
	if t := measuredTime(s.Name, false, s.Models); t != "" {
		s.Time = t
	}
	if t := measuredTime(s.Name, true, s.QuickModels); t != "" {
		s.QuickTime = t
	}
	return s
}
