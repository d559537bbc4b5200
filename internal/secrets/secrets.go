// Package secrets holds what makes the Secrets the operator writes in a tenant's namespace
// trustworthy: their signature (an HMAC with the operator's claim key over namespace, name,
// add-on ids and data), which is verified before any is acted on, and the credentials hash.
package secrets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// AnnotationCredentialsHash is a content hash of the published credentials (no values).
const AnnotationCredentialsHash = kinds.Group + "/credentials-hash"

// AnnotationRealID records the add-on's provider-side id (the config-provider endpoints and
// the periodic refresh need it without another lookup).
const AnnotationRealID = kinds.Group + "/real-id"

// AnnotationSignature is the operator's signature of a Secret it writes and reads back (the
// source Secrets, the CellarBuckets' Secrets): an HMAC, with the operator's claim key, of
// the Secret's namespace and name, its addon-id and real-id annotations and the hash of its
// data. Those Secrets live in the tenant's namespace, where the namespace's editors can
// change their annotations and data: the engine, the Helm side and the cache trust one only
// when its signature verifies (Verified), so a forged add-on id, real id or data is
// never acted on, and a Secret a tenant labels as the operator's costs the cache its
// metadata only (docs/security.md, "Threat model").
const AnnotationSignature = kinds.Group + "/signature"

const signatureVersion = "v1"

// Signature is the signature of a Secret in namespace ns named name, holding data of
// hash dataHash (Hash), for add-on addonID (real id realID; both empty for a
// Secret that names no add-on).
func Signature(key []byte, ns, name, addonID, realID, dataHash string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("clever-operator secret " + signatureVersion))
	for _, f := range []string{ns, name, addonID, realID, dataHash} {
		m.Write([]byte{0})
		m.Write([]byte(f))
	}
	return signatureVersion + "/" + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Verified says whether sec is exactly as the operator wrote it: its signature
// verifies for its namespace, name, add-on id, real id and data. An empty key verifies
// nothing.
func Verified(key []byte, sec *corev1.Secret) bool {
	if len(key) == 0 || sec == nil {
		return false
	}
	sig, ok := sec.Annotations[AnnotationSignature]
	if !ok {
		return false
	}
	want := Signature(key, sec.Namespace, sec.Name, sec.Annotations[kinds.AnnotationAddonID], sec.Annotations[AnnotationRealID], DataHash(sec))
	return hmac.Equal([]byte(sig), []byte(want))
}

// Hash is a stable hash of the credentials, safe to show.
func Hash(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(data[k]), data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// DataHash hashes a Secret's actual data, so a hand-edited source Secret is corrected.
func DataHash(s *corev1.Secret) string {
	return Hash(Strings(s.Data))
}

// Sign sets sec's signature for its namespace, name, addon-id and real-id annotations
// and data (a Secret that names no add-on, such as a CellarBucket's).
func Sign(key []byte, sec *corev1.Secret) {
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	sec.Annotations[AnnotationSignature] = Signature(key, sec.Namespace, sec.Name, sec.Annotations[kinds.AnnotationAddonID], sec.Annotations[AnnotationRealID], DataHash(sec))
}

// Strings is a Secret's data as strings.
func Strings(data map[string][]byte) map[string]string {
	out := make(map[string]string, len(data))
	for k, v := range data {
		out[k] = string(v)
	}
	return out
}
