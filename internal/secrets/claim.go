package secrets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// The addon-claim annotation (kinds.AnnotationAddonClaim) the engine writes on the resource
// that created an add-on: "v1/<addon id>/<kind>/<name>/<MAC>", the MAC of (add-on, namespace,
// kind, name) under the operator's claim key. Copied to another namespace, it does not verify.
const claimVersion = "v1"

// Claim is a parsed addon-claim annotation.
type Claim struct {
	AddonID, Kind, Name string
	// Valid: signed by the operator's key for the resource's namespace.
	Valid bool
}

func claimMAC(key []byte, addonID, namespace, kind, name string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("clever-operator addon-claim " + claimVersion))
	for _, f := range []string{addonID, namespace, kind, name} {
		m.Write([]byte{0})
		m.Write([]byte(f))
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// ClaimValue is the annotation value the operator writes for add-on addonID created by the
// resource kind/name in namespace.
func ClaimValue(key []byte, addonID, namespace, kind, name string) string {
	return strings.Join([]string{claimVersion, addonID, kind, name, claimMAC(key, addonID, namespace, kind, name)}, "/")
}

// ParseClaim reads obj's addon-claim annotation, verified with key (none: never valid); nil
// when there is none.
func ParseClaim(key []byte, obj metav1.Object) *Claim {
	v, ok := obj.GetAnnotations()[kinds.AnnotationAddonClaim]
	if !ok {
		return nil
	}
	parts := strings.Split(v, "/")
	if len(parts) != 5 || parts[0] != claimVersion || parts[1] == "" {
		return &Claim{}
	}
	c := &Claim{AddonID: parts[1], Kind: parts[2], Name: parts[3]}
	if len(key) > 0 {
		want := claimMAC(key, c.AddonID, obj.GetNamespace(), c.Kind, c.Name)
		c.Valid = hmac.Equal([]byte(want), []byte(parts[4]))
	}
	return c
}

// Own says whether the claim proves that the resource kind/name (in the namespace it was
// verified for) created the add-on.
func (c *Claim) Own(kind, name string) bool {
	return c != nil && c.Valid && c.Kind == kind && c.Name == name
}
