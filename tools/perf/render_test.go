package main

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/srwiley/oksvg"
	"github.com/srwiley/rasterx"
)

var pngDir = flag.String("png", "", "also write each rasterised SVG of docs/perf as a PNG into this directory (to look at)")

// svgDir is where scripts/perf.sh writes the plots.
var svgDir = flag.String("svgdir", "../../docs/perf", "the directory of the SVGs TestPlotsRender checks")

// TestPlotsRender rasterises every SVG in docs/perf with a pure-Go
// renderer and checks what a reader without any particular font would see
// (checkSVG): no <text> elements (each renders in the viewer's fonts, whose
// metrics gonum did not lay out for: the titles, legends and last ticks
// were cut off), nothing drawn outside the canvas, and ink in the title,
// axis-label and tick bands.
func TestPlotsRender(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(*svgDir, "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 7 {
		t.Fatalf("%d SVGs in %s, want the 7 plots of docs/perf.md", len(files), *svgDir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			svg, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			img, problems := checkSVG(svg)
			for _, p := range problems {
				t.Error(p)
			}
			if *pngDir != "" && img != nil {
				writePNG(t, filepath.Join(*pngDir, strings.TrimSuffix(filepath.Base(f), ".svg")+".png"), img)
			}
		})
	}
}

// TestCheckSVGCatches pins that checkSVG fails what it is for: the plots as
// they were (text elements naming Liberation Serif), a path past the
// canvas edge, and a plot drawn by this tool whose title is too long for
// the canvas; and passes a plot of the same data with a title that fits.
func TestCheckSVGCatches(t *testing.T) {
	pts := []point{{x: 10, min: 1, med: 2, max: 3, runs: 3}, {x: 100, min: 2, med: 3, max: 4, runs: 3}, {x: 1000, min: 3, med: 4, max: 5, runs: 3}, {x: 10000, min: 4, med: 5, max: 6, runs: 3}}
	drawn := func(title string) []byte {
		dir := t.TempDir()
		c := chart{file: "x.svg", title: title, xLabel: "x", yLabel: "y", logX: true, logY: true, lines: []line{{"a", pts}, {"b", pts}}}
		if _, err := drawChart(dir, c, "machine, date"); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "x.svg"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		svg  []byte
		want string // a substring of some problem; "" for none
	}{
		{"the old plots' <text> elements", read("text-elements.svg"), "<text>"},
		{"a path past the right edge", read("overflow.svg"), "outside the canvas"},
		{"a title too long for the canvas", drawn(strings.Repeat("a title far too long for a seven-inch plot ", 5)), "outside the canvas"},
		{"a title that fits", drawn("a title that fits"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := checkSVG(tc.svg)
			joined := strings.Join(problems, "\n")
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Fatalf("problems in a good plot:\n%s", joined)
			case tc.want != "" && !strings.Contains(joined, tc.want):
				t.Fatalf("problems %q, want one mentioning %q", problems, tc.want)
			}
		})
	}
}

var textElement = regexp.MustCompile(`<text[\s>]`)

// margin is the border, in pixels, around the canvas that the check
// renders into: anything drawn there lies outside the SVG's viewBox.
const margin = 40

