package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/template"

	"github.com/tempora-dev/tempora/experiments"
)

// jobFile describes the job file of a sharded run ("tempora export").
type jobFile struct {
	// run holds the run's options; Out is the directory below which shard
	// i writes shard-i/, and Shard is ignored. methods are the canonical
	// names of run.Methods.
	run     experiments.Options
	methods []string
	// shards is the number of shards (jobs), at least 1.
	shards int
	// binary is the path of the tempora binary on the execution hosts (a
	// shared file system is assumed): the binary that knows every method
	// of the run, such as a researcher's own build of cli.Main; empty
	// means "./tempora".
	binary string
}

// writeJobs writes a job description that runs every shard of a suite with
// one static tempora binary: kind "condor" writes an HTCondor submit file
// (one job per shard, $(Process) = shard index), kind "slurm" writes a
// Slurm batch script with a job array (SLURM_ARRAY_TASK_ID = shard index).
// Each shard writes Out/shard-i; the file ends with the merge command. The
// run's options must have been checked (program.options).
func writeJobs(w io.Writer, kind string, j jobFile) error {
	o := j.run
	if j.shards < 1 {
		return fmt.Errorf("%d shards, want at least 1", j.shards)
	}
	if o.Out == "" {
		return fmt.Errorf("no output directory")
	}
	var tmpl *template.Template
	switch kind {
	case "condor":
		tmpl = condorTemplate
	case "slurm":
		tmpl = slurmTemplate
	default:
		return fmt.Errorf("unknown scheduler %q (want condor or slurm)", kind)
	}
	bin := j.binary
	if bin == "" {
		bin = "./tempora"
	}
	for _, p := range []struct{ what, path string }{{"output directory", o.Out}, {"binary path", bin}} {
		if strings.ContainsAny(p.path, "\n\r") {
			return fmt.Errorf("%s %q contains a line break, which a job file cannot carry", p.what, p.path)
		}
	}
	if kind == "slurm" && strings.Contains(o.Out, `\`) {
		// A backslash anywhere in a Slurm file-name pattern turns off
		// every replacement, so %a would not give each shard its own log.
		return fmt.Errorf("output directory %q contains a backslash, which Slurm's --output file-name pattern cannot carry", o.Out)
	}
	args := []string{"run", "-suite", o.Suite}
	if o.Grid != "" {
		args = append(args, "-grid", o.Grid)
	}
	if o.Models > 0 {
		args = append(args, "-models", strconv.Itoa(o.Models))
	}
	if len(j.methods) > 0 {
		args = append(args, "-methods", strings.Join(j.methods, ","))
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
	for i := range j.shards {
		shards = append(shards, fmt.Sprintf("%s/shard-%d", o.Out, i))
	}
	return tmpl.Execute(w, map[string]any{
		"Binary": bin, "Args": args, "Shards": j.shards, "Last": j.shards - 1,
		"Out": o.Out, "Suite": o.Suite, "Merged": o.Out + "/merged", "CPUs": workers, "ShardDirs": shards,
	})
}

var jobFuncs = template.FuncMap{
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
	// doubled so that only pattern's %a is replaced. (writeJobs refuses a dir
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

var condorTemplate = template.Must(template.New("condor").Funcs(jobFuncs).Parse(`# HTCondor submit file for tempora suite {{.Suite}}: {{.Shards}} shards.
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

var slurmTemplate = template.Must(template.New("slurm").Funcs(jobFuncs).Parse(`#!/bin/sh
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
