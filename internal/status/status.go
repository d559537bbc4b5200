// Package status holds the one pure function that derives the Ready condition from the
// engine's AddonReady condition and the Helm reconciler's conditions, plus small helpers to
// read and write conditions on unstructured objects. Both status writers (the engine and the
// wrapper around the Helm reconciler's client) call it, so Ready never goes stale.
package status

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Condition types.
const (
	TypeReady      = "Ready"
	TypeAddonReady = "AddonReady"
	TypeStalled    = "Stalled"

	// Helm reconciler (helm-operator-plugins) condition types.
	TypeDeployed       = "Deployed"
	TypeReleaseFailed  = "ReleaseFailed"
	TypeIrreconcilable = "Irreconcilable"
	TypePaused         = "Paused"
	TypeInitialized    = "Initialized"

	// TypeSynced is False while the last Clever Cloud call for a Ready resource failed
	// transiently (5xx, timeout, outage). Ready keeps its value: the add-on keeps serving and
	// its Secret stays; the condition goes at the next successful call.
	TypeSynced = "Synced"
	// TypeThrottled is set while Clever Cloud (or the operator's own budget) throttles the
	// resource's calls. It does not flip Ready: the add-on keeps serving. (Its reason is
	// "Throttled" too.)
	TypeThrottled = "Throttled"
	// TypeDrifted is set when the periodic refresh finds the add-on changed outside the
	// operator (plan, region or version). It is a report: Ready is untouched, and the next
	// change of the resource's spec converges the add-on to the spec again (a migration).
	TypeDrifted = "Drifted"
	// TypeMigrating carries the running step of a Clever Cloud migration (Ready does not look
	// at it: the old add-on serves until the switch).
	TypeMigrating = "Migrating"
	// TypeVersionUpdate reports spec.version of the operator add-ons (Keycloak, Metabase,
	// Matomo, Otoroshi).
	TypeVersionUpdate = "VersionUpdate"
	// TypeBackupStale reports the backups of a kind Clever Cloud backs up: True when the newest
	// backup is older than the resource's maximum age (or there is none and the resource is
	// older than it), False when it is recent, Unknown when the maximum age does not parse. A
	// warning like Drifted: Ready never looks at it.
	TypeBackupStale = "BackupStale"
	// TypeNetworkGroups reports the add-on's memberships of the Network Groups in
	// spec.networkGroups: True when it is a member of every one, False while it joins or
	// when one cannot be joined. Ready is False while it is False (workloads may rely on the
	// private host name), with its reason and message.
	TypeNetworkGroups = "NetworkGroups"
)

// Reasons of the engine's report conditions (Drifted, Migrating, VersionUpdate).
const (
	ReasonPlanDrift       = "PlanDrift"
	ReasonRegionDrift     = "RegionDrift"
	ReasonVersionDrift    = "VersionDrift"
	ReasonMigrating       = "Migrating"
	ReasonMigrated        = "Migrated"
	ReasonMigrationFailed = "MigrationFailed"
	ReasonVersionUpdated  = "VersionUpdated"
	ReasonVersionUpToDate = "VersionUpToDate"
	// BackupStale reasons: ReasonBackupStale (True), ReasonBackupRecent (False),
	// ReasonInvalidBackupMaxAge (Unknown: the backup-max-age annotation does not parse).
	ReasonBackupStale         = "BackupStale"
	ReasonBackupRecent        = "BackupRecent"
	ReasonInvalidBackupMaxAge = "InvalidBackupMaxAge"
	// ReasonBackupsUnreadable (Unknown): the backups list could not be read (an API error other
	// than throttling or an outage).
	ReasonBackupsUnreadable = "BackupsUnreadable"

	// NetworkGroups reasons: ReasonNetworkGroupsJoined (True); the others False.
	ReasonNetworkGroupsJoined = "Joined"
	// ReasonNetworkGroupJoining: the member was asked for; Clever Cloud adds it shortly.
	ReasonNetworkGroupJoining = "NetworkGroupJoining"
	// ReasonNetworkGroupNotFound: no such NetworkGroup resource in the namespace, or no such
	// group in the organisation.
	ReasonNetworkGroupNotFound = "NetworkGroupNotFound"
	// ReasonNetworkGroupNotReady: the NetworkGroup resource is not Ready yet.
	ReasonNetworkGroupNotReady = "NetworkGroupNotReady"
	// ReasonNetworkGroupsNotSupported: the provider or plan cannot join a Network Group.
	ReasonNetworkGroupsNotSupported = "NetworkGroupsNotSupported"
	// ReasonNetworkGroupFailed: Clever Cloud refused or failed a membership call.
	ReasonNetworkGroupFailed = "NetworkGroupFailed"
)

