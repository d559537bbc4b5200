package proc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times (100 on every Linux platform Go
// supports).
const clockTick = 100

// ProcessCPUTime reads utime+stime of pid from /proc/<pid>/stat.
func ProcessCPUTime(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unexpected /proc stat format")
	}
	return time.Duration(ut+st) * time.Second / clockTick, nil
}

// ProcessMajorFaults reads majflt of pid from /proc/<pid>/stat.
func ProcessMajorFaults(pid int) (int64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// f[0] is field 3 (state); majflt is field 12.
	n, err := strconv.ParseInt(f[9], 10, 64)
	if err != nil {
		return 0, errors.New("unexpected /proc stat format")
	}
	return n, nil
}

// ProcessMemory reads VmRSS and VmHWM of pid from /proc/<pid>/status, in bytes.
func ProcessMemory(pid int) (rss, peak int64, err error) {
	m, err := ProcessMemoryDetail(pid)
	return m.RSS, m.Peak, err
}

// MemoryDetail is a process's memory from /proc/<pid>/status, in bytes: resident set now and
// at its peak, and the resident set split into anonymous memory (heap, stacks: what a cgroup
// memory limit must hold) and file-backed pages (the mapped executable: clean pages the
// kernel can drop and read again under a limit).
type MemoryDetail struct {
	RSS, Peak, Anon, File int64
}

// ProcessMemoryDetail reads MemoryDetail of pid.
func ProcessMemoryDetail(pid int) (MemoryDetail, error) {
	var m MemoryDetail
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.RSS = n * 1024
		case "VmHWM":
			m.Peak = n * 1024
		case "RssAnon":
			m.Anon = n * 1024
		case "RssFile":
			m.File = n * 1024
		}
	}
	return m, nil
}
