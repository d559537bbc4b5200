package clevercloud

import (
	"strconv"
	"strings"
)

// CompareVersions compares two dotted version strings ("8.0" < "8.4" < "17",
// "7.2.4" < "8.8.0") and returns -1, 0 or +1. Segments are compared
// numerically when both are numbers, otherwise as strings (a number sorts
// before a non-number); a missing segment counts as 0, so "8" == "8.0".
// Surrounding spaces and a leading "v" are ignored.
func CompareVersions(a, b string) int {
	as, bs := versionSegments(a), versionSegments(b)
	for i := 0; i < max(len(as), len(bs)); i++ {
		x, y := "0", "0"
		if i < len(as) {
			x = as[i]
		}
		if i < len(bs) {
			y = bs[i]
		}
		if c := compareSegment(x, y); c != 0 {
			return c
		}
	}
	return 0
}

func versionSegments(v string) []string {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V")
	if v == "" {
		return nil
	}
	return strings.Split(v, ".")
}

func compareSegment(x, y string) int {
	xn, xerr := strconv.ParseUint(x, 10, 64)
	yn, yerr := strconv.ParseUint(y, 10, 64)
	switch {
	case xerr == nil && yerr == nil:
		switch {
		case xn < yn:
			return -1
		case xn > yn:
			return 1
		}
		return 0
	case xerr == nil:
		return -1
	case yerr == nil:
		return 1
	}
	return strings.Compare(x, y)
}

// SameVersion: the API names versions by their leading parts ("8" for 8.19.9, "17" for 17.10).
func SameVersion(want, actual string) bool {
	return want == actual || strings.HasPrefix(actual, want+".") || CompareVersions(want, actual) == 0
}