// Stable CamelCase reasons.
const (
	ReasonProvisioning       = "Provisioning"
	ReasonProvisioned        = "Provisioned"
	ReasonPlanNotFound       = "PlanNotFound"
	ReasonInvalidSpec        = "InvalidSpec"
	ReasonInvalidCredentials = "InvalidCredentials"
	ReasonAPIUnavailable     = "ApiUnavailable"
	ReasonAPIError           = "ApiError"
	ReasonSecretConflict     = "SecretConflict"
	// ReasonSecretTemplateInvalid: a spec.secret.templates entry cannot be rendered.
	ReasonSecretTemplateInvalid = "SecretTemplateInvalid"
	ReasonRendering             = "Rendering"
	ReasonRenderFailed          = "RenderFailed"
	ReasonDeleting              = "Deleting"
	ReasonDeleteFailed          = "DeleteFailed"
	ReasonAddonNotFound         = "AddonNotFound"
	ReasonAddonMissing          = "AddonMissing"
	ReasonPauseRequested        = "PauseRequested"
	// ReasonVersionNotAvailable: the version asked for is not one Clever Cloud announces for
	// the provider (the message lists those it does).
	ReasonVersionNotAvailable = "VersionNotAvailable"
	// ReasonProviderNotFound: the generic Addon's spec.providerId is not in the Clever Cloud
	// catalogue the organisation sees (the message lists the providers on offer).
	ReasonProviderNotFound = "ProviderNotFound"
	// ReasonRegionNotAvailable: the generic Addon's spec.region is not one its provider or
	// plan is offered in (the message lists those it is).
	ReasonRegionNotAvailable = "RegionNotAvailable"
	// ReasonDeletionUnconfirmed: the add-on's GET or DELETE answered 404 but no call that only
	// the real API answers confirmed it is gone (wrong endpoint, proxy, incident); the
	// finalizer stays until it is confirmed.
	ReasonDeletionUnconfirmed = "DeletionUnconfirmed"
	// ReasonDeletionDeferred: Clever Cloud refused the DELETE for now (the add-on is still
	// being provisioned); it is retried with a growing delay.
	ReasonDeletionDeferred = "DeletionDeferred"

	// Multi-tenant refusals (docs/security.md): no Clever Cloud call is made.
	//
	// ReasonCredentialsNotFound: spec.credentialsRef names no object (or the default
	// ClusterCleverCredentials was deleted while restricting).
	ReasonCredentialsNotFound = "CredentialsNotFound"
	// ReasonCredentialsNotAllowed: the ClusterCleverCredentials does not allow the namespace.
	ReasonCredentialsNotAllowed = "CredentialsNotAllowed"
	// ReasonOrganisationNotAllowed: spec.organisation is outside what the credentials allow.
	ReasonOrganisationNotAllowed = "OrganisationNotAllowed"
	// ReasonBindingNotAllowed: using by id an existing add-on (spec.addonId, a CellarBucket's
	// spec.cellar.addonId) or Network Group (spec.networkGroups) the namespace did not create,
	// without the credentials allowing it (or with a claim that does not verify).
	ReasonBindingNotAllowed = "BindingNotAllowed"
	// ReasonAddonClaimed: the add-on is already bound to another resource (named in the message).
	ReasonAddonClaimed = "AddonClaimed"
	// ReasonAddonManagedElsewhere: the add-on this resource created is now named after another
	// resource's UID (kubernetes::<Kind>::<uid>): a resource restored from this one's backup,
	// in this cluster or another, took it over. This one no longer touches it.
	ReasonAddonManagedElsewhere = "AddonManagedElsewhere"
)

// Terminal reasons need the user to act: they set Stalled=True so kstatus reports Failed.
var terminal = map[string]bool{
	ReasonPlanNotFound:           true,
	ReasonInvalidSpec:            true,
	ReasonInvalidCredentials:     true,
	ReasonCredentialsNotFound:    true,
	ReasonCredentialsNotAllowed:  true,
	ReasonOrganisationNotAllowed: true,
	ReasonBindingNotAllowed:      true,
	ReasonAddonClaimed:           true,
	ReasonAddonManagedElsewhere:  true,
	ReasonSecretConflict:         true,
	ReasonSecretTemplateInvalid:  true,
	ReasonRenderFailed:           true,
	ReasonAddonNotFound:          true,
	ReasonAddonMissing:           true,
	ReasonVersionNotAvailable:    true,
	ReasonProviderNotFound:       true,
	ReasonRegionNotAvailable:     true,
}

// IsTerminal says whether a reason needs the user to act.
func IsTerminal(reason string) bool { return terminal[reason] }

// Condition is the unstructured form shared with the Helm reconciler.
type Condition struct {
	Type, Status, Reason, Message string
	LastTransitionTime            string
	ObservedGeneration            int64
}

