// Package statusmerge is the merge of the two writers of an add-on resource's status, the
// engine (internal/addon) and the Helm reconciler (internal/hybrid), with its rules written
// once here (docs/design.md, "Status"):
//
//  1. Ownership. Helm owns conditions of its own and deployedRelease (it rebuilds status as
//     {conditions, deployedRelease}); the engine owns every other field of the kinds' status
//     types (EngineFields, derived from api/) and the conditions of EngineConditions. Ready
//     and Stalled belong to neither: both are derived from all the conditions
//     (status.ApplyReady) on every write of either side, so neither goes stale.
//  2. The engine writes once per pass, only on change, through internal/patch; a conflict is
//     replayed on a live copy with the pass's recorded changes, so Helm's part stays.
//  3. Every Helm status write is rewritten (Helm.Update): the rendered manifest is dropped
//     (it holds the credentials), Helm's internal Paused condition is dropped, the engine's
//     fields and conditions are copied from the cache's copy (a field or condition the engine
//     removed is removed), Ready and Stalled are derived. The write is rebased on the cache's
//     copy when that is newer (no conflict, no second Helm reconcile), and not sent when it
//     changes nothing (conditions compared in any order), nor while the Helm side is paused
//     and would only add Unknown conditions to a resource it never rendered.
//  4. First publication (Board): the engine's pass that first publishes a resource's
//     credentials leaves its status to the Helm side's write after the install, which carries
//     both: one status write per new resource instead of two. It is an economy only; the
//     engine writes the status itself whenever the Helm side has not.
//  5. New resources (MarkNew): when the Helm side's client puts the engine's finalizer on a
//     resource with its own, the engine's next pass is told it is that resource's first.
package statusmerge

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/clever-operator/clever-operator/api/v1"
	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/api/v1beta1"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/status"
)

// HelmFields are the status fields the Helm reconciler writes.
var HelmFields = []string{"conditions", "deployedRelease"}

// EngineFields are the status fields the engine writes: every field of the add-on kinds'
// status types but Helm's own, so a field added to a type needs nothing else.
var EngineFields = statusFields(kinds.Kinds, HelmFields)

// EngineConditions are the condition types the engine owns.
var EngineConditions = []string{status.TypeAddonReady, status.TypePaused, status.TypeMigrating, status.TypeThrottled,
	status.TypeDrifted, status.TypeSynced, status.TypeVersionUpdate, status.TypeBackupStale, status.TypeNetworkGroups}

// Merge copies the engine's fields and conditions from live into u, the status the Helm
// side is about to write; what live lacks (the engine removed it) is removed from u.
func Merge(u, live *unstructured.Unstructured) {
	for _, f := range EngineFields {
		if v, found, _ := unstructured.NestedFieldCopy(live.Object, "status", f); found {
			_ = unstructured.SetNestedField(u.Object, v, "status", f)
		} else {
			unstructured.RemoveNestedField(u.Object, "status", f)
		}
	}
	conds, liveConds := status.Conditions(u), status.Conditions(live)
	for _, t := range EngineConditions {
		lc, ok := status.Find(liveConds, t)
		i := slices.IndexFunc(conds, func(c status.Condition) bool { return c.Type == t })
		switch {
		case !ok:
			conds, _ = status.Remove(conds, t)
		case i >= 0:
			conds[i] = lc // in place: Helm's order is kept
		default:
			conds = append(conds, lc)
		}
	}
	status.SetConditions(u, conds)
}

// statusFields lists the JSON names of the status fields of ks's Go types, without except.
func statusFields(ks []kinds.Kind, except []string) []string {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1.AddToScheme, v1alpha1.AddToScheme, v1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	set := map[string]bool{}
	for _, k := range ks {
		obj, err := scheme.New(k.GVK)
		if err != nil {
			panic(fmt.Sprintf("kind %s has no Go type in api/: %v", k.GVK, err))
		}
		f, ok := reflect.TypeOf(obj).Elem().FieldByName("Status")
		if !ok {
			panic(fmt.Sprintf("kind %s has no Status field", k.GVK))
		}
		jsonFields(f.Type, set)
	}
	var out []string
	for name := range set {
		if !slices.Contains(except, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// jsonFields adds the JSON names of struct t's fields to set, inline structs flattened.
func jsonFields(t reflect.Type, set map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case name == "" && (f.Anonymous || strings.Contains(opts, "inline")):
			jsonFields(f.Type, set)
		case name != "":
			set[name] = true
		}
	}
}
