package kube

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// APICounter counts the fake's requests about one organisation from the moment it was made.
type APICounter struct {
	fake  *fakeapi.Server
	owner string
	base  map[string]int
}

// CountCalls starts counting the requests about namespace ns's organisation at the suite's
// fake.
func (s *Suite) CountCalls(ns string) *APICounter {
	return CountCalls(s.Fake, s.OrgOf(ns))
}

// CountCalls starts counting the requests about organisation owner at fake.
func CountCalls(fake *fakeapi.Server, owner string) *APICounter {
	return &APICounter{fake: fake, owner: owner, base: fake.CountsFor(owner)}
}

// Route returns the requests on one route template since the counter was made.
func (c *APICounter) Route(r string) int { return c.fake.CountsFor(c.owner)[r] - c.base[r] }

// Matching sums the requests since the counter was made on the route templates containing
// substr ("" = all).
func (c *APICounter) Matching(substr string) int {
	n := 0
	for r, v := range c.fake.CountsFor(c.owner) {
		if strings.Contains(r, substr) {
			n += v - c.base[r]
		}
	}
	return n
}

// OwnerFault makes the suite's fake answer the requests about namespace ns's organisation
// with f until the spec ends (or ClearOwnerFault). Other organisations are not affected.
func (s *Suite) OwnerFault(ns string, f fakeapi.OwnerFault) {
	org := s.OrgOf(ns)
	s.Fake.SetOwnerFault(org, &f)
	DeferCleanup(func() { s.Fake.SetOwnerFault(org, nil) })
}

// ClearOwnerFault lifts namespace ns's fault.
func (s *Suite) ClearOwnerFault(ns string) { s.Fake.SetOwnerFault(s.OrgOf(ns), nil) }

// FailRoutes makes the requests about namespace ns's organisation on the given route
// templates answer 500 (a Clever Cloud incident) until the spec ends or ClearOwnerFault.
func (s *Suite) FailRoutes(ns string, routes ...string) {
	s.OwnerFault(ns, fakeapi.OwnerFault{Status: 500, Routes: routes})
}
