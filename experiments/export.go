package experiments

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/template"
)

// ExportOptions describe a sharded run for a cluster scheduler.
type ExportOptions struct {
	// Run holds the run's options; Out is the directory below which shard
	// i writes shard-i/, and Shard is ignored.
	Run Options
	// Shards is the number of shards (jobs), at least 1.
	Shards int
	// Binary is the path of the tempora binary on the execution hosts
	// (a shared file system is assumed): the binary that knows every
	// method of the run, such as a researcher's own build of cli.Main;
	// empty means "./tempora".
	Binary string
}

// Export writes a job description that runs every shard of a suite with one
// static tempora binary: kind "condor" writes an HTCondor submit file
// (one job per shard, $(Process) = shard index), kind "slurm" writes a
// Slurm batch script with a job array (SLURM_ARRAY_TASK_ID = shard index).
// Each shard writes Out/shard-i; the file ends with the merge command.
func Export(w io.Writer, kind string, e ExportOptions) error {
	o := e.Run
	if e.Shards < 1 {
		return fmt.Errorf("experiments: %d shards, want at least 1", e.Shards)
	}
	if o.Out == "" {
		return fmt.Errorf("experiments: no output directory")
	}
	p, err := newPlan(&o)
	if err != nil {
		return err
	}
	var tmpl *template.Template
	switch kind {
	case "condor":
		tmpl = condorTemplate
	case "slurm":
		tmpl = slurmTemplate
	default:
		return fmt.Errorf("experiments: unknown scheduler %q (want condor or slurm)", kind)
	}
	bin := e.Binary
	if bin == "" {
		bin = "./tempora"
	}
	for _, p := range []struct{ what, path string }{{"output directory", o.Out}, {"binary path", bin}} {
		if strings.ContainsAny(p.path, "\n\r") {
			return fmt.Errorf("experiments: %s %q contains a line break, which a job file cannot carry", p.what, p.path)
		}
	}
	if kind == "slurm" && strings.Contains(o.Out, `\`) {
		// A backslash anywhere in a Slurm file-name pattern turns off
		// every replacement, so %a would not give each shard its own log.
		return fmt.Errorf("experiments: output directory %q contains a backslash, which Slurm's --output file-name pattern cannot carry", o.Out)
	}
	args := []string{"run", "-suite", o.Suite}
	if o.Grid != "" {
		args = append(args, "-grid", o.Grid)
	}
	if o.Models > 0 {
		args = append(args, "-models", strconv.Itoa(o.Models))
	}
	if len(o.Methods) > 0 {
		args = append(args, "-methods", strings.Join(p.methods, ","))
	}
	if o.Workers > 0 {
		args = append(args, "-workers", strconv.Itoa(o.Workers))
	}
	if o.Seed != 0 {
		args = append(args, "-seed", strconv.FormatUint(o.Seed, 10))
	}
	if o.Quick {
		args = append(args, "-quick")
	}
	workers := o.Workers
	if workers == 0 {
		workers = 1
	}
	var shards []string
	for i := range e.Shards {
		shards = append(shards, fmt.Sprintf("%s/shard-%d", o.Out, i))
	}
	return tmpl.Execute(w, map[string]any{
		"Binary": bin, "Args": args, "Shards": e.Shards, "Last": e.Shards - 1,
		"Out": o.Out, "Suite": o.Suite, "Merged": o.Out + "/merged", "CPUs": workers, "ShardDirs": shards,
	})
}

var funcs = template.FuncMap{
	// sh quotes a word for the POSIX shell.
	"sh": func(s string) string {
		if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>(){}*?[]#~!") {
			return s
		}
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	},
	// sbatchFile writes the file-name pattern dir+pattern as one value of
	// an #SBATCH line: sbatch splits those lines at blanks outside double
	// quotes, where a backslash escapes the next character; % in dir is
	// doubled so that only pattern's %a is replaced. (Export refuses a dir
	// with a backslash, which would turn the replacement off.)
	"sbatchFile": func(dir, pattern string) string {
		v := strings.ReplaceAll(dir, "%", "%%") + pattern
		if !strings.ContainsAny(v, " \t\"'\\") {
			return v
		}
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
	},
	// condorPath writes a path as a submit-file value: HTCondor takes the
	// rest of the line verbatim (blanks included; quotes would become part
	// of the name) but expands $(...) macros, so $ becomes $(DOLLAR).
	"condorPath": func(s string) string { return strings.ReplaceAll(s, "$", "$(DOLLAR)") },
	// condor quotes a word for HTCondor's "new" arguments syntax.
	"condor": func(s string) string {
		s = strings.ReplaceAll(s, `"`, `""`)
		if s != "" && !strings.ContainsAny(s, " \t'") {
			return s
		}
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	},
}

var condorTemplate = template.Must(template.New("condor").Funcs(funcs).Parse(`# HTCondor submit file for tempora suite {{.Suite}}: {{.Shards}} shards.
# Jobs run on a shared file system in the submit directory (should_transfer_files = NO).
# Submit with: mkdir -p {{sh .Out}}/logs && condor_submit this-file
# Each job writes {{.Out}}/shard-$(Process); when all are done, merge with
#   tempora merge -out {{sh .Merged}}{{range .ShardDirs}} {{sh .}}{{end}}
universe                = vanilla
executable              = {{condorPath .Binary}}
transfer_executable     = False
arguments               = "{{range .Args}}{{condor .}} {{end}}-shard $(Process)/{{.Shards}} -out {{condor (print (condorPath .Out) "/shard-$(Process)")}}"
request_cpus            = {{.CPUs}}
output                  = {{condorPath .Out}}/logs/shard-$(Process).out
error                   = {{condorPath .Out}}/logs/shard-$(Process).err
log                     = {{condorPath .Out}}/logs/condor.log
should_transfer_files   = NO
queue {{.Shards}}
`))

var slurmTemplate = template.Must(template.New("slurm").Funcs(funcs).Parse(`#!/bin/sh
# Slurm batch script for tempora suite {{.Suite}}: {{.Shards}} shards.
# Submit with: mkdir -p {{sh .Out}}/logs && sbatch this-file
# Each array task writes {{.Out}}/shard-$SLURM_ARRAY_TASK_ID; when all are done, merge with
#   tempora merge -out {{sh .Merged}}{{range .ShardDirs}} {{sh .}}{{end}}
#SBATCH --job-name=tempora-{{.Suite}}
#SBATCH --array=0-{{.Last}}
#SBATCH --cpus-per-task={{.CPUs}}
#SBATCH --output={{sbatchFile .Out "/logs/shard-%a.out"}}
#SBATCH --error={{sbatchFile .Out "/logs/shard-%a.err"}}
set -eu
exec {{sh .Binary}}{{range .Args}} {{sh .}}{{end}} -shard "$SLURM_ARRAY_TASK_ID/{{.Shards}}" -out {{sh .Out}}/shard-"$SLURM_ARRAY_TASK_ID"
`))