// checkSVG rasterises svg (oksvg, 1 px per unit of its viewBox) on a
// transparent image with a margin all round and returns the canvas part
// and every problem found:
//   - a <text> element: it renders in whatever font the viewer has;
//   - an element oksvg cannot draw (strict mode);
//   - any ink in the margin: drawn outside the canvas, so cut off;
//   - no dark ink in the top band (the title), the left band (the y label
//     and ticks) or the bottom band (the x label, ticks and legend).
func checkSVG(svg []byte) (image.Image, []string) {
	var problems []string
	if n := len(textElement.FindAllIndex(svg, -1)); n > 0 {
		problems = append(problems, fmt.Sprintf("%d <text> elements: text must be drawn as outlines (a <text> renders in the viewer's fonts, and gonum laid it out for Liberation's metrics)", n))
	}
	icon, err := oksvg.ReadIconStream(bytes.NewReader(svg), oksvg.StrictErrorMode)
	if err != nil {
		return nil, append(problems, fmt.Sprintf("oksvg cannot read it: %v", err))
	}
	w, h := int(icon.ViewBox.W+0.5), int(icon.ViewBox.H+0.5)
	if w <= 0 || h <= 0 {
		return nil, append(problems, fmt.Sprintf("empty viewBox %+v", icon.ViewBox))
	}
	full := image.NewRGBA(image.Rect(0, 0, w+2*margin, h+2*margin))
	icon.SetTarget(margin, margin, float64(w), float64(h))
	scanner := rasterx.NewScannerGV(full.Bounds().Dx(), full.Bounds().Dy(), full, full.Bounds())
	icon.Draw(rasterx.NewDasher(full.Bounds().Dx(), full.Bounds().Dy(), scanner), 1)

	canvas := image.Rect(margin, margin, margin+w, margin+h)
	if out := inkOutside(full, canvas); !out.Empty() {
		problems = append(problems, fmt.Sprintf("ink outside the canvas (%dx%d) in %v (in canvas coordinates): something is cut off", w, h, out.Sub(canvas.Min)))
	}
	sub := full.SubImage(canvas)
	for _, band := range []struct {
		name string
		r    image.Rectangle
	}{
		{"top (title)", image.Rect(0, 0, w, h/12)},
		{"left (y label and ticks)", image.Rect(0, 0, w/12, h)},
		{"bottom (x label, ticks, legend)", image.Rect(0, h-h/6, w, h)},
	} {
		if dark(sub, band.r.Add(canvas.Min)) == 0 {
			problems = append(problems, fmt.Sprintf("no text drawn in the %s band %v", band.name, band.r))
		}
	}
	return sub, problems
}

// inkOutside returns the bounding box of every non-transparent pixel of img
// outside inner.
func inkOutside(img *image.RGBA, inner image.Rectangle) image.Rectangle {
	var box image.Rectangle
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if (image.Point{x, y}).In(inner) || img.RGBAAt(x, y).A == 0 {
				continue
			}
			box = box.Union(image.Rect(x, y, x+1, y+1))
		}
	}
	return box
}

// dark counts the pixels of img in r darker than mid grey (text is drawn
// black on white).
func dark(img image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if c := color.GrayModel.Convert(img.At(x, y)).(color.Gray); c.Y < 128 && alpha(img.At(x, y)) > 0 {
				n++
			}
		}
	}
	return n
}

func alpha(c color.Color) uint32 { _, _, _, a := c.RGBA(); return a }

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// TestTicks pins that both tickers label at least four values on the
// ranges the plots have (a decade and less on a log axis: filtered-scan
// had one labelled tick), in order and within the range.
func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		min, max float64
		log      bool
	}{
		{"log, a decade", 13, 140, true},
		{"log, less than a decade", 30, 90, true},
		{"log, five decades", 1e3, 1e8, true},
		{"log, a factor 1.2", 100, 120, true},
		{"linear, 0..50", 0, 50, false},
		{"linear, 0..0.44", 0, 0.44, false},
		{"linear, 0..97", 0, 97, false},
		{"linear, 3..7", 3, 7, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ticks := linearTicks(tc.min, tc.max)
			if tc.log {
				ticks = logTicker{}.Ticks(tc.min, tc.max)
			}
			var labels []string
			prev := math.Inf(-1)
			for _, k := range ticks {
				if k.Value < tc.min*(1-1e-9) || k.Value > tc.max*(1+1e-9) || k.Value <= prev {
					t.Fatalf("tick %v out of range or order in %v", k.Value, ticks)
				}
				prev = k.Value
				if k.Label != "" {
					labels = append(labels, k.Label)
				}
			}
			if len(labels) < 4 {
				t.Fatalf("labels %q, want at least 4", labels)
			}
		})
	}
}
