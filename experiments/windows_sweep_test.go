package experiments

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

var update = flag.Bool("update", false, "rewrite the committed files that tests compare with (the windows sweep)")

// windowsSweepRow is one point of the windows suite's sweep over the noise
// weights' scale (docs/decisions.md, decision 18): TIME with at most
// TIMEWindows windows per feature on Seeds problems of the windows world
// with TrueWindows windows per relevant feature. Found counts the relevant
// features TIME finds important, Exact those whose significant windows are
// exactly the true ones, Stretched those with a significant window that
// claims a timestep outside the true windows, and Beyond those of them
// whose claimed timesteps outside the true windows carry at most θ =
// (1 − γ)/2 of the importance (Σw² of the linear model's weights): a
// stretch the window rules should leave out (a stretch over more is what
// γ's definition of the window includes).
type windowsSweepRow struct {
	TrueWindows int
	NoiseScale  float64
	TIMEWindows int
	Seeds       int
	Found       int
	Exact       int
	Stretched   int
	Beyond      int
}

// ExactRate returns Exact/Found (0 when nothing is found).
func (r windowsSweepRow) ExactRate() float64 { return float64(r.Exact) / float64(max(r.Found, 1)) }

// StretchRate returns Stretched/Found (0 when nothing is found).
func (r windowsSweepRow) StretchRate() float64 {
	return float64(r.Stretched) / float64(max(r.Found, 1))
}

// windowsSweep runs TIME (default configuration, seeded with the problem's
// seed, with one window and with up to three) on the windows suite's
// problem shape (600 × 4 × 24 regression, 2 relevant features, target
// noise SD 1) for seeds 0..seeds−1 at every number of true windows and
// noise-weight scale. Rows come in the order trueWindows × scales × (1, 3).
func windowsSweep(ctx context.Context, trueWindows []int, scales []float64, seeds int) ([]windowsSweepRow, error) {
	var out []windowsSweepRow
	for _, k := range trueWindows {
		for _, s := range scales {
			cfg := synth.WindowsConfig{Instances: windowsProblem.Instances, Features: windowsProblem.Features, Timesteps: windowsProblem.Timesteps,
				Relevant: 2, Windows: k, NoiseScale: s, Noise: 1}
			rows := []windowsSweepRow{{TrueWindows: k, NoiseScale: s, TIMEWindows: 1, Seeds: seeds}, {TrueWindows: k, NoiseScale: s, TIMEWindows: 3, Seeds: seeds}}
			for seed := range uint64(seeds) {
				p, err := synth.GenerateWindows(cfg, seed)
				if err != nil {
					return nil, err
				}
				for i := range rows {
					ex, err := explain.TIME{Seed: seed, Windows: rows[i].TIMEWindows}.Explain(ctx, p.Model, p.Data)
					if err != nil {
						return nil, fmt.Errorf("windows sweep: true windows %d, scale %v, seed %d: %w", k, s, seed, err)
					}
					for j := range cfg.Relevant {
						f := ex.Features[j]
						if !f.Important {
							continue
						}
						rows[i].Found++
						exact, stretched, beyond := judgeWindows(f, p.Windows[j], p.Model.Feature(j).Weights, (1-explain.DefaultGamma)/2)
						if exact {
							rows[i].Exact++
						}
						if stretched {
							rows[i].Stretched++
						}
						if beyond {
							rows[i].Beyond++
						}
					}
				}
			}
			out = append(out, rows...)
		}
	}
	return out, nil
}

// judgeWindows reports whether the significant windows of f are exactly
// truth, whether one claims a timestep outside truth, and whether the
// claimed timesteps outside truth carry at most theta of the importance,
// the share of their weights' Σw² in the feature's (weights: a linear
// model's over every timestep, read from independent inputs of one
// variance, whose permutation importance over a region is proportional to
// the region's Σw²).
func judgeWindows(f tempora.FeatureResult, truth []tempora.Window, weights []float64, theta float64) (exact, stretched, beyond bool) {
	var got []tempora.Window
	var extra, total float64
	for _, w := range weights {
		total += w * w
	}
	for _, w := range f.Windows {
		if !w.Significant {
			continue
		}
		got = append(got, w.Window)
		for t := w.Window.Start; t <= w.Window.End; t++ {
			in := false
			for _, tw := range truth {
				in = in || tw.Contains(t)
			}
			if !in {
				stretched = true
				extra += weights[t] * weights[t]
			}
		}
	}
	exact = len(got) == len(truth)
	for i := 0; exact && i < len(got); i++ {
		exact = got[i] == truth[i]
	}
	return exact, stretched, stretched && extra <= theta*total
}

// writeWindowsSweepCSV writes rows as CSV with a header line.
func writeWindowsSweepCSV(w io.Writer, rows []windowsSweepRow) error {
	if _, err := io.WriteString(w, "true-windows,noise-weights,time-windows,seeds,found,exact,stretched,exact-window-rate,stretch-rate\n"); err != nil {
		return err
	}
	for _, r := range rows {
		_, err := fmt.Fprintf(w, "%d,%s,%d,%d,%d,%d,%d,%.4f,%.4f\n", r.TrueWindows, strconv.FormatFloat(r.NoiseScale, 'g', -1, 64), r.TIMEWindows,
			r.Seeds, r.Found, r.Exact, r.Stretched, r.ExactRate(), r.StretchRate())
		if err != nil {
			return err
		}
	}
	return nil
}

