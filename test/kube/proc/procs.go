// Package proc reads what processes and the machine use, from /proc (CPU time, major faults,
// resident memory, a process's children by executable) and runs processes under a memory
// cgroup with a limit, as a pod has one: the measurements of test/bench and of the harness's
// operator processes (test/kube.Operator).
package proc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ChildPIDs returns the process ids of this process's children whose executable is named
// one of names (e.g. "kube-apiserver", "etcd": the control plane envtest started), by name.
// A name with no such child is absent.
func ChildPIDs(names ...string) map[string]int {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || !want[filepath.Base(exe)] {
			continue
		}
		if ppid, err := parentPID(pid); err == nil && ppid == self {
			out[filepath.Base(exe)] = pid
		}
	}
	return out
}

func parentPID(pid int) (int, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[1]) // field 4
}

// statFields returns the fields of /proc/<pid>/stat after the command name: f[0] is field 3.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	s := string(b)
	// The command name (field 2) is in parentheses and may contain spaces.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return nil, errors.New("unexpected /proc stat format")
	}
	return f, nil
}

// MachineCPU returns the machine's busy and total CPU time so far, from the first line of
// /proc/stat (busy: all but idle and iowait), summed over its cores.
func MachineCPU() (busy, total time.Duration, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, errors.New("unexpected /proc/stat format")
	}
	var sum, idle int64
	for i, v := range f[1:] {
		if i >= 8 { // guest times are already in user and nice
			break
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, errors.New("unexpected /proc/stat format")
		}
		sum += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	tick := time.Second / clockTick
	return time.Duration(sum-idle) * tick, time.Duration(sum) * tick, nil
}
