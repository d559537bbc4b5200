package queue

import "testing"

func TestTenantSlots(t *testing.T) {
	var s TenantSlots
	if !s.Acquire("a", 2) || !s.Acquire("a", 2) || s.Acquire("a", 2) {
		t.Fatal("tenant a: want two slots, then none")
	}
	if !s.Acquire("b", 2) {
		t.Fatal("tenant b is not limited by a's share")
	}
	s.Release("a")
	if !s.Acquire("a", 2) {
		t.Fatal("a released slot is free again")
	}
	s.Release("a")
	s.Release("a")
	s.Release("b")
	if len(s.held) != 0 {
		t.Fatalf("slots left: %v", s.held)
	}
}
