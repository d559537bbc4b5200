package fakeapi

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/catalog"
	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// ---- organisation-private plans (GET /v2/products/addonproviders?orgaId=) ----

// privatePlanNamespace derives the ids of AddPrivatePlan plans.
var privatePlanNamespace = uuid.MustParse("9d3b1f70-2c4e-5a86-b1d9-4e7f0a2c6b15")

// AddPrivatePlan adds a plan private to owner to a provider and returns its
// id: it is listed by GET /v2/products/addonproviders?orgaId=<owner> (and
// GET /v2/products/addonproviders/{providerId}?orgaId=<owner>) only, as
// clever-client.js list-product-addon-command.ts asks with the owner, and
// only that owner can create an add-on with it. The plan is a dedicated one
// in every region of the provider, priced 0. Adding the same slug twice
// returns the same id. It returns "" for an unknown provider.
func (s *Server) AddPrivatePlan(owner, providerID, slug string) string {
	k := s.catalog.ByID[providerID]
	if k == nil || slug == "" {
		return ""
	}
	id := "plan_" + uuid.NewSHA1(privatePlanNamespace, []byte(owner+"/"+providerID+"/"+slug)).String()
	s.mu.Lock()
	defer s.mu.Unlock()
	byProvider := s.privatePlans[owner]
	if byProvider == nil {
		byProvider = map[string][]*Plan{}
		s.privatePlans[owner] = byProvider
	}
	for _, pl := range byProvider[providerID] {
		if pl.ID == id {
			return id
		}
	}
	priceID := k.Spec.Family + "." + slug
	pl := &Plan{
		ID:       id,
		Name:     catalog.PlanName(slug) + " (private)",
		Slug:     slug,
		Price:    0,
		PriceID:  &priceID,
		Features: []PlanFeature{catalog.TypeFeature(true)},
		Zones:    slices.Clone(k.Provider.Regions),
	}
	byProvider[providerID] = append(byProvider[providerID], pl)
	return id
}

// privatePlan returns owner's private plan planID of providerID, or nil.
func (s *Server) privatePlan(owner, providerID, planID string) *Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pl := range s.privatePlans[owner][providerID] {
		if pl.ID == planID {
			out := wire.ClonePlan(*pl)
			return &out
		}
	}
	return nil
}

// providerFor renders a provider with its public plans and, when owner is
// not empty, owner's private plans.
func (s *Server) providerFor(k *catalog.Kind, owner string) Provider {
	p := wire.CloneProvider(k.Provider, true)
	if owner == "" {
		return p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pl := range s.privatePlans[owner][k.Spec.ProviderID] {
		p.Plans = append(p.Plans, wire.ClonePlan(*pl))
	}
	return p
}

// providersFor is the catalogue as GET /v2/products/addonproviders[?orgaId=owner] shows it.
func (s *Server) providersFor(owner string) []Provider {
	out := make([]Provider, 0, len(s.catalog.Kinds))
	for _, k := range s.catalog.Kinds {
		out = append(out, s.providerFor(k, owner))
	}
	return out
}

// CreateOptions returns the "options" object of the create request of an
// add-on (addon_ id or realId) exactly as it was sent (nil when the request
// had none, or the add-on is unknown), so a test can prove which options
// reached the API (e.g. Elasticsearch's flat "kibana": "true", "apm": "true").
func (s *Server) CreateOptions(addonID string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.find(addonID)
	if rec == nil {
		return nil
	}
	return cloneOptions(rec.options)
}

// ---- GET /v2/organisations ----

// AddOrganisation makes GET /v2/organisations list id (an orga_ id).
func (s *Server) AddOrganisation(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orgs[id] = true
}

// Organisations returns what GET /v2/organisations answers: the user's
// personal entry (id = Self().ID, as the real API lists it: clever-client.js
// list-organisation-command.ts filters it out unless asked), then every
// organisation of Options.Organisations, AddOrganisation, and every orga_
// owner that has had an add-on, by id.
func (s *Server) Organisations() []Organisation {
	s.mu.Lock()
	ids := map[string]bool{}
	for id := range s.orgs {
		ids[id] = true
	}
	for _, rec := range s.byID {
		ids[rec.owner] = true
	}
	self := s.self
	s.mu.Unlock()
	for _, id := range s.opts.Organisations {
		ids[id] = true
	}
	out := []Organisation{{
		ID: self.ID, Name: self.Name, Description: "", BillingEmail: self.Email,
		Address: self.Address, City: self.City, Zipcode: self.Zipcode, Country: self.Country,
		Avatar: self.Avatar, VatState: "VALID", CustomerFullName: self.Name, CanPay: true,
	}}
	var orgs []Organisation
	for id := range ids {
		if !strings.HasPrefix(id, "orga_") {
			continue
		}
		short := strings.TrimPrefix(id, "orga_")
		if len(short) > 8 {
			short = short[:8]
		}
		orgs = append(orgs, Organisation{
			ID: id, Name: "Fake organisation " + short, Description: "served by the clever-operator fake API",
			BillingEmail: "billing@example.com", Address: "1 rue de la Paix", City: "Nantes", Zipcode: "44000",
			Country: "FRANCE", Company: "Fake SAS", VAT: "FR00000000000", Avatar: "", VatState: "VALID",
			CustomerFullName: "Fake User", CanPay: true, EmergencyNumber: "", CanSEPA: false, IsTrusted: true,
		})
	}
	slices.SortFunc(orgs, func(a, b Organisation) int { return cmp.Compare(a.ID, b.ID) })
	return append(out, orgs...)
}

func (s *Server) getOrganisations(w http.ResponseWriter, r *http.Request) {
	wire.WriteJSON(w, http.StatusOK, s.organisationsFor(r))
}
