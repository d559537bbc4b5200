package addon

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
)

// A Secret the operator signed verifies only as written: any change a namespace editor can
// make to what the operator reads back (the add-on id, the real id, the data, or the Secret's
// copy under another name or namespace) breaks the signature, and so does another key.
func TestSecretVerified(t *testing.T) {
	signed := func() *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "db-postgresql-source",
			Annotations: map[string]string{kinds.AnnotationAddonID: "addon_b", secrets.AnnotationRealID: "postgresql_b"}},
			Data: map[string][]byte{"POSTGRESQL_ADDON_PASSWORD": []byte("pw")}}
		secrets.Sign(testClaimKey, s)
		return s
	}
	if !secrets.Verified(testClaimKey, signed()) {
		t.Fatal("the operator's own Secret does not verify")
	}
	for name, edit := range map[string]func(*corev1.Secret){
		"another add-on id":  func(s *corev1.Secret) { s.Annotations[kinds.AnnotationAddonID] = "addon_a" },
		"another real id":    func(s *corev1.Secret) { s.Annotations[secrets.AnnotationRealID] = "postgresql_a" },
		"changed data":       func(s *corev1.Secret) { s.Data["POSTGRESQL_ADDON_PASSWORD"] = []byte("other") },
		"added data":         func(s *corev1.Secret) { s.Data["X"] = []byte("1") },
		"no data":            func(s *corev1.Secret) { s.Data = nil },
		"copied elsewhere":   func(s *corev1.Secret) { s.Namespace = "team-c" },
		"renamed":            func(s *corev1.Secret) { s.Name = "other-postgresql-source" },
		"no signature":       func(s *corev1.Secret) { delete(s.Annotations, secrets.AnnotationSignature) },
		"signature garbled":  func(s *corev1.Secret) { s.Annotations[secrets.AnnotationSignature] += "x" },
		"signed with no key": func(s *corev1.Secret) { secrets.Sign(nil, s) },
	} {
		s := signed()
		edit(s)
		if secrets.Verified(testClaimKey, s) {
			t.Errorf("%s: verifies", name)
		}
	}
	if secrets.Verified([]byte("another key of 32 bytes at least!!"), signed()) || secrets.Verified(nil, signed()) {
		t.Error("verifies with another key, or with none")
	}
}
