package harness

import (
	"os/exec"
	"testing"
)

func TestChildPIDsFindsAChildByExecutableName(t *testing.T) {
	path, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	got := ChildPIDs("sleep", "no-such-executable")
	if got["sleep"] != cmd.Process.Pid {
		t.Fatalf("sleep: pid %d, want %d (%v)", got["sleep"], cmd.Process.Pid, got)
	}
	if _, ok := got["no-such-executable"]; ok || len(got) != 1 {
		t.Fatalf("unexpected entries: %v", got)
	}
}

func TestMachineCPU(t *testing.T) {
	busy, total, err := MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	if total <= 0 || busy <= 0 || busy > total {
		t.Fatalf("busy %s of %s", busy, total)
	}
}
