package fakeapi

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ---- Network Groups (/v4/networkgroups/organisations/{ownerId}/networkgroups…) ----
//
// Routes and shapes from clever-client.js esm/api/v4/network-group.ts and
// src/clients/cc-api/commands/network-group/ (network-group.types.ts, network-group-utils.ts),
// as clever-tools src/models/ng.js and ng-resources.js and the Terraform provider
// (pkg/tmp/ng.go, pkg/resources/ng.go) call them:
//
//	GET    …/networkgroups                       [group]
//	POST   …/networkgroups                       {id: "ng_<uuid>", ownerId, label, description?, tags?, members?} -> no body
//	GET    …/networkgroups/{ngId}                group (404 until it exists)
//	DELETE …/networkgroups/{ngId}                no body
//	GET    …/networkgroups/{ngId}/members        [member]
//	POST   …/networkgroups/{ngId}/members        {id, label?, domainName, kind} -> no body
//	GET    …/networkgroups/{ngId}/members/{id}   member (404 until it exists)
//	DELETE …/networkgroups/{ngId}/members/{id}   no body
//
// The client chooses the group's id; creations are asynchronous (every client polls the GET
// until the group or member shows: SetNetworkGroupDelay makes the fake behave so). A member's
// kind comes back in lower case here: clever-client.js normalises it ("the API may return the
// member kind in lower or mixed case"). Add-on members are named by the add-on's real id with
// its provider's prefix (postgresql_, mysql_, mongodb_, redis_, elasticsearch_); an add-on
// deleted leaves its groups.

