package operator

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// MemoryLimitRatio is the share of the container's memory limit the Go runtime is asked to
// stay under (its soft memory limit, GOMEMLIMIT) when GOMEMLIMIT is not set. The rest is for
// what Go does not count: the executable's pages (about 40 MiB resident, clean: the kernel
// drops and reads them again under pressure rather than kill) and the kernel's own charges.
const MemoryLimitRatio = 0.8

// CgroupMemoryLimit returns the memory limit of the cgroup this process runs in (cgroup v2
// memory.max or v1 memory.limit_in_bytes, under root, normally /sys/fs/cgroup), the smallest
// of its own group's and the root's; ok is false when there is none (no limit, or no cgroup
// file readable).
func CgroupMemoryLimit(root, procSelfCgroup string) (limit int64, ok bool) {
	var candidates []string
	if f, err := os.Open(procSelfCgroup); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), ":", 3)
			if len(parts) != 3 {
				continue
			}
			switch {
			case parts[0] == "0" && parts[1] == "":
				candidates = append(candidates, filepath.Join(root, parts[2], "memory.max"))
			case hasController(parts[1], "memory"):
				candidates = append(candidates, filepath.Join(root, "memory", parts[2], "memory.limit_in_bytes"))
			}
		}
		_ = f.Close()
	}
	// In a container the group is usually mounted as the root of the hierarchy.
	candidates = append(candidates, filepath.Join(root, "memory.max"), filepath.Join(root, "memory", "memory.limit_in_bytes"))
	for _, p := range candidates {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		// "max" (v2) or a page-rounded MaxInt64 (v1) is no limit.
		if err != nil || v <= 0 || v >= 1<<62 {
			continue
		}
		if !ok || v < limit {
			limit, ok = v, true
		}
	}
	return limit, ok
}

func hasController(list, c string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == c {
			return true
		}
	}
	return false
}

// SetMemoryLimitFromCgroup sets the Go runtime's soft memory limit to MemoryLimitRatio of the
// cgroup's limit, unless GOMEMLIMIT is set or there is no limit. It returns the limit set (0:
// none).
func SetMemoryLimitFromCgroup() int64 {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return 0
	}
	limit, ok := CgroupMemoryLimit("/sys/fs/cgroup", "/proc/self/cgroup")
	if !ok {
		return 0
	}
	soft := int64(float64(limit) * MemoryLimitRatio)
	debug.SetMemoryLimit(soft)
	return soft
}
