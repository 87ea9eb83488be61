package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

func init() {
	// A sans face reads better at small sizes; its outlines are drawn, so
	// the viewer needs no font either way.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}

// line is one named series of a chart.
type line struct {
	name string
	pts  []point
}

// chart describes one line plot.
type chart struct {
	file, title    string
	notes          []string // lines under the title
	xLabel, yLabel string
	logX, logY     bool
	lines          []line
}

const plotWidth, plotHeight = 7 * vg.Inch, 4 * vg.Inch

// drawChart draws c into dir with stamp (machine and date) under the
// title: a line through the medians of each series, markers of a distinct
// shape and a distinct dash pattern per series, min..max error bars, and
// the legend below the plot (never over a line). A series whose medians
// equal an earlier one's at every x is named so in the legend (the two
// lines are drawn over each other). It returns the series that had no
// data.
func drawChart(dir string, c chart, stamp string) ([]string, error) {
	p := plot.New()
	p.Title.Text = strings.Join(append(append([]string{c.title}, c.notes...), stamp), "\n")
	p.X.Label.Text, p.Y.Label.Text = c.xLabel, c.yLabel
	if c.logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicker{}
	}
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	var missing []string
	var drawn []line
	for i, l := range c.lines {
		if len(l.pts) == 0 {
			missing = append(missing, l.name)
			continue
		}
		name := l.name
		if j := coincident(l, drawn); j >= 0 {
			name += fmt.Sprintf(" [same values as %q: drawn over it]", shortName(drawn[j].name))
		}
		col := plotutil.Color(i)
		meds := medians(l.pts)
		ln, err := plotter.NewLine(meds)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Dashes, ln.Width = col, plotutil.Dashes(i), vg.Points(1.2)
		sc, err := plotter.NewScatter(meds)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = col, plotutil.Shape(i), vg.Points(3+1.5*float64(len(drawn)))
		eb, err := plotter.NewYErrorBars(spread{meds, errs(l.pts)})
		if err != nil {
			return nil, err
		}
		eb.Color, eb.Width = col, vg.Points(1)
		p.Add(ln, sc, eb)
		leg.Add(name, ln, sc)
		drawn = append(drawn, l)
	}
	if len(drawn) == 0 {
		return missing, nil
	}
	if c.logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicker{}
		p.Y.Min, p.Y.Max = p.Y.Min/1.25, p.Y.Max*1.25
	} else {
		p.Y.Min, p.Y.Max = 0, p.Y.Max*1.1
		p.Y.Tick.Marker = plot.TickerFunc(linearTicks)
	}
	if c.logX {
		p.X.Min, p.X.Max = p.X.Min/1.3, p.X.Max*1.3
	} else {
		p.X.Min, p.X.Max = 0, p.X.Max*1.05
		p.X.Tick.Marker = plot.TickerFunc(linearTicks)
	}
	return missing, save(dir+"/"+c.file, p, &leg, len(drawn))
}

// bars draws one bar per label at the median with min..max error bars.
func bars(path, title string, notes []string, yl, stamp string, labels []string, pts []point) error {
	p := plot.New()
	p.Title.Text = strings.Join(append(append([]string{title}, notes...), stamp), "\n")
	p.Y.Label.Text = yl
	meds := medians(pts)
	vals := make(plotter.Values, len(meds))
	for i := range meds {
		vals[i] = meds[i].Y
		meds[i].X = float64(i)
	}
	b, err := plotter.NewBarChart(vals, vg.Points(28))
	if err != nil {
		return err
	}
	b.Color = color.RGBA{R: 60, G: 110, B: 180, A: 255}
	eb, err := plotter.NewYErrorBars(spread{meds, errs(pts)})
	if err != nil {
		return err
	}
	eb.Width = vg.Points(1)
	p.Add(b, eb)
	p.NominalX(labels...)
	// Half a bar's slot of room at either end: the first and last bars'
	// outlines would otherwise touch the canvas edge (TestPlotsRender).
	p.X.Min, p.X.Max = -0.75, float64(len(labels))-0.25
	p.Y.Min, p.Y.Max = 0, p.Y.Max*1.1
	p.Y.Tick.Marker = plot.TickerFunc(linearTicks)
	return save(path, p, nil, 0)
}

