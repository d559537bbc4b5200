package kinds

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Publication is what the Helm side publishes for one resource, read from spec.secret.
// The engine and the value translator both build it, so they never disagree.
type Publication struct {
	// SecretName is the credentials Secret ("" when Disabled).
	SecretName string
	// Disabled: no credentials Secret and no binding Secret.
	Disabled    bool
	Labels      map[string]string
	Annotations map[string]string
	KeyPrefix   string
	Templates   map[string]string
	// ConfigMapName is the ConfigMap with the non-secret keys ("" when not asked for).
	ConfigMapName string
	// BindingName is the servicebinding.io Secret ("" when the kind has none or Disabled).
	BindingName string
}

// PublicationFor reads spec.secret.
func (k *Kind) PublicationFor(obj *unstructured.Unstructured) Publication {
	spec := SecretSpecOf(obj)
	p := Publication{SecretName: SecretName(obj), Disabled: spec.Disabled, Labels: spec.Labels, Annotations: spec.Annotations,
		KeyPrefix: spec.KeyPrefix, Templates: spec.Templates}
	if spec.ConfigMap != nil {
		p.ConfigMapName = spec.ConfigMap.Name
		if p.ConfigMapName == "" {
			p.ConfigMapName = obj.GetName() + "-config"
		}
	}
	if p.Disabled {
		p.SecretName = ""
		return p
	}
	if k.Binding != nil {
		p.BindingName = BindingSecretName(p.SecretName)
	}
	return p
}

// BindingSecretName is the servicebinding.io Secret published next to a credentials Secret.
func BindingSecretName(secretName string) string {
	return shorten(secretName+"-binding", 253)
}

// shorten cuts a name to n characters, keeping it unique with a hash suffix.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(s[:n-9], "-.") + "-" + hex.EncodeToString(sum[:])[:8]
}

// SecretData is the credentials Secret's data without the templates: the add-on's keys
// with the prefix.
func (p Publication) SecretData(data map[string]string) map[string]string {
	out := make(map[string]string, len(data))
	for k, v := range data {
		out[p.KeyPrefix+k] = v
	}
	return out
}

// ConfigMapData is the non-secret part of the credentials, with the prefix.
func (p Publication) ConfigMapData(k *Kind, data map[string]string) map[string]string {
	out := map[string]string{}
	for _, key := range k.PublicKeys {
		if v, ok := data[key]; ok {
			out[p.KeyPrefix+key] = v
		}
	}
	return out
}

// BindingData is the servicebinding.io Secret's data: `type`, `provider` and the kind's
// well-known entries that the add-on has.
func (k *Kind) BindingData(data map[string]string) map[string]string {
	if k.Binding == nil {
		return nil
	}
	out := map[string]string{"type": k.Binding.Type, "provider": BindingProvider}
	for entry, key := range k.Binding.Entries {
		if v, ok := data[key]; ok && v != "" {
			out[entry] = v
		}
	}
	return out
}
