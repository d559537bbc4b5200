package fakeapi

import (
	"net/http"
	"testing"
)

// One owner's fault, limited to one route, leaves that owner's other routes and every other
// owner alone; lifting it leaves the other owners' faults in place.
func TestSetOwnerFaultRoutes(t *testing.T) {
	s, c := newTest(t, Options{})
	const other = "orga_99999999-2222-3333-4444-555555555555"
	s.SetOwnerFault(testOwner, &OwnerFault{Status: 500, Routes: []string{"POST /v2/organisations/{ownerId}/addons"}})
	s.SetOwnerFault(other, &OwnerFault{Status: 403})

	if r := c.do("POST", "/v2/organisations/"+testOwner+"/addons", createBody(s, "redis-addon", "s_mono", "par")); r.status != http.StatusInternalServerError {
		t.Fatalf("create of the faulty owner: status %d, want 500", r.status)
	}
	if r := c.do("GET", "/v2/organisations/"+testOwner+"/addons", nil); r.status != http.StatusOK {
		t.Fatalf("list of the faulty owner (route not in Routes): status %d, want 200", r.status)
	}
	if r := c.do("GET", "/v2/organisations/"+other+"/addons", nil); r.status != http.StatusForbidden {
		t.Fatalf("other owner: status %d, want its own 403", r.status)
	}

	s.SetOwnerFault(testOwner, nil)
	if r := c.do("POST", "/v2/organisations/"+testOwner+"/addons", createBody(s, "redis-addon", "s_mono", "par")); r.status != http.StatusOK {
		t.Fatalf("create after lifting: status %d, want 200", r.status)
	}
	if r := c.do("GET", "/v2/organisations/"+other+"/addons", nil); r.status != http.StatusForbidden {
		t.Fatalf("lifting one owner's fault lifted another's: status %d", r.status)
	}
}
