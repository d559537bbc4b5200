package envtestutil

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// MinSecretLen is the shortest value the leak check looks for: shorter ones (ports, versions)
// would match by chance.
const MinSecretLen = 8

// AddonSecretValues returns every environment value of every add-on the fake holds (and the
// download URLs and commands of its backups, as the fake lists them now), except the
// values that are public by design: those the operator mirrors into status (status.url,
// status.admin_url: kinds' URLStatus variables), the owner ids and the add-ons' own ids
// (ADDON_PULSAR_TENANT / _NAMESPACE), and values shorter than MinSecretLen.
func AddonSecretValues(fake *fakeapi.Server) []string {
	public := map[string]bool{}
	for _, k := range kinds.Kinds {
		for _, env := range k.URLStatus {
			public[env] = true
		}
	}
	var out []string
	for owner, list := range fake.AllAddons() {
		for _, a := range list {
			for _, v := range fake.Env(a.ID) {
				if public[v.Name] || v.Value == owner || v.Value == a.ID || v.Value == a.RealID || len(v.Value) < MinSecretLen {
					continue
				}
				out = append(out, v.Value)
			}
			// Backup download URLs and restore commands (kinds Clever Cloud backs up).
			out = append(out, fake.BackupSecrets(a.ID)...)
		}
	}
	return out
}

// CredentialValues returns the secret parts of fake credential sets: token, token secret and
// consumer secret (the consumer key is sent in clear in every OAuth1 header and is not one).
func CredentialValues(creds ...fakeapi.Credential) []string {
	var out []string
	for _, c := range creds {
		out = append(out, c.Token, c.Secret, c.ConsumerSecret)
	}
	return out
}

// OperatorOutput gathers everything the operator writes where users or log collectors can
// read it: its logs, every Event in the cluster, and the status (conditions and their
// messages included) of every resource of every kind and version it manages.
func OperatorOutput(ctx context.Context, k8s client.Client, logs string) (map[string]string, error) {
	out := map[string]string{"operator logs": logs}
	evs := &corev1.EventList{}
	if err := k8s.List(ctx, evs); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(evs)
	out["events"] = string(b)
	for _, k := range kinds.Kinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err := k8s.List(ctx, l); err != nil {
			return nil, fmt.Errorf("listing %s: %w", k.GVK.Kind, err)
		}
		var st strings.Builder
		for _, it := range l.Items {
			b, _ := json.Marshal(it.Object["status"])
			st.Write(b)
		}
		out[k.GVK.Kind+" status"] = st.String()
	}
	return out, nil
}

// Leaks returns one line per secret value (or base64 form of it: standard, URL-safe, raw)
// found in one of the texts, naming the text and the value's length, never the value.
func Leaks(secrets []string, texts map[string]string) []string {
	seen := map[string]bool{}
	var found []string
	names := make([]string, 0, len(texts))
	for n := range texts {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, s := range secrets {
		if len(s) < MinSecretLen || seen[s] {
			continue
		}
		seen[s] = true
		forms := map[string]string{
			"value":          s,
			"base64":         base64.StdEncoding.EncodeToString([]byte(s)),
			"base64 (url)":   base64.URLEncoding.EncodeToString([]byte(s)),
			"base64 (raw)":   base64.RawStdEncoding.EncodeToString([]byte(s)),
			"base64 (twice)": base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(s)))),
		}
		for _, n := range names {
			for form, v := range forms {
				if strings.Contains(texts[n], v) {
					found = append(found, fmt.Sprintf("secret #%d (%d bytes) appears as %s in %s", i, len(s), form, n))
				}
			}
		}
	}
	sort.Strings(found)
	return found
}
