// Package networkgroups is the fake Clever Cloud API's Network Groups: their
// state, their validation and the handlers of their routes. A Store lives in
// a server, which lends it its state lock, its clock, a look-up of the owners
// of add-ons and the registration of API routes (Host).
package networkgroups

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
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
// until the group or member shows: Store.SetDelay makes the fake behave so). A member's
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

type group struct {
	owner, id, label, description string
	tags                          []string
	octet                         int // the group's network is 10.<octet>.0.0/16
	members                       []*member
	version                       int64
	visibleAt                     time.Time
}

type member struct {
	id, label, domainName, kind string
	visibleAt                   time.Time
}

// groupJSON is a group as the API answers it.
type groupJSON struct {
	ID              string       `json:"id"`
	OwnerID         string       `json:"ownerId"`
	Label           string       `json:"label"`
	Description     *string      `json:"description"`
	NetworkIP       string       `json:"networkIp"`
	LastAllocatedIP string       `json:"lastAllocatedIp"`
	Tags            []string     `json:"tags"`
	Peers           []any        `json:"peers"`
	Members         []memberJSON `json:"members"`
	Version         int64        `json:"version"`
}

// memberJSON is a member as the API answers it.
type memberJSON struct {
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

// MemberView is a member as tests see it.
type MemberView struct{ ID, Label, DomainName, Kind string }

// View is a group as tests see it (visible or not yet).
type View struct {
	ID, Owner, Label, Description string
	Tags                          []string
	Members                       []MemberView
}

// Host is what a Store needs of the server it lives in.
type Host struct {
	// Now is the server's clock.
	Now func() time.Time
	// Lock takes the server's state lock (settling what is due) and Unlock
	// releases it: the handlers take it around every access to the Store.
	Lock, Unlock func()
	// AddonOwner returns the owner of the add-on whose realId is realID
	// (false when there is none). It is called with the state lock held.
	AddonOwner func(realID string) (owner string, ok bool)
	// Handle registers an API route; pattern is also its route key.
	Handle func(pattern string, h http.HandlerFunc)
}

// Store holds the Network Groups of every owner. It has no lock of its own:
// it lives under the server's state lock. Its methods expect the caller to
// hold that lock; the handlers registered by Routes take it themselves.
type Store struct {
	host   Host
	groups []*group
	delay  map[string]time.Duration // owner -> delay
	seq    int
}

// New returns an empty Store living in host.
func New(host Host) *Store { return &Store{host: host} }

// SetDelay makes owner's groups and members created from now on show d after
// their creation (0, the default: at once).
func (st *Store) SetDelay(owner string, d time.Duration) {
	if st.delay == nil {
		st.delay = map[string]time.Duration{}
	}
	st.delay[owner] = d
}

// Groups returns owner's groups (created through the API), oldest first.
func (st *Store) Groups(owner string) []View {
	var out []View
	for _, g := range st.groups {
		if g.owner != owner {
			continue
		}
		st.pruneMembers(g)
		v := View{ID: g.id, Owner: g.owner, Label: g.label, Description: g.description, Tags: slices.Clone(g.tags)}
		for _, m := range g.members {
			v.Members = append(v.Members, MemberView{ID: m.id, Label: m.label, DomainName: m.domainName, Kind: m.kind})
		}
		out = append(out, v)
	}
	return out
}

// Delete removes a group as a user of the console would; false when owner has no such group.
func (st *Store) Delete(owner, id string) bool {
	i := st.index(owner, id)
	if i < 0 {
		return false
	}
	st.groups = slices.Delete(st.groups, i, i+1)
	return true
}

// Routes registers the Network Group routes with the host.
func (st *Store) Routes() {
	const base = "/v4/networkgroups/organisations/{ownerId}/networkgroups"
	handle := st.host.Handle
	handle("GET "+base, st.listNetworkGroups)
	handle("POST "+base, st.createNetworkGroup)
	handle("GET "+base+"/{ngId}", st.groupHandler(st.getNetworkGroup))
	handle("DELETE "+base+"/{ngId}", st.groupHandler(st.deleteNetworkGroup))
	handle("GET "+base+"/{ngId}/members", st.groupHandler(st.listMembers))
	handle("POST "+base+"/{ngId}/members", st.groupHandler(st.addMember))
	handle("GET "+base+"/{ngId}/members/{memberId}", st.groupHandler(st.getMember))
	handle("DELETE "+base+"/{ngId}/members/{memberId}", st.groupHandler(st.removeMember))
}

// index finds a group, visible or not. Caller holds the lock.
func (st *Store) index(owner, id string) int {
	return slices.IndexFunc(st.groups, func(g *group) bool { return g.owner == owner && g.id == id })
}

// pruneMembers drops the members whose add-on was deleted. Caller holds the lock.
func (st *Store) pruneMembers(g *group) {
	g.members = slices.DeleteFunc(g.members, func(m *member) bool {
		if m.kind != "ADDON" {
			return false
		}
		_, ok := st.host.AddonOwner(m.id)
		return !ok
	})
}

// groupHandler resolves {ownerId} and {ngId} to a visible group (404 otherwise).
func (st *Store) groupHandler(h func(http.ResponseWriter, *http.Request, *group)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		owner := r.PathValue("ownerId")
		if !wire.ValidOwner(owner) {
			wire.OwnerNotFound(w)
			return
		}
		st.host.Lock()
		defer st.host.Unlock()
		i := st.index(owner, r.PathValue("ngId"))
		if i < 0 || st.host.Now().Before(st.groups[i].visibleAt) {
			wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "network group not found")
			return
		}
		st.pruneMembers(st.groups[i])
		h(w, r, st.groups[i])
	}
}