// save draws p (and leg, if any, with its n entries in a band below it) on
// a white canvas with text as outlines, and writes the SVG to path.
func save(path string, p *plot.Plot, leg *plot.Legend, n int) error {
	var legH vg.Length
	if leg != nil {
		leg.Padding = vg.Points(2)
		h := leg.TextStyle.FontExtents().Height
		legH = vg.Length(n)*(h+leg.Padding) + vg.Points(12)
	}
	c := &pathCanvas{Canvas: vgsvg.New(plotWidth, plotHeight+legH)}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(draw.Crop(dc, 0, 0, legH, 0))
	if leg != nil {
		band := draw.Crop(dc, vg.Points(12), -vg.Points(12), vg.Points(6), -(plotHeight + vg.Points(4)))
		leg.Draw(band)
	}
	if c.err != nil {
		return fmt.Errorf("%s: %w", path, c.err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// spread is the medians with their error bars, for plotter.NewYErrorBars.
type spread struct {
	plotter.XYs
	plotter.YErrors
}

func medians(ps []point) plotter.XYs {
	out := make(plotter.XYs, len(ps))
	for i, p := range ps {
		out[i] = plotter.XY{X: p.x, Y: p.med}
	}
	return out
}

func errs(ps []point) plotter.YErrors {
	out := make(plotter.YErrors, len(ps))
	for i, p := range ps {
		out[i].Low, out[i].High = p.med-p.min, p.max-p.med
	}
	return out
}

// coincident returns the index in drawn of a series whose medians are
// within 1% of l's at the very same xs, or -1.
func coincident(l line, drawn []line) int {
	for j, d := range drawn {
		if len(d.pts) != len(l.pts) {
			continue
		}
		same := true
		for i, p := range l.pts {
			q := d.pts[i]
			if p.x != q.x || math.Abs(p.med-q.med) > 0.01*math.Max(math.Abs(p.med), math.Abs(q.med)) {
				same = false
				break
			}
		}
		if same {
			return j
		}
	}
	return -1
}

// shortName is a series name without its parenthesised benchmark name.
func shortName(s string) string {
	if i := strings.Index(s, " ("); i > 0 {
		return s[:i]
	}
	return s
}

// logTicker labels a log axis with at least four ticks where it can: the
// powers of ten, or 1 and 3, or 1, 2 and 5, or 1, 1.5, 2, 3, 5 and 7 times
// them, whichever first gives four labels in range (the other mantissas of
// 1, 1.5, 2..9 as unlabelled ticks); on a range narrower than that,
// linear ticks.
type logTicker struct{}

// Ticks implements plot.Ticker.
func (logTicker) Ticks(min, max float64) []plot.Tick {
	for _, labelled := range [][]float64{{1}, {1, 3}, {1, 2, 5}, {1, 1.5, 2, 3, 5, 7}} {
		var ticks []plot.Tick
		n := 0
		for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
			for _, m := range []float64{1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9} {
				v := m * math.Pow(10, e)
				if v < min*(1-1e-9) || v > max*(1+1e-9) {
					continue
				}
				t := plot.Tick{Value: v}
				for _, l := range labelled {
					if m == l {
						t.Label = number(v)
						n++
					}
				}
				ticks = append(ticks, t)
			}
		}
		if n >= 4 {
			return ticks
		}
	}
	return linearTicks(min, max)
}

// linearTicks labels a linear axis every step of 1, 2, 2.5 or 5 times a
// power of ten, the largest step giving at least five labels in range,
// with an unlabelled tick halfway between labels.
func linearTicks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: number(min)}}
	}
	step := math.Pow(10, math.Ceil(math.Log10(max-min)))
	for k := 0; k < 64; k++ {
		next := step / []float64{2, 2, 2.5, 2}[k%4] // 10 -> 5 -> 2.5 -> 1 -> 0.5 ...
		if math.Floor(max/step)-math.Ceil(min/step)+1 >= 5 {
			break
		}
		step = next
	}
	var ticks []plot.Tick
	for i := math.Ceil(min / step * 2); i <= math.Floor(max/step*2); i++ {
		v := i * step / 2
		t := plot.Tick{Value: v}
		if int64(i)%2 == 0 {
			t.Label = number(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// number formats a tick value briefly: 30k, 1M, 0.25, 1500.
func number(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6 && math.Mod(a, 1e5) == 0:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e4 && math.Mod(a, 100) == 0:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
