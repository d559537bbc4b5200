// Package operatoraddons is the capability of Clever Cloud's "operator" add-ons (Keycloak,
// Metabase, Matomo, Otoroshi), whose row in the table of kinds names their v4 provider
// (Kind.Operator). They no longer publish
// their URLs and initial credentials as add-on environment variables: they are served by
// GET /v4/addon-providers/addon-<name>/addons/<realId> (clever-client.js
// src/clients/cc-api/commands/<name>/get-<name>-info-command.ts; Go SDK models/<name>.go).
// The engine fills their Secrets from that answer alone under the key names they always had,
// as Clever Cloud's own clients do: the Terraform provider's Create and Read
// (terraform-provider-clevercloud pkg/resources/software/keycloak/crud.go, otoroshi/crud.go)
// and clever-tools' `clever <operator> get` (src/lib/operator-commands.js operatorPrint) read
// the v4 answer (accessUrl, initialCredentials, api, envVars) and never the add-on's v2 env.
// The v2 env is read only for an add-on whose v4 answer lacks a key its Secret needs (one
// still on the old v2 env). They also act on annotations (reboot, rebuild) and on
// spec.version.
package operatoraddons

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/api/shared"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/internal/step"
)

// Annotations asking for a restart of an operator add-on: any new value is acted on once,
// and recorded in status (lastHandledRebootAt / lastHandledRebuildAt).
const (
	AnnotationRebootRequestedAt  = kinds.Group + "/reboot-requested-at"
	AnnotationRebuildRequestedAt = kinds.Group + "/rebuild-requested-at"
)

// Credentials reads an operator add-on's Secret data: its v4 answer, and its v2 env only when
// that answer lacks a required key (an add-on still on the old v2 env; kinds.OperatorData
// merges them). pending is set while Clever Cloud has not served what the Secret needs yet (v4
// answers 404 for an add-on it is still creating); no v2 read then. The v4 answer is returned
// for the pass to publish. Full passes and periodic refreshes read the same way: with today's
// API, one call.
func Credentials(ctx context.Context, s step.Pass, addonID, realID string) (data map[string]string, pending string, info *clevercloud.OperatorInfo, err error) {
	k := s.Kind()
	info, err = s.API().GetOperator(ctx, k.Operator, realID)
	switch {
	case clevercloud.IsNotFound(err):
		return nil, fmt.Sprintf("waiting for Clever Cloud to provision add-on %s (GET /v4/addon-providers/%s/addons/%s does not answer yet)", addonID, k.Operator, realID), nil, nil
	case err != nil:
		return nil, "", nil, err
	}
	data, missing := kinds.OperatorData(k.Operator, info, nil)
	if len(missing) > 0 {
		env, err := s.API().GetAddonEnv(ctx, s.Org(), addonID)
		if err != nil {
			return nil, "", nil, err
		}
		data, missing = kinds.OperatorData(k.Operator, info, clevercloud.EnvMap(env))
	}
	if len(missing) > 0 {
		return nil, fmt.Sprintf("waiting for Clever Cloud to provision add-on %s (not served yet: %s)", addonID, strings.Join(missing, ", ")), nil, nil
	}
	return data, "", info, nil
}

// SetStatus records the non-secret facts of a v4 answer (nil: nothing to record).
func SetStatus(st *kinds.Status, info *clevercloud.OperatorInfo) {
	if info == nil {
		return
	}
	st.Version, st.AccessURL, st.AvailableVersions = info.Version, info.AccessURL, nil
	for _, v := range info.AvailableVersions {
		st.AvailableVersions = append(st.AvailableVersions, shared.OfferedVersion(v))
	}
}

// operatorAction is a restart an annotation asks for, once per value.
type operatorAction struct {
	annotation string
	handled    func(*kinds.Status) *string // where the value acted on is recorded
	event      string
	verb       string
	call       func(credentials.API) func(context.Context, string, string) error
}

var operatorActionList = []operatorAction{
	{AnnotationRebootRequestedAt, func(st *kinds.Status) *string { return &st.LastHandledRebootAt }, status.EventAddonRebooted, "reboot", func(a credentials.API) func(context.Context, string, string) error { return a.RebootOperator }},
	{AnnotationRebuildRequestedAt, func(st *kinds.Status) *string { return &st.LastHandledRebuildAt }, status.EventAddonRebuilt, "rebuild", func(a credentials.API) func(context.Context, string, string) error { return a.RebuildOperator }},
}

// requested is the annotation's value not acted on yet ("" when none).
func (a operatorAction) requested(obj *unstructured.Unstructured, st *kinds.Status) string {
	req := obj.GetAnnotations()[a.annotation]
	if req == "" || *a.handled(st) == req {
		return ""
	}
	return req
}

// ActionsPending says whether a reboot/rebuild annotation asks for something not done
// yet (the pass then goes to the API even when nothing else changed).
func ActionsPending(obj *unstructured.Unstructured, st *kinds.Status) bool {
	for _, act := range operatorActionList {
		if act.requested(obj, st) != "" {
			return true
		}
	}
	return false
}

