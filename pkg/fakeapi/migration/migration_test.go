package migration

import (
	"slices"
	"testing"
)

func TestStepLists(t *testing.T) {
	if got := len(Steps()); got != len(instantSteps)+len(FailableSteps()) ||
		!slices.Contains(FailableSteps(), DefaultFailureStep) {
		t.Fatal("step lists")
	}
}