func (st *Store) view(g *group) groupJSON {
	v := groupJSON{ID: g.id, OwnerID: g.owner, Label: g.label, NetworkIP: fmt.Sprintf("10.%d.0.0/16", g.octet), Tags: slices.Clone(g.tags), Peers: []any{}, Members: []memberJSON{}, Version: g.version}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if g.description != "" {
		d := g.description
		v.Description = &d
	}
	now := st.host.Now()
	for _, m := range g.members {
		if !now.Before(m.visibleAt) {
			v.Members = append(v.Members, memberJSONOf(m))
		}
	}
	v.LastAllocatedIP = fmt.Sprintf("10.%d.0.%d", g.octet, len(v.Members)+1)
	return v
}

func memberJSONOf(m *member) memberJSON {
	return memberJSON{ID: m.id, Label: m.label, DomainName: m.domainName, Kind: strings.ToLower(m.kind)}
}

func (st *Store) listNetworkGroups(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	st.host.Lock()
	defer st.host.Unlock()
	out := []groupJSON{}
	now := st.host.Now()
	for _, g := range st.groups {
		if g.owner == owner && !now.Before(g.visibleAt) {
			st.pruneMembers(g)
			out = append(out, st.view(g))
		}
	}
	wire.WriteJSON(w, http.StatusOK, out)
}

func (st *Store) createNetworkGroup(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	var body newGroupBody
	if !wire.DecodeObjectBody(w, r, &body) {
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
		wire.WriteFieldsError(w, "invalid network group", fields)
		return
	}
	st.host.Lock()
	defer st.host.Unlock()
	if slices.ContainsFunc(st.groups, func(g *group) bool { return g.id == body.ID }) {
		wire.WriteError(w, http.StatusConflict, wire.ErrIDConflict, "a network group with this id already exists")
		return
	}
	at := st.host.Now().Add(st.delay[owner])
	st.seq++
	g := &group{owner: owner, id: body.ID, label: body.Label, description: body.Description, tags: body.Tags,
		octet: 100 + st.seq%150, version: 1, visibleAt: at}
	for _, m := range body.Members {
		rec, msg, status := st.checkMember(owner, g, m)
		if rec == nil {
			wire.WriteError(w, status, wire.ErrIDBadRequest, msg)
			return
		}
		rec.visibleAt = at
		g.members = append(g.members, rec)
	}
	st.groups = append(st.groups, g)
	w.WriteHeader(http.StatusNoContent)
}

// checkMember validates a member to add (nil, a message and a status when refused). Caller
// holds the lock.
func (st *Store) checkMember(owner string, g *group, m newMemberBody) (*member, string, int) {
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
		if o, ok := st.host.AddonOwner(m.ID); !ok || o != owner {
			return nil, "addon not found", http.StatusNotFound
		}
	}
	if slices.ContainsFunc(g.members, func(x *member) bool { return x.id == m.ID }) {
		return nil, "member already in the network group", http.StatusConflict
	}
	return &member{id: m.ID, label: m.Label, domainName: m.DomainName, kind: kind}, "", 0
}

func (st *Store) getNetworkGroup(w http.ResponseWriter, _ *http.Request, g *group) {
	wire.WriteJSON(w, http.StatusOK, st.view(g))
}

func (st *Store) deleteNetworkGroup(w http.ResponseWriter, _ *http.Request, g *group) {
	st.groups = slices.DeleteFunc(st.groups, func(x *group) bool { return x == g })
	w.WriteHeader(http.StatusNoContent)
}

func (st *Store) listMembers(w http.ResponseWriter, _ *http.Request, g *group) {
	wire.WriteJSON(w, http.StatusOK, st.view(g).Members)
}

func (st *Store) addMember(w http.ResponseWriter, r *http.Request, g *group) {
	var body newMemberBody
	if !wire.DecodeObjectBody(w, r, &body) {
		return
	}
	rec, msg, status := st.checkMember(g.owner, g, body)
	if rec == nil {
		id := wire.ErrIDBadRequest
		switch status {
		case http.StatusNotFound:
			id = wire.ErrIDNotFound
		case http.StatusConflict:
			id = wire.ErrIDConflict
		}
		wire.WriteError(w, status, int64(id), msg)
		return
	}
	rec.visibleAt = st.host.Now().Add(st.delay[g.owner])
	g.members = append(g.members, rec)
	g.version++
	w.WriteHeader(http.StatusNoContent)
}

// visibleMember finds a visible member of g (nil otherwise).
func (st *Store) visibleMember(g *group, id string) *member {
	i := slices.IndexFunc(g.members, func(m *member) bool { return m.id == id })
	if i < 0 || st.host.Now().Before(g.members[i].visibleAt) {
		return nil
	}
	return g.members[i]
}

func (st *Store) getMember(w http.ResponseWriter, r *http.Request, g *group) {
	m := st.visibleMember(g, r.PathValue("memberId"))
	if m == nil {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "member not found")
		return
	}
	wire.WriteJSON(w, http.StatusOK, memberJSONOf(m))
}

func (st *Store) removeMember(w http.ResponseWriter, r *http.Request, g *group) {
	m := st.visibleMember(g, r.PathValue("memberId"))
	if m == nil {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "member not found")
		return
	}
	g.members = slices.DeleteFunc(g.members, func(x *member) bool { return x == m })
	g.version++
	w.WriteHeader(http.StatusNoContent)
}
