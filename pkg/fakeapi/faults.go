package fakeapi

import (
	"net/http"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/faults"
)

// Fault injection is described and applied by pkg/fakeapi/faults; the
// Server holds one faults.Injector and applies it in apiHandler.
type (
	// Faults describes the failures the fake injects into API requests
	// (faults.Faults).
	Faults = faults.Faults
	// OwnerFault is a fault scoped to one organisation (or user) id
	// (faults.OwnerFault).
	OwnerFault = faults.OwnerFault
)

// SetFaults replaces the injected faults. It also resets the rate limiter.
func (s *Server) SetFaults(f Faults) { s.faults.Set(f) }

// Faults returns a copy of the injected faults.
func (s *Server) Faults() Faults { return s.faults.Get() }

// SetOwnerFault sets (f not nil) or lifts (nil) the fault of one owner, leaving every other
// fault as it is: a test breaks its own organisation without touching the others'.
func (s *Server) SetOwnerFault(owner string, f *OwnerFault) { s.faults.SetOwner(owner, f) }

// revokedToken reports whether the request is signed with a token of Faults.RevokedTokens
// (the OAuth1 oauth_token or the bearer token).
func (s *Server) revokedToken(r *http.Request) bool { return s.faults.Revoked(requestToken(r)) }

// providerHidden reports whether Faults.HiddenProviders hides providerID.
func (s *Server) providerHidden(providerID string) bool { return s.faults.Hidden(providerID) }
