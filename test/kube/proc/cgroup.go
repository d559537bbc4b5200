package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A memory cgroup (cgroup v1 memory controller, as a kubelet on a v1 node sets up for a
// container's memory limit) that an operator process runs in, so that a memory limit can be
// tried the way a pod gets it: the kernel charges the process's anonymous memory and the page
// cache it reads (its executable) to the group, reclaims clean pages at the limit, and kills
// the process when it cannot.

// memoryCgroupRoot returns the directory of this process's own memory cgroup (v1), or an error
// saying why there is none to use.
func memoryCgroupRoot() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				dir := filepath.Join("/sys/fs/cgroup/memory", parts[2])
				if _, err := os.Stat(filepath.Join(dir, "memory.limit_in_bytes")); err != nil {
					return "", fmt.Errorf("no cgroup v1 memory controller here: %w", err)
				}
				return dir, nil
			}
		}
	}
	return "", errors.New("no cgroup v1 memory controller here")
}

// MemoryCgroup is a memory cgroup with a limit.
type MemoryCgroup struct {
	Dir   string
	Limit int64
}

// NewMemoryCgroup creates (or reuses) the child group name of this process's memory cgroup
// with the given limit (memory and memory+swap), and an empty charge history.
func NewMemoryCgroup(name string, limit int64) (*MemoryCgroup, error) {
	root, err := memoryCgroupRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return nil, err
	}
	v := strconv.FormatInt(limit, 10)
	// memsw must stay ≥ memory: raise memory first when growing, memsw first when shrinking.
	write := func(f, v string) error { return os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644) }
	_ = write("memory.memsw.limit_in_bytes", "-1")
	if err := write("memory.limit_in_bytes", v); err != nil {
		return nil, fmt.Errorf("setting the memory limit: %w", err)
	}
	_ = write("memory.memsw.limit_in_bytes", v) // no swap beyond the limit, where accounted
	_ = write("memory.max_usage_in_bytes", "0")
	_ = write("memory.failcnt", "0")
	return &MemoryCgroup{Dir: dir, Limit: limit}, nil
}

// Wrap returns the command line that runs argv inside the group (a shell moves itself in,
// then execs argv: every page the process touches is charged to the group).
func (g *MemoryCgroup) Wrap(argv []string) []string {
	return append([]string{"/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(g.Dir, "cgroup.procs")}, argv...)
}

// CgroupStats is what the kernel reports about a memory cgroup.
type CgroupStats struct {
	// PeakMiB is memory.max_usage_in_bytes: the highest charge (anonymous + page cache).
	PeakMiB float64 `json:"peakMiB"`
	// UsageMiB is memory.usage_in_bytes now.
	UsageMiB float64 `json:"usageMiB"`
	// LimitHits is memory.failcnt: how many times a charge hit the limit (and reclaim ran).
	LimitHits int64 `json:"limitHits"`
	// OOMKills is oom_kill of memory.oom_control.
	OOMKills int64 `json:"oomKills"`
	// RSSMiB, CacheMiB: anonymous memory and page cache charged now (memory.stat).
	RSSMiB   float64 `json:"rssMiB"`
	CacheMiB float64 `json:"cacheMiB"`
	// MajorFaults: pages read back from the executable after reclaim (memory.stat pgmajfault).
	MajorFaults int64 `json:"majorFaults"`
}

// Stats reads the group's counters.
func (g *MemoryCgroup) Stats() (CgroupStats, error) {
	var s CgroupStats
	num := func(f string) int64 {
		b, err := os.ReadFile(filepath.Join(g.Dir, f))
		if err != nil {
			return 0
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n
	}
	s.PeakMiB = float64(num("memory.max_usage_in_bytes")) / (1 << 20)
	s.UsageMiB = float64(num("memory.usage_in_bytes")) / (1 << 20)
	s.LimitHits = num("memory.failcnt")
	for _, kv := range [][2]string{{"memory.oom_control", "oom_kill"}} {
		b, err := os.ReadFile(filepath.Join(g.Dir, kv[0]))
		if err != nil {
			return s, err
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == kv[1] {
				s.OOMKills, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(g.Dir, "memory.stat"))
	if err != nil {
		return s, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "rss":
			s.RSSMiB = float64(n) / (1 << 20)
		case "cache":
			s.CacheMiB = float64(n) / (1 << 20)
		case "pgmajfault":
			s.MajorFaults = n
		}
	}
	return s, nil
}

// Remove deletes the group (it must hold no process).
func (g *MemoryCgroup) Remove() error { return os.Remove(g.Dir) }

// DropFromPageCache asks the kernel to forget the cached pages of a file (it must not be
// mapped by a running process), so that the next process to run it reads it again and the
// pages are charged to that process's memory cgroup, as when a container starts from its image.
func DropFromPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
