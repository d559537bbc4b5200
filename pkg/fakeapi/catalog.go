package fakeapi

import (
	"github.com/clever-operator/clever-operator/pkg/fakeapi/catalog"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// The seeded catalogue (providers, plans, features, versions, prices, create
// options, the env of a new add-on) is pkg/fakeapi/catalog's; the Server
// serves it, with the private plans and versions tests add.

// PlanIDNamespace is the UUIDv5 namespace of the plan ids the fake invents
// (a copy of catalog.PlanIDNamespace; see GeneratedPlanID).
var PlanIDNamespace = catalog.PlanIDNamespace

// GeneratedPlanID returns the stable id the fake uses for a plan whose real
// id is unknown: "plan_" + UUIDv5(PlanIDNamespace, "<providerId>/<slug>").
func GeneratedPlanID(providerID, slug string) string {
	return catalog.GeneratedPlanID(providerID, slug)
}

// Providers returns the seeded providers, with their plans.
func (s *Server) Providers() []Provider {
	out := make([]Provider, 0, len(s.catalog.Kinds))
	for _, k := range s.catalog.Kinds {
		out = append(out, wire.CloneProvider(k.Provider, true))
	}
	return out
}

// PlanID returns the id of the plan of providerID whose slug is slug (exact
// match first, then case-insensitive), or "" when there is none.
func (s *Server) PlanID(providerID, slug string) string { return s.catalog.PlanID(providerID, slug) }
