package synth

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tempora-dev/tempora"
)

// Describe writes a readable summary of the problem to w: its shape, task
// and configuration, the noise multiplier, how well the model fits the
// targets of the problem's instances (accuracy of the decision F_β > τ for
// classification, R² for regression), and one line per feature with its
// type, process, window, aggregator, nonlinearity, coefficient, relevance
// and ground-truth flags.
func (p *Problem) Describe(w io.Writer) error {
	x, m, cfg := p.Data.X, p.Model, p.Config
	ew := &errWriter{w: w}
	ew.printf("synthetic %v problem: %d instances × %d features × %d timesteps, seed %d\n", m.task, x.M, x.D, x.L, p.Seed)
	dep := "window-dependent"
	if cfg.WindowIndependent {
		dep = "window-independent"
	}
	ew.printf("%d of %d features relevant (fraction %g), %s sequences, %d instances generated\n",
		len(m.Relevant()), m.d, cfg.FractionRelevant, dep, cfg.Instances)
	ew.printf("model: F = Σ_relevant α_j g_j + β Σ_irrelevant α_j g_j, β = %.6g (noise %v)\n", m.beta, cfg.Noise)

	f := make([]float64, x.M)
	if err := m.Polynomial(f, x, m.beta); err != nil {
		return err
	}
	if m.task == tempora.Classification {
		correct := 0
		for i, v := range f {
			if label(v, m.tau) == p.Data.Y[i] {
				correct++
			}
		}
		ew.printf("prediction sigmoid(F − τ), τ = %.6g; accuracy of F > τ against the labels: %.4f\n",
			m.tau, float64(correct)/float64(x.M))
	} else {
		mean, _ := meanSD(p.Data.Y)
		sse, sst := 0.0, 0.0
		for i, v := range f {
			y := p.Data.Y[i]
			sse += (y - v) * (y - v)
			sst += (y - mean) * (y - mean)
		}
		ew.printf("prediction F; R² against the targets: %.4f\n", 1-sse/sst)
	}
	ew.printf("\n")

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "feature\ttype\tprocess\twindow\taggregator\tnonlinearity\tα\trelevant\teffect\tordering\twindow ordering")
	for j := range m.feats {
		fn, t := &m.feats[j], p.Truth[j]
		typ, proc := "?", "?"
		if j < len(p.Generators) {
			typ, proc = p.Generators[j].Type.String(), p.Generators[j].describe()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%v\t%v\t%+.3f\t%s\t%.3g\t%s\t%s\n", t.Name, typ, proc, fn.Window, fn.Aggregator,
			fn.Nonlinearity, fn.Coefficient, yesNo(fn.Relevant), t.EffectSize, yesNo(t.OrderingImportant), yesNo(t.WindowOrderingImportant))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return ew.err
}

// describe returns a short description of the process, e.g.
// "markov(3, trend)" or "bernoulli(p=0.31)".
func (g *Generator) describe() string {
	if g.Bernoulli {
		return fmt.Sprintf("bernoulli(p=%.2f)", g.P)
	}
	if g.Trend {
		return fmt.Sprintf("markov(%d, trend)", g.In.States())
	}
	return fmt.Sprintf("markov(%d)", g.In.States())
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }
