package credentials

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/status"
)

// What a Reference names, for messages.
const (
	ReferenceAddon        = "add-on"
	ReferenceNetworkGroup = "Network Group"
)

// Reference is one use by id of an existing Clever Cloud object.
type Reference struct {
	// What is ReferenceAddon or ReferenceNetworkGroup.
	What string
	// ID is the object's id (addon_..., ng_...).
	ID string
	// Organisation is where it is looked for ("" when unknown), for the message.
	Organisation string
	// Namespace is the namespace of the resource naming it.
	Namespace string
	// Field names the field that names it (spec.cellar.addonId, ...), for the message.
	Field string
	// CreatedHere is the caller's evidence, from records only the operator writes, that the
	// object was created from Namespace.
	CreatedHere bool
}

// MayReference decides whether a resource may use the object ref names: nil when it may (it
// was created from the resource's namespace, or grant allows binding it), else the refusal,
// reason BindingNotAllowed, naming the id, the namespace and how an admin grants it. A nil
// grant allows nothing beyond what the namespace created.
func MayReference(ref Reference, grant *Grant) *RefusedError {
	if ref.CreatedHere || (grant != nil && grant.AllowsBinding(ref.ID)) {
		return nil
	}
	src := "the operator's credentials"
	if grant != nil && grant.Source != "" {
		src = grant.Source
	}
	what := ref.What + " " + ref.ID
	if ref.Organisation != "" {
		what += " in organisation " + ref.Organisation
	}
	if ref.Field != "" {
		what += " (" + ref.Field + ")"
	}
	how := "binding.any, or its id in binding.addonIds"
	origin := ""
	switch ref.What {
	case ReferenceNetworkGroup:
		how = "binding.any"
		origin = " (no NetworkGroup of the namespace records it)"
	case ReferenceAddon:
		if ref.Field == "spec.cellar.addonId" {
			origin = " (no Cellar of the namespace records it)"
		}
	}
	return &RefusedError{Reason: status.ReasonBindingNotAllowed, Message: fmt.Sprintf(
		"%s was not created from namespace %s%s, and %s do not allow binding it (an admin grants it in spec.binding of the credentials object: %s)",
		what, ref.Namespace, origin, src, how)}
}

// RecordedIn says whether a live resource of kind gvk in namespace ns records id at field of
// its status (which only the operator writes): a Cellar's status.addon, a NetworkGroup's
// status.id. It is the evidence of MayReference for objects named by id.
func RecordedIn(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, ns, id string, field ...string) (bool, error) {
	if id == "" {
		return false, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return false, err
	}
	for i := range list.Items {
		if v, _, _ := unstructured.NestedString(list.Items[i].Object, append([]string{"status"}, field...)...); v == id {
			return true, nil
		}
	}
	return false, nil
}
