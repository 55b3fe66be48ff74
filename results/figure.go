package results

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tempora-dev/tempora/internal/atomicfile"
)

// DPI is the resolution of PNG figures in dots per inch.
const DPI = 150

// Figure is a drawing of fixed size that can be encoded as PNG or SVG.
type Figure struct {
	// Width and Height are the size of the figure.
	Width, Height vg.Length
	draw          func(c draw.Canvas)
}

// Formats lists the image formats Figure can encode.
var Formats = []string{"png", "svg"}

// Encode writes the figure to w in format "png" or "svg".
func (f *Figure) Encode(w io.Writer, format string) error {
	switch format {
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
		f.draw(draw.New(c))
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	case "svg":
		c := vgsvg.New(f.Width, f.Height)
		dc := draw.New(c)
		// A white background, so the figure reads the same on dark pages.
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		f.draw(dc)
		_, err := c.WriteTo(w)
		return err
	}
	return fmt.Errorf("results: unknown figure format %q (want png or svg)", format)
}

// Save writes the figure to path atomically, in the format named by the
// path's extension (.png or .svg).
func (f *Figure) Save(path string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format != "png" && format != "svg" {
		return fmt.Errorf("results: %s: unknown figure format %q (want .png or .svg)", path, format)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return f.Encode(w, format) })
}

// caption writes s in the plot's default font, size points high, centred
// horizontally on c with its top at height y.
func caption(c draw.Canvas, s string, size, y vg.Length) {
	sty := text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, size),
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
	c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: y}, s)
}