var ngIDPattern = regexp.MustCompile(`^ng_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// memberPrefixes maps a member id prefix to its kind (clever-tools NG_MEMBER_PREFIXES).
var memberPrefixes = map[string]string{
	"app_": "APPLICATION", "external_": "EXTERNAL",
	"elasticsearch_": "ADDON", "mongodb_": "ADDON", "mysql_": "ADDON", "postgresql_": "ADDON", "redis_": "ADDON",
}

type ngRecord struct {
	owner, id, label, description string
	tags                          []string
	octet                         int // the group's network is 10.<octet>.0.0/16
	members                       []*ngMemberRecord
	version                       int64
	visibleAt                     time.Time
}

type ngMemberRecord struct {
	id, label, domainName, kind string
	visibleAt                   time.Time
}

type networkGroupView struct {
	ID              string       `json:"id"`
	OwnerID         string       `json:"ownerId"`
	Label           string       `json:"label"`
	Description     *string      `json:"description"`
	NetworkIP       string       `json:"networkIp"`
	LastAllocatedIP string       `json:"lastAllocatedIp"`
	Tags            []string     `json:"tags"`
	Peers           []any        `json:"peers"`
	Members         []memberView `json:"members"`
	Version         int64        `json:"version"`
}

type memberView struct {
	ID         string `json:"id"`
	Label      string `json:"label"`
	DomainName string `json:"domainName"`
	Kind       string `json:"kind"`
}

type newGroupBody struct {
	ID          string          `json:"id"`
	OwnerID     string          `json:"ownerId"`
	Label       string          `json:"label"`
	Description string          `json:"description"`
	Tags        []string        `json:"tags"`
	Members     []newMemberBody `json:"members"`
}

type newMemberBody struct {
	ID         string `json:"id"`
	Label      string `json:"label"`
	DomainName string `json:"domainName"`
	Kind       string `json:"kind"`
}

// NetworkGroupMemberView is a member as tests see it.
type NetworkGroupMemberView struct{ ID, Label, DomainName, Kind string }

// NetworkGroupView is a group as tests see it (visible or not yet).
type NetworkGroupView struct {
	ID, Owner, Label, Description string
	Tags                          []string
	Members                       []NetworkGroupMemberView
}

// SetNetworkGroupDelay makes owner's groups and members created from now on show d after
// their creation (0, the default: at once).
func (s *Server) SetNetworkGroupDelay(owner string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ngDelay == nil {
		s.ngDelay = map[string]time.Duration{}
	}
	s.ngDelay[owner] = d
}

// NetworkGroups returns owner's groups (created through the API), oldest first.
func (s *Server) NetworkGroups(owner string) []NetworkGroupView {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []NetworkGroupView
	for _, g := range s.ngs {
		if g.owner != owner {
			continue
		}
		s.pruneMembers(g)
		v := NetworkGroupView{ID: g.id, Owner: g.owner, Label: g.label, Description: g.description, Tags: slices.Clone(g.tags)}
		for _, m := range g.members {
			v.Members = append(v.Members, NetworkGroupMemberView{ID: m.id, Label: m.label, DomainName: m.domainName, Kind: m.kind})
		}
		out = append(out, v)
	}
	return out
}

// DeleteNetworkGroupOutOfBand removes a group as a user of the console would.
func (s *Server) DeleteNetworkGroupOutOfBand(owner, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.ngIndex(owner, id)
	if i < 0 {
		return false
	}
	s.ngs = slices.Delete(s.ngs, i, i+1)
	return true
}

func (s *Server) networkGroupRoutes() {
	const base = "/v4/networkgroups/organisations/{ownerId}/networkgroups"
	s.handle("GET "+base, s.listNetworkGroups)
	s.handle("POST "+base, s.createNetworkGroup)
	s.handle("GET "+base+"/{ngId}", s.ngHandler(s.getNetworkGroup))
	s.handle("DELETE "+base+"/{ngId}", s.ngHandler(s.deleteNetworkGroup))
	s.handle("GET "+base+"/{ngId}/members", s.ngHandler(s.listMembers))
	s.handle("POST "+base+"/{ngId}/members", s.ngHandler(s.addMember))
	s.handle("GET "+base+"/{ngId}/members/{memberId}", s.ngHandler(s.getMember))
	s.handle("DELETE "+base+"/{ngId}/members/{memberId}", s.ngHandler(s.removeMember))
}

// ngIndex finds a group, visible or not. Caller holds s.mu.
func (s *Server) ngIndex(owner, id string) int {
	return slices.IndexFunc(s.ngs, func(g *ngRecord) bool { return g.owner == owner && g.id == id })
}

// pruneMembers drops the members whose add-on was deleted. Caller holds s.mu.
func (s *Server) pruneMembers(g *ngRecord) {
	g.members = slices.DeleteFunc(g.members, func(m *ngMemberRecord) bool {
		return m.kind == "ADDON" && s.byRealID[m.id] == nil
	})
}

// ngHandler resolves {ownerId} and {ngId} to a visible group (404 otherwise).
func (s *Server) ngHandler(h func(http.ResponseWriter, *http.Request, *ngRecord)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		owner := r.PathValue("ownerId")
		if !validOwner(owner) {
			ownerNotFound(w)
			return
		}
		s.lockState()
		defer s.mu.Unlock()
		i := s.ngIndex(owner, r.PathValue("ngId"))
		if i < 0 || s.now().Before(s.ngs[i].visibleAt) {
			writeError(w, http.StatusNotFound, errIDNotFound, "network group not found")
			return
		}
		s.pruneMembers(s.ngs[i])
		h(w, r, s.ngs[i])
	}
}

func (s *Server) ngView(g *ngRecord) networkGroupView {
	v := networkGroupView{ID: g.id, OwnerID: g.owner, Label: g.label, NetworkIP: fmt.Sprintf("10.%d.0.0/16", g.octet), Tags: slices.Clone(g.tags), Peers: []any{}, Members: []memberView{}, Version: g.version}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if g.description != "" {
		d := g.description
		v.Description = &d
	}
	now := s.now()
	for _, m := range g.members {
		if !now.Before(m.visibleAt) {
			v.Members = append(v.Members, memberViewOf(m))
		}
	}
	v.LastAllocatedIP = fmt.Sprintf("10.%d.0.%d", g.octet, len(v.Members)+1)
	return v
}

func memberViewOf(m *ngMemberRecord) memberView {
	return memberView{ID: m.id, Label: m.label, DomainName: m.domainName, Kind: strings.ToLower(m.kind)}
}

func (s *Server) listNetworkGroups(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !validOwner(owner) {
		ownerNotFound(w)
		return
	}
	s.lockState()
	defer s.mu.Unlock()
	out := []networkGroupView{}
	now := s.now()
	for _, g := range s.ngs {
		if g.owner == owner && !now.Before(g.visibleAt) {
			s.pruneMembers(g)
			out = append(out, s.ngView(g))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createNetworkGroup(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !validOwner(owner) {
		ownerNotFound(w)
		return
	}
	var body newGroupBody
	if !decodeObjectBody(w, r, &body) {
		return
	}
	fields := map[string]string{}
	if !ngIDPattern.MatchString(body.ID) {
		fields["id"] = "must be ng_ followed by a UUID"
	}
	if body.OwnerID != owner {
		fields["ownerId"] = "must be the organisation of the path"
	}
	if strings.TrimSpace(body.Label) == "" {
		fields["label"] = "required"
	}
	if len(fields) > 0 {
		writeFieldsError(w, "invalid network group", fields)
		return
	}
	s.lockState()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.ngs, func(g *ngRecord) bool { return g.id == body.ID }) {
		writeError(w, http.StatusConflict, errIDConflict, "a network group with this id already exists")
		return
	}
	at := s.now().Add(s.ngDelay[owner])
	s.ngSeq++
	g := &ngRecord{owner: owner, id: body.ID, label: body.Label, description: body.Description, tags: body.Tags,
		octet: 100 + s.ngSeq%150, version: 1, visibleAt: at}
	for _, m := range body.Members {
		rec, msg, status := s.checkMember(owner, g, m)
		if rec == nil {
			writeError(w, status, errIDBadRequest, msg)
			return
		}
		rec.visibleAt = at
		g.members = append(g.members, rec)
	}
	s.ngs = append(s.ngs, g)
	w.WriteHeader(http.StatusNoContent)
}

// checkMember validates a member to add (nil, a message and a status when refused). Caller
// holds s.mu.
func (s *Server) checkMember(owner string, g *ngRecord, m newMemberBody) (*ngMemberRecord, string, int) {
	kind := ""
	for prefix, k := range memberPrefixes {
		if strings.HasPrefix(m.ID, prefix) && len(m.ID) > len(prefix) {
			kind = k
		}
	}
	switch {
	case kind == "":
		return nil, "invalid member id: must start with app_, external_ or an add-on's real id prefix (postgresql_, mysql_, mongodb_, redis_, elasticsearch_)", http.StatusBadRequest
	case !strings.EqualFold(m.Kind, kind):
		return nil, fmt.Sprintf("invalid member kind %q for %s (expected %s)", m.Kind, m.ID, kind), http.StatusBadRequest
	case strings.TrimSpace(m.DomainName) == "":
		return nil, "member domainName is required", http.StatusBadRequest
	}
	if kind == "ADDON" {
		rec := s.byRealID[m.ID]
		if rec == nil || rec.owner != owner {
			return nil, "addon not found", http.StatusNotFound
		}
	}
	if slices.ContainsFunc(g.members, func(x *ngMemberRecord) bool { return x.id == m.ID }) {
		return nil, "member already in the network group", http.StatusConflict
	}
	return &ngMemberRecord{id: m.ID, label: m.Label, domainName: m.DomainName, kind: kind}, "", 0
}

func (s *Server) getNetworkGroup(w http.ResponseWriter, _ *http.Request, g *ngRecord) {
	writeJSON(w, http.StatusOK, s.ngView(g))
}

func (s *Server) deleteNetworkGroup(w http.ResponseWriter, _ *http.Request, g *ngRecord) {
	s.ngs = slices.DeleteFunc(s.ngs, func(x *ngRecord) bool { return x == g })
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listMembers(w http.ResponseWriter, _ *http.Request, g *ngRecord) {
	writeJSON(w, http.StatusOK, s.ngView(g).Members)
}

func (s *Server) addMember(w http.ResponseWriter, r *http.Request, g *ngRecord) {
	var body newMemberBody
	if !decodeObjectBody(w, r, &body) {
		return
	}
	rec, msg, status := s.checkMember(g.owner, g, body)
	if rec == nil {
		id := errIDBadRequest
		switch status {
		case http.StatusNotFound:
			id = errIDNotFound
		case http.StatusConflict:
			id = errIDConflict
		}
		writeError(w, status, int64(id), msg)
		return
	}
	rec.visibleAt = s.now().Add(s.ngDelay[g.owner])
	g.members = append(g.members, rec)
	g.version++
	w.WriteHeader(http.StatusNoContent)
}

// member finds a visible member of g (nil otherwise).
func (s *Server) member(g *ngRecord, id string) *ngMemberRecord {
	i := slices.IndexFunc(g.members, func(m *ngMemberRecord) bool { return m.id == id })
	if i < 0 || s.now().Before(g.members[i].visibleAt) {
		return nil
	}
	return g.members[i]
}

func (s *Server) getMember(w http.ResponseWriter, r *http.Request, g *ngRecord) {
	m := s.member(g, r.PathValue("memberId"))
	if m == nil {
		writeError(w, http.StatusNotFound, errIDNotFound, "member not found")
		return
	}
	writeJSON(w, http.StatusOK, memberViewOf(m))
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request, g *ngRecord) {
	m := s.member(g, r.PathValue("memberId"))
	if m == nil {
		writeError(w, http.StatusNotFound, errIDNotFound, "member not found")
		return
	}
	g.members = slices.DeleteFunc(g.members, func(x *ngMemberRecord) bool { return x == m })
	g.version++
	w.WriteHeader(http.StatusNoContent)
}
