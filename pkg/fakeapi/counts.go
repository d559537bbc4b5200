package fakeapi

import "net/http"

// ---- request counters (per route, status, owner and token) ----

func (s *Server) countRequest(route string) {
	s.countMu.Lock()
	s.counts[route]++
	s.countMu.Unlock()
}

func (s *Server) countStatus(route string, code int) {
	s.countMu.Lock()
	m := s.byStatus[route]
	if m == nil {
		m = map[int]int{}
		s.byStatus[route] = m
	}
	m[code]++
	s.countMu.Unlock()
}

// Counts returns the number of API requests per route key (the ServeMux
// pattern, e.g. "GET /v2/organisations/{ownerId}/addons/{addonId}"),
// including requests answered by an injected fault or an auth failure.
// Requests matching no route are counted under RouteUnmatched. Admin
// requests are never counted.
func (s *Server) Counts() map[string]int {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// CountsByStatus returns, per route key, the number of answers per HTTP status.
func (s *Server) CountsByStatus() map[string]map[int]int {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	out := make(map[string]map[int]int, len(s.byStatus))
	for k, m := range s.byStatus {
		c := make(map[int]int, len(m))
		for code, n := range m {
			c[code] = n
		}
		out[k] = c
	}
	return out
}

// ResetCounts clears both counters.
func (s *Server) ResetCounts() {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	s.counts = map[string]int{}
	s.byStatus = map[string]map[int]int{}
	s.byOwner = map[string]int{}
	s.ownerCounts = map[string]map[string]int{}
	s.tokenCounts = map[string]map[string]int{}
}

// requestOwner is the owner a request is about: the {ownerId} path value, or the owner of the
// config-provider add-on named by {realId}; "" when none.
func (s *Server) requestOwner(r *http.Request) string {
	if o := r.PathValue("ownerId"); o != "" {
		return o
	}
	if o := r.URL.Query().Get("orgaId"); o != "" {
		return o
	}
	if o := r.URL.Query().Get("ownerId"); o != "" {
		return o
	}
	if id := r.PathValue("realId"); id != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		if rec := s.find(id); rec != nil {
			return rec.owner
		}
	}
	return ""
}

func (s *Server) countOwner(owner, route string) {
	if owner == "" {
		return
	}
	s.countMu.Lock()
	if s.byOwner == nil {
		s.byOwner = map[string]int{}
	}
	s.byOwner[owner]++
	m := s.ownerCounts[owner]
	if m == nil {
		m = map[string]int{}
		s.ownerCounts[owner] = m
	}
	m[route]++
	s.countMu.Unlock()
}

// CountsFor returns, for one owner id, the number of API requests per route
// key (as Counts) whose path names that owner ({ownerId}), whose orgaId or
// ownerId query names it, or whose {realId} is one of its add-ons (v4
// routes). Specs that each use their own owner id get their own counters
// this way, even when they share one Server. ResetCounts clears them.
func (s *Server) CountsFor(owner string) map[string]int {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	out := make(map[string]int, len(s.ownerCounts[owner]))
	for k, v := range s.ownerCounts[owner] {
		out[k] = v
	}
	return out
}

// CountsByOwner returns the number of API requests per owner id (organisation or user) they
// were about: the {ownerId} of the path, or the owner of the config-provider add-on of a v4
// env route. Requests about no owner (catalogue, self) are not in it. ResetCounts clears it.
func (s *Server) CountsByOwner() map[string]int {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	out := make(map[string]int, len(s.byOwner))
	for k, v := range s.byOwner {
		out[k] = v
	}
	return out
}
