package addon

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
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
	spec := secretSpecOf(obj)
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

// TemplateFuncs are the functions spec.secret.templates may use: sprig's, without env and
// expandenv, as in Helm (the chart renders the templates with Helm's tpl).
func TemplateFuncs() template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	return f
}

// TemplateError is a spec.secret.templates entry that cannot be rendered. Its message names
// the key and the cause and never carries a credential value.
type TemplateError struct{ Msg string }

func (e *TemplateError) Error() string { return e.Msg }

// RenderTemplates renders spec.secret.templates over the add-on's raw keys, failing on a
// template that does not parse, names a key the add-on does not have, or fails to execute.
// Any credential value an error message would quote is redacted.
func RenderTemplates(templates, data map[string]string) (map[string]string, error) {
	keys := make([]string, 0, len(templates))
	for k := range templates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make(map[string]any, len(data))
	for k, v := range data {
		vals[k] = v
	}
	out := make(map[string]string, len(templates))
	for _, key := range keys {
		t, err := template.New(key).Option("missingkey=error").Funcs(TemplateFuncs()).Parse(templates[key])
		if err != nil {
			return nil, &TemplateError{Msg: fmt.Sprintf("spec.secret.templates[%s] does not parse: %s", key, redact(err.Error(), data))}
		}
		var b strings.Builder
		if err := t.Execute(&b, vals); err != nil {
			msg := err.Error()
			var ee template.ExecError
			if errors.As(err, &ee) && strings.Contains(msg, "map has no entry for key") {
				msg += fmt.Sprintf(" (the add-on's keys are: %s)", strings.Join(sortedKeys(data), ", "))
			}
			return nil, &TemplateError{Msg: fmt.Sprintf("spec.secret.templates[%s] cannot be rendered: %s", key, redact(msg, data))}
		}
		out[key] = b.String()
	}
	return out, nil
}

// redact replaces every credential value found in msg.
func redact(msg string, data map[string]string) string {
	vals := make([]string, 0, len(data))
	for _, v := range data {
		if len(v) >= 3 {
			vals = append(vals, v)
		}
	}
	// Longest first, so a value containing another is redacted whole.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		msg = strings.ReplaceAll(msg, v, "[redacted]")
	}
	const maxLen = 600
	if len(msg) > maxLen {
		msg = msg[:maxLen] + "…"
	}
	return msg
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