// sweepDir holds the committed sweep of the windows suite over the noise
// weights' scale: its CSV and figure.
const sweepDir = "../results/reference/windows/sweep"

// TestWindowsSweep runs windowsSweep (true windows 1 and 2; noise-weight
// scales 0, 0.02, 0.05 and 0.1; 20 seeds; TIME with one window and with up
// to three) and compares its CSV with the committed one
// (results/reference/windows/sweep/windows-sweep.csv; TIME is
// deterministic, so any change of its windows shows). With -update it
// rewrites the CSV and draws the figure windows-sweep.png and .svg beside
// it. It also checks issue 23's bars on the sweep: with noise weights of
// scale 0.05 and one true window, several windows stretch over a region
// that carries at most θ of the importance (one γ leaves out) for at most
// 2 of the 40 relevant features (1 in 20); with two true windows they
// recover at least 80% exactly at every scale up to 0.05.
func TestWindowsSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("320 explanations")
	}
	rows, err := windowsSweep(context.Background(), []int{1, 2}, []float64{0, 0.02, 0.05, 0.1}, 20)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeWindowsSweepCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	t.Logf("windows sweep:\n%s", buf.String())
	for _, r := range rows {
		if r.TIMEWindows != 3 {
			continue
		}
		if r.TrueWindows == 1 && r.NoiseScale == 0.05 && r.Beyond > 2 {
			t.Errorf("noise weights 0.05, one true window: several windows stretched over regions of at most θ of the importance for %d of %d features, want at most 2", r.Beyond, r.Found)
		}
		if r.TrueWindows == 2 && r.NoiseScale <= 0.05 && r.ExactRate() < 0.8 {
			t.Errorf("noise weights %v, two true windows: several windows recovered %d of %d exactly, want at least 80%%", r.NoiseScale, r.Exact, r.Found)
		}
	}
	path := filepath.Join(sweepDir, "windows-sweep.csv")
	if *update {
		if err := os.MkdirAll(sweepDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := drawwindowsSweep(filepath.Join(sweepDir, "windows-sweep"), rows); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("windows sweep differs from %s (rerun with -update if the change is intended)", path)
	}
}

// drawWindowsSweep draws the exact-window rate (left) and stretch rate
// (right) against the noise weights' scale, one row per number of true
// windows, one line per TIME configuration, to path.png and path.svg.
func drawwindowsSweep(path string, rows []windowsSweepRow) error {
	trueWindows := []int{}
	for _, r := range rows {
		if len(trueWindows) == 0 || trueWindows[len(trueWindows)-1] != r.TrueWindows {
			trueWindows = append(trueWindows, r.TrueWindows)
		}
	}
	colors := []color.RGBA{{R: 230, G: 120, B: 0, A: 255}, {R: 31, G: 89, B: 160, A: 255}}
	names := map[int]string{1: "TIME, one window", 3: "TIME, up to three"}
	metrics := []struct {
		title string
		value func(windowsSweepRow) float64
	}{{"exact-window rate", windowsSweepRow.ExactRate}, {"stretch rate", windowsSweepRow.StretchRate}}
	plots := make([][]*plot.Plot, len(trueWindows))
	for i, k := range trueWindows {
		for _, m := range metrics {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%s, %d true window(s)", m.title, k)
			p.X.Label.Text = "noise-weight scale"
			p.Y.Min, p.Y.Max = -0.03, 1.35 // room for the legend above the lines
			for c, tw := range []int{1, 3} {
				var xy plotter.XYs
				for _, r := range rows {
					if r.TrueWindows == k && r.TIMEWindows == tw {
						xy = append(xy, plotter.XY{X: r.NoiseScale, Y: m.value(r)})
					}
				}
				line, pts, err := plotter.NewLinePoints(xy)
				if err != nil {
					return err
				}
				line.Color, pts.Color = colors[c], colors[c]
				line.Width = vg.Points(1.5)
				p.Add(line, pts)
				p.Legend.Add(names[tw], line, pts)
			}
			p.Legend.Top, p.Legend.Left = true, true
			plots[i] = append(plots[i], p)
		}
	}
	w, h := 9*vg.Inch, vg.Length(len(trueWindows))*3*vg.Inch+0.4*vg.Inch
	title := "windows suite: TIME's windows against the noise weights' scale (20 seeds, 2 relevant features each)"
	drawAll := func(dc draw.Canvas) {
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 12), XAlign: draw.XCenter,
			YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
		dc.FillText(sty, vg.Point{X: w / 2, Y: h - 0.08*vg.Inch}, title)
		body := draw.Crop(dc, 0, 0, 0, -0.4*vg.Inch)
		tiles := draw.Tiles{Rows: len(plots), Cols: len(metrics), PadX: 0.3 * vg.Inch, PadY: 0.3 * vg.Inch,
			PadLeft: 0.1 * vg.Inch, PadRight: 0.1 * vg.Inch, PadBottom: 0.1 * vg.Inch}
		cv := plot.Align(plots, tiles, body)
		for i := range plots {
			for j, p := range plots[i] {
				p.Draw(cv[i][j])
			}
		}
	}
	png := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150), vgimg.UseBackgroundColor(color.White))
	drawAll(draw.New(png))
	if err := writeFigure(path+".png", func(f io.Writer) error { _, err := vgimg.PngCanvas{Canvas: png}.WriteTo(f); return err }); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	drawAll(draw.New(svg))
	return writeFigure(path+".svg", func(f io.Writer) error { _, err := svg.WriteTo(f); return err })
}

func writeFigure(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
