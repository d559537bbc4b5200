package operator

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestExecutableMappings(t *testing.T) {
	const maps = `00400000-02477000 r-xp 00000000 fd:01 1234                               /manager
02477000-04531000 r--p 02077000 fd:01 1234                               /manager
04531000-045e6000 rw-p 04131000 fd:01 1234                               /manager
045e6000-0665e000 rw-p 00000000 00:00 0 
c000000000-c004000000 rw-p 00000000 00:00 0 
7f0000000000-7f0000001000 r--p 00000000 fd:01 99                         /manager.old
7ffd1000-7ffd2000 r-xp 00000000 00:00 0                                  [vdso]
`
	// Replaced on disk: /proc/self/exe and maps both say so.
	const replaced = "00400000-00500000 r-xp 00000000 fd:01 1234     /manager (deleted)\n00500000-00600000 r--p 00100000 fd:01 1234     /manager\n"
	got, err := ExecutableMappings(strings.NewReader(maps), "/manager")
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]uintptr{{0x400000, 0x2477000}, {0x2477000, 0x4531000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ExecutableMappings = %#x; want %#x (the writable and other files' mappings left out)", got, want)
	}
	if _, err := ExecutableMappings(strings.NewReader("zz-10 r-xp 0 0:0 1 /manager\n"), "/manager"); err == nil {
		t.Fatal("a malformed address range of the executable must be an error")
	}
	if got, err := ExecutableMappings(strings.NewReader("10-20 r-xp 0 0:0 1 /a path/with spaces\n"), "/a path/with spaces"); err != nil || len(got) != 1 || got[0] != [2]uintptr{0x10, 0x20} {
		t.Fatalf("a path with spaces: %#x, %v", got, err)
	}
	if got, err := ExecutableMappings(strings.NewReader(replaced), "/manager (deleted)"); err != nil || len(got) != 1 || got[0] != [2]uintptr{0x400000, 0x500000} {
		t.Fatalf("a replaced executable: %#x, %v; want only its own mapping", got, err)
	}
}

// TestReadCodePageByPage advises this test binary's own mappings and reads the kernel's
// answer back: smaps shows the flag "rr" (random read) on every read-only mapping of the
// executable once the advice is taken.
func TestReadCodePageByPage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only: madvise and /proc")
	}
	if n, err := ReadCodePageByPageUnder(PageByPageBelow); n != 0 || err != nil {
		t.Fatalf("at the threshold: %d mappings advised, %v; want none", n, err)
	}
	n, err := ReadCodePageByPageUnder(64000000)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	seen, advised := 0, 0
	inExe := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			if _, err := strconv.ParseUint(strings.SplitN(fields[0], "-", 2)[0], 16, 64); err == nil {
				inExe = len(fields) >= 6 && strings.Join(fields[5:], " ") == exe && fields[1][1] != 'w'
				if inExe {
					seen++
				}
				continue
			}
		}
		if inExe && strings.HasPrefix(line, "VmFlags:") {
			for _, fl := range fields[1:] {
				if fl == "rr" {
					advised++
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if seen == 0 || n != seen || advised != seen {
		t.Fatalf("%d read-only mappings of %s, %d advised by ReadCodePageByPage, %d with VmFlags rr; want all", seen, exe, n, advised)
	}
}
