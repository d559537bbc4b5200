package kinds

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels and annotations the operator puts on the Secrets it owns. The manager caches only
// Secrets carrying LabelManagedBy, so unrelated Secrets cost no memory.
const (
	LabelManagedBy  = Group + "/managed-by"
	ManagedByValue  = "clever-operator"
	LabelRole       = Group + "/role"
	RoleSource      = "source"
	RoleCredentials = "credentials"
	LabelKind       = Group + "/kind"

	AnnotationAddonID = Group + "/addon-id"
	// AnnotationSkipDeprovision is the escape hatch: a resource carrying it with value "true"
	// is released on deletion without deleting its add-on (the event says what was left).
	AnnotationSkipDeprovision = Group + "/skip-deprovision"
)

// maxReleaseName is Helm's limit on release names.
const maxReleaseName = 53

// SecretName is the Secret that holds the credentials for the user's pods.
func SecretName(obj *unstructured.Unstructured) string {
	if n := SecretSpecOf(obj).Name; n != "" {
		return n
	}
	return obj.GetName() + "-secrets"
}

// SourceSecretName is the operator-owned Secret the engine writes the add-on's env into and
// the Helm side renders from. The kind is in the name so kinds never read each other's data.
func (k *Kind) SourceSecretName(name string) string {
	return name + "-" + k.Lower() + "-source"
}

// IsSourceSecret says whether o carries the labels the engine writes on the source Secrets of
// this kind (role=source, kind=<kind>): the Secrets the engine's and the Helm side's watches
// of source Secrets select.
func (k *Kind) IsSourceSecret(o client.Object) bool {
	l := o.GetLabels()
	return l[LabelRole] == RoleSource && l[LabelKind] == k.Lower()
}

// ReleaseName is the Helm release of a resource: prefixed by the kind so that a PostgreSql and
// a Redis of the same name get their own release, shortened with a hash to Helm's limit.
func (k *Kind) ReleaseName(name string) string {
	n := k.Lower() + "-" + name
	if len(n) <= maxReleaseName {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	h := hex.EncodeToString(sum[:])[:8]
	return n[:maxReleaseName-9] + "-" + h
}

// ValidOwnerID says whether id has the shape of a Clever Cloud owner id: orga_… or user_…
// followed by something. Anything else cannot name an organisation, so nothing can have been
// created there.
func ValidOwnerID(id string) bool {
	for _, p := range []string{"orga_", "user_"} {
		if strings.HasPrefix(id, p) && len(id) > len(p) {
			return true
		}
	}
	return false
}
