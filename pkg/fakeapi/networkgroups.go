package fakeapi

import (
	"time"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/networkgroups"
)

// Network Groups (/v4/networkgroups/organisations/{ownerId}/networkgroups…) are
// pkg/fakeapi/networkgroups' Store, kept under the Server's state lock.
type (
	// NetworkGroupView is a group as tests see it (visible or not yet).
	NetworkGroupView = networkgroups.View
	// NetworkGroupMemberView is a member as tests see it.
	NetworkGroupMemberView = networkgroups.MemberView
)

// newNetworkGroups returns the Server's Network Group store.
func (s *Server) newNetworkGroups() *networkgroups.Store {
	return networkgroups.New(networkgroups.Host{
		Now:    s.now,
		Lock:   s.lockState,
		Unlock: s.mu.Unlock,
		AddonOwner: func(realID string) (string, bool) {
			rec := s.byRealID[realID]
			if rec == nil {
				return "", false
			}
			return rec.owner, true
		},
		Handle: s.handle,
	})
}

// SetNetworkGroupDelay makes owner's groups and members created from now on show d after
// their creation (0, the default: at once).
func (s *Server) SetNetworkGroupDelay(owner string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ngs.SetDelay(owner, d)
}

// NetworkGroups returns owner's groups (created through the API), oldest first.
func (s *Server) NetworkGroups(owner string) []NetworkGroupView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ngs.Groups(owner)
}

// DeleteNetworkGroupOutOfBand removes a group as a user of the console would.
func (s *Server) DeleteNetworkGroupOutOfBand(owner, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ngs.Delete(owner, id)
}
