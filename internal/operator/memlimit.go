package operator

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
)

// MemoryLimitRatio is the share of the container's memory limit the Go runtime is asked to
// stay under (its soft memory limit, GOMEMLIMIT) when GOMEMLIMIT is not set. The rest is for
// what Go does not count: the executable's pages (about 50 MiB resident with room, clean: the
// kernel drops and reads them again under pressure rather than kill) and the kernel's own
// charges.
const MemoryLimitRatio = 0.8

// CodeReserve is what the soft memory limit leaves at least, under small limits, for the
// executable's pages that are in use (read page by page under such limits:
// ReadCodePageByPage). Under the Rust chart's 64M a small install runs in about 26 MiB of
// page cache for its code; with 100 resources the Go heap grew to take that room (37 MiB at
// a soft limit of 49 MiB) and the process thrashed on its code (43 of 100 Ready in 2
// minutes); kept 32 MiB below the limit, all 100 were Ready in 26 s, for more GC work
// (docs/performance.md, P5 small).
const CodeReserve = 32 << 20

// minSoftLimit is the lowest soft memory limit the code reserve lowers it to: below it the Go
// collector would run continuously for the live heap of even a small install.
const minSoftLimit = 16 << 20

// SoftMemoryLimit is the Go soft memory limit for a container memory limit: MemoryLimitRatio
// of it, or less when that would leave under CodeReserve for the code, but the reserve never
// takes it under 16 MiB (nor above MemoryLimitRatio of the limit, for a limit under 20 MiB).
func SoftMemoryLimit(limit int64) int64 {
	soft := int64(float64(limit) * MemoryLimitRatio)
	if r := limit - CodeReserve; r < soft {
		soft = max(r, min(minSoftLimit, soft))
	}
	return soft
}

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

// ContainerMemoryLimit is CgroupMemoryLimit of this process (under /sys/fs/cgroup).
func ContainerMemoryLimit() (int64, bool) {
	return CgroupMemoryLimit("/sys/fs/cgroup", "/proc/self/cgroup")
}

// SetMemoryLimitFrom sets the Go runtime's soft memory limit from the container's memory limit
// (SoftMemoryLimit), unless GOMEMLIMIT is set. It returns the soft limit set (0: none).
func SetMemoryLimitFrom(limit int64) int64 {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return 0
	}
	soft := SoftMemoryLimit(limit)
	debug.SetMemoryLimit(soft)
	return soft
}

// gcPercent is the operator's default GOGC. Its live heap is small (tens of MiB, mostly the
// cache) and its garbage comes in bursts (Helm renders and encodes releases), so Go's default
// of 100, a heap up to twice the live data, made most of the memory peak; 40 keeps it 1.4x
// for a little more GC work. Measured with the bench (-only P5,P6, one run each,
// docs/performance.md): 50 left P5 and P6's peaks a few MiB over their goals, 40 brought both
// under with P6's growth unchanged in that run, 30 took about 8 MiB more off P5 but slowed
// the 5,000 point by a fifth. The GOGC environment variable, when set, wins.
const gcPercent = 40

// TuneMemory fits the Go runtime to the operator, before its manager starts: GOGC gcPercent
// unless GOGC is set, and under a container memory limit the soft memory limit
// (SetMemoryLimitFrom, unless GOMEMLIMIT is set) and, under PageByPageBelow, the executable
// read page by page (ReadCodePageByPageUnder). It logs what it did to log.
func TuneMemory(log logr.Logger) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	limit, limited := ContainerMemoryLimit()
	if !limited {
		return
	}
	if soft := SetMemoryLimitFrom(limit); soft > 0 {
		log.Info("Go soft memory limit set from the container's memory limit (GOMEMLIMIT unset): 80 % of it, at most the limit less the code reserve", "bytes", soft, "limitBytes", limit, "codeReserveBytes", CodeReserve)
	}
	switch advised, err := ReadCodePageByPageUnder(limit); {
	case err != nil:
		log.Error(err, "could not ask the kernel to read the executable page by page under the small memory limit; under memory pressure it may stall", "limitBytes", limit)
	case advised > 0:
		log.Info("small container memory limit: the executable's pages are read one at a time when the kernel reads them back (no read-around)", "limitBytes", limit, "belowBytes", PageByPageBelow)
	}
}