// Age is how long the condition has held its status at now (false when its transition time
// is missing or does not parse).
func (c Condition) Age(now time.Time) (time.Duration, bool) {
	since, err := time.Parse(time.RFC3339, c.LastTransitionTime)
	if err != nil {
		return 0, false
	}
	return now.Sub(since), true
}

// Conditions reads status.conditions.
func Conditions(obj *unstructured.Unstructured) []Condition {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	out := make([]Condition, 0, len(raw))
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		c := Condition{}
		c.Type, _ = m["type"].(string)
		c.Status, _ = m["status"].(string)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		c.LastTransitionTime, _ = m["lastTransitionTime"].(string)
		switch g := m["observedGeneration"].(type) {
		case int64:
			c.ObservedGeneration = g
		case float64:
			c.ObservedGeneration = int64(g)
		}
		out = append(out, c)
	}
	return out
}

// Find returns the condition of that type.
func Find(conds []Condition, t string) (Condition, bool) {
	for _, c := range conds {
		if c.Type == t {
			return c, true
		}
	}
	return Condition{}, false
}

// Set writes a condition into conds, keeping lastTransitionTime when the status is
// unchanged. It reports whether anything changed.
func Set(conds []Condition, c Condition, now time.Time) ([]Condition, bool) {
	for i, old := range conds {
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = now.UTC().Format(time.RFC3339)
		}
		if c.LastTransitionTime == "" {
			c.LastTransitionTime = now.UTC().Format(time.RFC3339)
		}
		changed := old != c
		conds[i] = c
		return conds, changed
	}
	c.LastTransitionTime = now.UTC().Format(time.RFC3339)
	return append(conds, c), true
}

// Remove drops the condition of that type.
func Remove(conds []Condition, t string) ([]Condition, bool) {
	out := conds[:0]
	removed := false
	for _, c := range conds {
		if c.Type == t {
			removed = true
			continue
		}
		out = append(out, c)
	}
	return out, removed
}

// SetConditions writes status.conditions.
func SetConditions(obj *unstructured.Unstructured, conds []Condition) {
	raw := make([]any, 0, len(conds))
	for _, c := range conds {
		m := map[string]any{"type": c.Type, "status": c.Status}
		if c.Reason != "" {
			m["reason"] = c.Reason
		}
		if c.Message != "" {
			m["message"] = c.Message
		}
		if c.LastTransitionTime != "" {
			m["lastTransitionTime"] = c.LastTransitionTime
		}
		if c.ObservedGeneration != 0 {
			m["observedGeneration"] = c.ObservedGeneration
		}
		raw = append(raw, m)
	}
	_ = unstructured.SetNestedSlice(obj.Object, raw, "status", "conditions")
}

// deletionRefusal: the resource's credentials refuse the deletion's Clever Cloud calls (it
// stays Terminating; the message says how to release it).
var deletionRefusal = map[string]bool{ReasonCredentialsNotFound: true, ReasonCredentialsNotAllowed: true, ReasonOrganisationNotAllowed: true, ReasonInvalidCredentials: true}

// Ready derives the Ready condition (and whether the resource is stalled) from the others.
func Ready(conds []Condition, deleting bool, generation int64) (ready Condition, stalled bool) {
	ready = Condition{Type: TypeReady, ObservedGeneration: generation}
	if deleting {
		ready.Status, ready.Reason, ready.Message = string(metav1.ConditionFalse), ReasonDeleting, "deleting the add-on at Clever Cloud"
		if a, ok := Find(conds, TypeAddonReady); ok && (a.Reason == ReasonDeleteFailed || a.Reason == ReasonDeletionUnconfirmed || a.Reason == ReasonDeletionDeferred || deletionRefusal[a.Reason]) {
			ready.Reason, ready.Message = a.Reason, a.Message
		}
		return ready, false
	}
	a, ok := Find(conds, TypeAddonReady)
	if !ok {
		ready.Status, ready.Reason, ready.Message = string(metav1.ConditionFalse), ReasonProvisioning, "waiting for the operator to provision the add-on"
		return ready, false
	}
	if a.Status != string(metav1.ConditionTrue) {
		ready.Status, ready.Reason, ready.Message = string(metav1.ConditionFalse), a.Reason, a.Message
		return ready, IsTerminal(a.Reason)
	}
	if ng, ok := Find(conds, TypeNetworkGroups); ok && ng.Status == string(metav1.ConditionFalse) {
		ready.Status, ready.Reason, ready.Message = string(metav1.ConditionFalse), ng.Reason, ng.Message
		return ready, ng.Reason == ReasonNetworkGroupsNotSupported || ng.Reason == ReasonBindingNotAllowed
	}
	if rf, ok := Find(conds, TypeReleaseFailed); ok && rf.Status == string(metav1.ConditionTrue) {
		ready.Status = string(metav1.ConditionFalse)
		if IsSecretConflict(rf.Message) {
			ready.Reason = ReasonSecretConflict
			ready.Message = "the credentials Secret already exists and is not managed by this resource; it was left untouched. " +
				"Set spec.secret.name to publish the credentials under another name. Helm said: " + truncate(rf.Message, 300)
		} else {
			ready.Reason, ready.Message = ReasonRenderFailed, "writing the credentials Secret failed: "+truncate(rf.Message, 300)
		}
		return ready, true
	}
	if ir, ok := Find(conds, TypeIrreconcilable); ok && ir.Status == string(metav1.ConditionTrue) {
		ready.Status, ready.Reason, ready.Message = string(metav1.ConditionFalse), ReasonRendering, "writing the credentials Secret: "+truncate(ir.Message, 300)
		return ready, false
	}
	if d, ok := Find(conds, TypeDeployed); ok && d.Status == string(metav1.ConditionTrue) {
		ready.Status, ready.Reason, ready.Message = string(metav1.ConditionTrue), ReasonProvisioned, a.Message
		return ready, false
	}
	// A pause makes the Helm reconciler set its conditions to Unknown and stop rendering: the
	// Secret it rendered stays, so a resource that was Ready stays Ready.
	if p, ok := Find(conds, TypePaused); ok && p.Status == string(metav1.ConditionTrue) {
		if prev, ok := Find(conds, TypeReady); ok && prev.Status == string(metav1.ConditionTrue) {
			ready.Status, ready.Reason, ready.Message = string(metav1.ConditionTrue), ReasonProvisioned, a.Message
			return ready, false
		}
	}
	ready.Status, ready.Reason, ready.Message = string(metav1.ConditionFalse), ReasonRendering, "add-on provisioned; writing the credentials Secret"
	return ready, false
}

