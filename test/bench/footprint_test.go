package main

import (
	"os"
	"testing"
)

func TestExecutableFacts(t *testing.T) {
	exe, err := os.Executable() // the test binary: an ELF file on Linux, as the operator's
	if err != nil {
		t.Fatal(err)
	}
	e, err := executableFacts(exe)
	if err != nil {
		t.Skipf("not an ELF executable here: %v", err)
	}
	st, _ := os.Stat(exe)
	if e.Bytes != st.Size() || e.MiB <= 0 || e.TextMiB <= 0 || e.RodataMiB <= 0 || e.PclntabMiB <= 0 {
		t.Errorf("%+v", e)
	}
	if sum := e.TextMiB + e.RodataMiB + e.PclntabMiB; sum > e.MiB {
		t.Errorf("sections %.1f MiB, more than the file's %.1f MiB", sum, e.MiB)
	}
}