// Act acts on an existing operator add-on: the reboot/rebuild annotations (once
// per value) and spec.version (upgrade through POST …/version/update once the target is one
// Clever Cloud offers). Its error ends the pass.
func Act(ctx context.Context, s step.Pass, addon *clevercloud.Addon) error {
	obj, api, k := s.Object(), s.API(), s.Kind()
	for _, act := range operatorActionList {
		req := act.requested(obj, s.Status())
		if req == "" {
			continue
		}
		if err := act.call(api)(ctx, k.Operator, addon.RealID); err != nil {
			return s.FailAPI("asking Clever Cloud to "+act.verb+" the add-on", err)
		}
		s.Event(corev1.EventTypeNormal, act.event, fmt.Sprintf("Clever Cloud was asked to %s add-on %s (annotation %s=%q)", act.verb, addon.ID, act.annotation, req))
		handled := act.handled
		s.Update(func(st *kinds.Status) { *handled(st) = req })
	}
	want := kinds.SpecVersion.String(obj)
	if want == "" {
		return nil
	}
	info, err := api.GetOperator(ctx, k.Operator, addon.RealID)
	if clevercloud.IsNotFound(err) {
		return nil // still being created: credentials() reports it
	}
	if err != nil {
		return s.FailAPI("reading the add-on's version", err)
	}
	if info.Version == want || clevercloud.SameVersion(want, info.Version) {
		versionCondition(s, metav1.ConditionFalse, status.ReasonVersionUpToDate, fmt.Sprintf("add-on runs version %s as asked in spec.version", info.Version), "")
		return nil
	}
	target := fmt.Sprintf("%s@%d", want, obj.GetGeneration())
	if s.Status().LastVersionUpdate == target {
		return nil // asked already for this generation; wait for it
	}
	allowed := slices.Clone(info.AvailableVersions)
	check, cerr := api.CheckOperatorVersion(ctx, k.Operator, addon.RealID)
	switch {
	case cerr == nil:
		allowed = append(allowed, check.Available...)
	case clevercloud.IsNotFound(cerr):
		// Matomo offers no version update (clever-client.js has no command for it).
		if len(allowed) == 0 {
			versionCondition(s, metav1.ConditionFalse, status.ReasonVersionNotAvailable,
				fmt.Sprintf("Clever Cloud offers no version change for %s add-ons; spec.version %s is not applied (it runs %s)", k.GVK.Kind, want, info.Version), corev1.EventTypeWarning)
			return nil
		}
	default:
		return s.FailAPI("checking the add-on's versions", cerr)
	}
	slices.Sort(allowed)
	allowed = slices.Compact(allowed)
	if !slices.Contains(allowed, want) {
		versionCondition(s, metav1.ConditionFalse, status.ReasonVersionNotAvailable,
			fmt.Sprintf("spec.version %s is not offered by Clever Cloud for this %s add-on; available: %s (it runs %s)", want, k.Noun, strings.Join(allowed, ", "), info.Version), corev1.EventTypeWarning)
		return nil
	}
	updated, err := api.UpdateOperatorVersion(ctx, k.Operator, addon.RealID, want)
	if err != nil {
		if clevercloud.IsBadRequest(err) {
			versionCondition(s, metav1.ConditionFalse, status.ReasonVersionNotAvailable,
				fmt.Sprintf("Clever Cloud refused to move the add-on to version %s: %s", want, clevercloud.Message(err)), corev1.EventTypeWarning)
			return nil
		}
		return s.FailAPI("updating the add-on's version", err)
	}
	s.Event(corev1.EventTypeNormal, status.EventVersionUpdated, fmt.Sprintf("Clever Cloud was asked to move add-on %s from version %s to %s", addon.ID, info.Version, want))
	if updated != nil && updated.Version != "" {
		info.Version = updated.Version
	}
	version := info.Version
	s.Update(func(st *kinds.Status) { st.LastVersionUpdate, st.Version = target, version })
	s.Condition(status.TypeVersionUpdate, metav1.ConditionTrue, status.ReasonVersionUpdated, fmt.Sprintf("version update from %s to %s requested", version, want))
	return nil
}

// versionCondition sets the VersionUpdate condition, with an event of eventType when it
// changes (none when eventType is empty).
func versionCondition(s step.Pass, cs metav1.ConditionStatus, reason, msg, eventType string) {
	if s.Condition(status.TypeVersionUpdate, cs, reason, msg) && eventType != "" {
		s.Event(eventType, reason, msg)
	}
}

// Capability is the operator add-ons' actions as the pass calls them (step.Capability): an
// annotation not acted on yet makes a full pass due, and a full pass acts on an existing
// add-on unless the resource only observes it or is paused.
type Capability struct{ step.Hooks }

// Due: a reboot or rebuild annotation asks for something not done yet.
func (Capability) Due(obj *unstructured.Unstructured, st *kinds.Status, _ []status.Condition) bool {
	return ActionsPending(obj, st)
}

// Existing acts on the annotations and on spec.version (Act).
func (Capability) Existing(ctx context.Context, s step.Pass, addon *clevercloud.Addon) error {
	if s.ObserveOnly() || s.Paused() {
		return nil
	}
	return Act(ctx, s, addon)
}

// Source is the operator add-ons' credentials (step.Source): the v4 answer, the v2 env only
// for an add-on still on it (Credentials), whose non-secret facts (the version, the access URL)
// go to status.
type Source struct{}

func (Source) Read(ctx context.Context, s step.Pass, addon *clevercloud.Addon, _ bool) (step.Read, error) {
	data, pending, info, err := Credentials(ctx, s, addon.ID, addon.RealID)
	return read(data, pending, info), err
}

func (Source) NeedsRealID() bool    { return false }
func (Source) Waited() bool         { return false }
func (Source) ReportsVersion() bool { return true }

func read(data map[string]string, pending string, info *clevercloud.OperatorInfo) step.Read {
	r := step.Read{Data: data, Pending: pending}
	if info != nil {
		r.Status = func(st *kinds.Status) { SetStatus(st, info) }
	}
	return r
}