// IsSecretConflict recognises Helm's refusal to adopt an object it does not own.
func IsSecretConflict(msg string) bool {
	return strings.Contains(msg, "exists and cannot be imported into the current release")
}

// ApplyReady recomputes Ready and Stalled on the object's conditions; it reports a change.
func ApplyReady(obj *unstructured.Unstructured, now time.Time) bool {
	return ApplyReadyPaused(obj, now, false)
}

// ApplyReadyPaused is ApplyReady for a write by the Helm side that knows it is paused
// (helmPaused) although the engine may not have recorded the user's pause yet: a resource
// that was Ready stays Ready, as with the engine's Paused condition.
func ApplyReadyPaused(obj *unstructured.Unstructured, now time.Time, helmPaused bool) bool {
	conds, changed := Derive(Conditions(obj), obj, now, helmPaused)
	if changed {
		SetConditions(obj, conds)
	}
	return changed
}

// Derive recomputes Ready and Stalled in conds, the conditions of obj (ApplyReadyPaused on
// decoded conditions); it reports a change.
func Derive(conds []Condition, obj *unstructured.Unstructured, now time.Time, helmPaused bool) ([]Condition, bool) {
	seen := conds
	if p, ok := Find(conds, TypePaused); helmPaused && (!ok || p.Status != string(metav1.ConditionTrue)) {
		seen = append(append([]Condition(nil), conds...), Condition{Type: TypePaused, Status: string(metav1.ConditionTrue)})
	}
	ready, stalled := Ready(seen, obj.GetDeletionTimestamp() != nil, obj.GetGeneration())
	conds, c1 := Set(conds, ready, now)
	var c2 bool
	if stalled {
		conds, c2 = Set(conds, Condition{Type: TypeStalled, Status: string(metav1.ConditionTrue), Reason: ready.Reason, Message: ready.Message, ObservedGeneration: obj.GetGeneration()}, now)
	} else {
		conds, c2 = Remove(conds, TypeStalled)
	}
	return conds, c1 || c2
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// HelmFailureShown says whether next's Ready newly reports the Helm side's failure to write
// the credentials Secret (SecretConflict or RenderFailed, derived from its ReleaseFailed
// condition while the add-on itself is ready) compared with was, and returns that Ready. Both
// sides derive Ready from all the conditions, so either one's status write may be the one
// that shows the failure first (the Helm side's, or the engine's when Helm's write came
// before the engine had reported the add-on): the write that shows it records the Warning.
func HelmFailureShown(was, next *unstructured.Unstructured) (Condition, bool) {
	ready, _ := Find(Conditions(next), TypeReady)
	if ready.Status == string(metav1.ConditionTrue) || (ready.Reason != ReasonSecretConflict && ready.Reason != ReasonRenderFailed) {
		return ready, false
	}
	if a, ok := Find(Conditions(next), TypeAddonReady); !ok || a.Status != string(metav1.ConditionTrue) {
		return ready, false // the engine's own reason: it records its own event
	}
	prev, _ := Find(Conditions(was), TypeReady)
	return ready, prev.Reason != ready.Reason || prev.Message != ready.Message
}
