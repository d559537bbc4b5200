package migrations

import (
	"testing"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

func TestChoose(t *testing.T) {
	addon := &clevercloud.Addon{ID: "addon_1", Region: "par", Plan: clevercloud.Plan{ID: "plan_s"}}
	failed := &State{Status: clevercloud.MigrationFailed, Generation: 4, Target: "plan plan_m, region par, version 17"}
	cases := []struct {
		name    string
		version string // as the add-on runs
		want    Target
		last    *State
		paused  bool
		choice  Choice
		target  string
	}{
		{"all equal", "17", Target{"plan_s", "par", "17"}, nil, false, None, ""},
		{"region case differs only", "17", Target{"plan_s", "PAR", "17"}, nil, false, None, ""},
		{"no version asked keeps the current one", "17", Target{"plan_s", "par", ""}, nil, false, None, ""},
		{"a leading version part is the same version", "8.19.9", Target{"plan_s", "par", "8"}, nil, false, None, ""},
		{"new plan", "17", Target{"plan_m", "par", "17"}, nil, false, Start, "plan plan_m, region par, version 17"},
		{"new region", "17", Target{"plan_s", "rbx", ""}, nil, false, Start, "plan plan_s, region rbx, version 17"},
		{"new version", "15", Target{"plan_s", "par", "17"}, nil, false, Start, "plan plan_s, region par, version 17"},
		{"same target failed for this generation: no retry loop", "17", Target{"plan_m", "par", "17"}, failed, false, Failed, ""},
		{"same target, new generation: tried again", "17", Target{"plan_m", "par", "17"}, &State{Generation: 3, Target: failed.Target}, false, Start, failed.Target},
		{"paused: waits", "17", Target{"plan_m", "par", "17"}, nil, true, Paused, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			choice, target := Choose(addon, c.version, c.want, c.last, 4, c.paused)
			if choice != c.choice {
				t.Fatalf("choice %d, want %d", choice, c.choice)
			}
			if c.target != "" && target.String() != c.target {
				t.Fatalf("target %q, want %q", target, c.target)
			}
		})
	}
}
