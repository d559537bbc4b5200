package operator

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCgroupMemoryLimit(t *testing.T) {
	write := func(t *testing.T, root, rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		files  map[string]string
		self   string
		want   int64
		wantOK bool
	}{
		{name: "v2 container root", files: map[string]string{"memory.max": "67108864\n"}, self: "0::/\n", want: 64 << 20, wantOK: true},
		{name: "v2 no limit", files: map[string]string{"memory.max": "max\n"}, self: "0::/\n"},
		{name: "v2 own group", files: map[string]string{"kubepods/pod1/c1/memory.max": "64000000\n"}, self: "0::/kubepods/pod1/c1\n", want: 64000000, wantOK: true},
		{name: "v1 own group", files: map[string]string{"memory/docker/abc/memory.limit_in_bytes": "268435456\n", "memory/memory.limit_in_bytes": "9223372036854771712\n"},
			self: "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n", want: 256 << 20, wantOK: true},
		{name: "v1 unlimited", files: map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, self: "4:memory:/\n"},
		{name: "smallest wins", files: map[string]string{"memory.max": "134217728", "a/memory.max": "67108864"}, self: "0::/a\n", want: 64 << 20, wantOK: true},
		{name: "nothing readable", self: "0::/x\n"},
		{name: "garbage", files: map[string]string{"memory.max": "lots"}, self: "0::/\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, c := range tc.files {
				write(t, root, rel, c)
			}
			self := filepath.Join(t.TempDir(), "cgroup")
			write(t, filepath.Dir(self), "cgroup", tc.self)
			got, ok := CgroupMemoryLimit(root, self)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("CgroupMemoryLimit = %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestSoftMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		limit, want int64
	}{
		// The Rust chart's 64M (61 MiB): 32 MiB left for the code, not 20 %.
		{"rust chart 64M", 64000000, 64000000 - 32<<20},
		{"128Mi", 128 << 20, 96 << 20},
		// From 160 MiB up, 20 % of the limit is at least 32 MiB.
		{"160Mi", 160 << 20, 128 << 20},
		{"chart default 384Mi", 384 << 20, 322122547}, // 80 %
		{"tiny", 40 << 20, 16 << 20},
		// Under 20 MiB the floor does not raise it above 80 %.
		{"under 20 MiB", 12 << 20, int64(12<<20) * 4 / 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SoftMemoryLimit(tc.limit); got != tc.want {
				t.Fatalf("SoftMemoryLimit(%d) = %d; want %d", tc.limit, got, tc.want)
			}
		})
	}
}
