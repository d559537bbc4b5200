package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotChart draws time-to-Ready against N for the operator and the floor.
func plotChart(path string, pts []ChartPoint, m Machine) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Time from apply to all Ready (%d cores, %s)", m.Cores, m.GoVersion)
	p.X.Label.Text = "resources applied at once (N, over 14 kinds)"
	p.Y.Label.Text = "seconds"
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	op := make(plotter.XYs, len(pts))
	fl := make(plotter.XYs, len(pts))
	for i, c := range pts {
		op[i] = plotter.XY{X: float64(c.N), Y: c.OperatorSeconds}
		fl[i] = plotter.XY{X: float64(c.N), Y: c.FloorSeconds}
	}
	add := func(name string, xy plotter.XYs, col color.Color, shape draw.GlyphDrawer) error {
		l, s, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		l.Color, l.Width = col, vg.Points(2)
		s.Color, s.Shape = col, shape
		p.Add(l, s)
		p.Legend.Add(name, l, s)
		return nil
	}
	if err := add("operator", op, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, draw.CircleGlyph{}); err != nil {
		return err
	}
	if err := add("floor (plain client, same objects)", fl, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, draw.SquareGlyph{}); err != nil {
		return err
	}
	p.Y.Min = 0
	p.X.Min = 0
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
