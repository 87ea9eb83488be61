package main

import (
	"fmt"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// pathCanvas is an SVG canvas that draws text as filled glyph outlines
// instead of <text> elements. gonum lays text out with the metrics of the
// font it embeds (Liberation); a <text> element names that font, and a
// viewer without it substitutes one with other metrics, so titles, legends
// and the last tick ran past the canvas. Outlines look the same
// everywhere and need no font at all.
type pathCanvas struct {
	*vgsvg.Canvas
	err error // the first glyph that could not be drawn
}

// FillString draws str at pt (the left end of its baseline) in face f, as
// one filled path of the glyphs' outlines, advancing and kerning exactly as
// font.Face.Width measures (so gonum's layout holds).
func (c *pathCanvas) FillString(f font.Face, pt vg.Point, str string) {
	p, err := glyphPath(f, pt, str)
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		return
	}
	c.Fill(p)
}

// glyphPath returns the outlines of str in face f with its baseline's left
// end at pt. A rune the font has no glyph for is an error (it would draw
// the .notdef box).
func glyphPath(f font.Face, pt vg.Point, str string) (vg.Path, error) {
	var (
		buf   sfnt.Buffer
		ppem  = fixed.Int26_6(f.Face.UnitsPerEm())
		scale = f.Font.Size / vg.Points(float64(ppem))
		path  vg.Path
		x     fixed.Int26_6
		prev  sfnt.GlyphIndex
	)
	at := func(p fixed.Point26_6) vg.Point {
		// sfnt's y grows downwards; vg's upwards.
		return vg.Point{X: pt.X + vg.Points(float64(x+p.X))*scale, Y: pt.Y - vg.Points(float64(p.Y))*scale}
	}
	for i, r := range str {
		idx, err := f.Face.GlyphIndex(&buf, r)
		if err != nil {
			return nil, fmt.Errorf("glyph of %q in %q: %w", r, str, err)
		}
		if idx == 0 {
			return nil, fmt.Errorf("font %s has no glyph for %q (in %q)", f.Name(), r, str)
		}
		if i > 0 {
			if k, err := f.Face.Kern(&buf, prev, idx, ppem, 0); err == nil {
				x += k
			}
		}
		segs, err := f.Face.LoadGlyph(&buf, idx, ppem, nil)
		if err != nil {
			return nil, fmt.Errorf("outline of %q in %q: %w", r, str, err)
		}
		open := false
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if open {
					path.Close()
				}
				path.Move(at(s.Args[0]))
				open = true
			case sfnt.SegmentOpLineTo:
				path.Line(at(s.Args[0]))
			case sfnt.SegmentOpQuadTo:
				path.QuadTo(at(s.Args[0]), at(s.Args[1]))
			case sfnt.SegmentOpCubeTo:
				path.CubeTo(at(s.Args[0]), at(s.Args[1]), at(s.Args[2]))
			}
		}
		if open {
			path.Close()
		}
		adv, err := f.Face.GlyphAdvance(&buf, idx, ppem, 0)
		if err != nil {
			return nil, fmt.Errorf("advance of %q in %q: %w", r, str, err)
		}
		x += adv
		prev = idx
	}
	return path, nil
}
