package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
	pts = slices.Clone(pts)
	slices.SortFunc(pts, func(a, b ChartPoint) int { return a.N - b.N })
	op := make(plotter.XYs, len(pts))
	fl := make(plotter.XYs, len(pts))
	var job plotter.XYs
	var notes []string
	noted := map[string][]string{} // note → the sizes it is about
	for i, c := range pts {
		op[i] = plotter.XY{X: float64(c.N), Y: c.OperatorSeconds}
		fl[i] = plotter.XY{X: float64(c.N), Y: c.FloorSeconds}
		if c.JobFloorSeconds > 0 {
			job = append(job, plotter.XY{X: float64(c.N), Y: c.JobFloorSeconds})
		}
		if c.Note != "" {
			if noted[c.Note] == nil {
				notes = append(notes, c.Note)
			}
			noted[c.Note] = append(noted[c.Note], fmt.Sprint(c.N))
		}
	}
	for _, n := range notes {
		p.Title.Text += fmt.Sprintf("; N=%s with %s", strings.Join(noted[n], " and "), strings.TrimPrefix(n, "P6: "))
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
	if len(job) > 0 {
		if err := add("job floor (the resource, one status write, the credentials Secret)", job, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, draw.TriangleGlyph{}); err != nil {
			return err
		}
	}
	p.Y.Min = 0
	p.X.Min = 0
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
