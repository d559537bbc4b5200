package proc

import (
	"os"
	"os/exec"
	"syscall"
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

// TestProcessMajorFaults reads this process's own count and checks it against getrusage's,
// read before and after (a wrong field of /proc/<pid>/stat, such as the minor faults, falls
// outside).
func TestProcessMajorFaults(t *testing.T) {
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		t.Fatal(err)
	}
	got, err := ProcessMajorFaults(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		t.Fatal(err)
	}
	if got < before.Majflt || got > after.Majflt {
		t.Fatalf("ProcessMajorFaults = %d; getrusage says %d before and %d after", got, before.Majflt, after.Majflt)
	}
	if _, err := ProcessMajorFaults(1 << 30); err == nil {
		t.Fatal("no such process: want an error")
	}
}
