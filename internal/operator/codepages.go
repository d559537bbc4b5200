package operator

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// PageByPageBelow is the container memory limit below which the operator asks the kernel to
// read its executable one page at a time (madvise MADV_RANDOM on the executable's read-only
// mappings: no read-around on a page fault).
//
// The binary's code and tables are clean pages of its file: under a limit the kernel drops
// them from the cgroup's page cache and reads them back on the next fault, by default with
// 128 KiB of read-around (read_ahead_kb) for every page asked for. With the Rust chart's 64M
// limit the operator's heap leaves about 26 MiB for its code, enough for what it runs page by
// page but not with read-around: each fault then evicts pages about to be used and the process
// stalls (P5 small: 0 of 20 resources Ready in 2 minutes, against all Ready in 9-13 s with the
// advice, 3.5-5 s with CodeReserve as well; docs/performance.md). The advice has a cost of its
// own: a cold start reads the code in many 4 KiB reads instead of fewer large ones. Up to 256
// MiB the soft memory limit can leave the code 32-51 MiB, near what it keeps resident with
// room (about 50 MiB), so the advice is kept there; only 64M was measured.
const PageByPageBelow = 256 << 20

// ExecutableMappings returns the address ranges [start, end) of the read-only mappings of the
// file exe (its code and read-only data) listed in maps, the format of /proc/<pid>/maps.
func ExecutableMappings(maps io.Reader, exe string) ([][2]uintptr, error) {
	var out [][2]uintptr
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// address perms offset dev inode pathname (the pathname may hold spaces)
		f := strings.SplitN(sc.Text(), " ", 6)
		if len(f) < 6 || strings.TrimLeft(f[5], " ") != exe || len(f[1]) < 2 || f[1][1] == 'w' {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			return nil, fmt.Errorf("unexpected address range %q", f[0])
		}
		out = append(out, [2]uintptr{uintptr(start), uintptr(end)})
	}
	return out, sc.Err()
}

// ReadCodePageByPage advises the kernel (MADV_RANDOM) to read the running executable's
// read-only mappings one page at a time. It returns how many mappings were advised.
func ReadCodePageByPage() (int, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	ranges, err := ExecutableMappings(f, exe)
	if err != nil {
		return 0, err
	}
	if len(ranges) == 0 {
		return 0, fmt.Errorf("no read-only mapping of %s in /proc/self/maps", exe)
	}
	for _, r := range ranges {
		if err := adviseRandom(r[0], r[1]-r[0]); err != nil {
			return 0, fmt.Errorf("madvise: %w", err)
		}
	}
	return len(ranges), nil
}

// ReadCodePageByPageUnder applies ReadCodePageByPage when the container's memory limit
// (ContainerMemoryLimit) is below PageByPageBelow. It returns how many mappings were advised
// (0: not applied).
func ReadCodePageByPageUnder(limit int64) (int, error) {
	if limit >= PageByPageBelow {
		return 0, nil
	}
	return ReadCodePageByPage()
}
