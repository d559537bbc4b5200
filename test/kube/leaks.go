package kube

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// The one leak scanner of the suites, the bench and the chaos run: a set of secret values
// (Secrets), what the operator writes where users and log collectors read it (OperatorOutput,
// ClusterTexts, log files), and the findings, which name the place and the value's label,
// never the value.

// MinSecretLen is the shortest value the scanner looks for: shorter ones (ports, versions,
// regions, "true") are not credentials and would match by chance.
const MinSecretLen = 8

// Secrets is a set of secret values to look for, each with a label that says what it is
// (never the value). A value is searched as is, base64-encoded (standard and URL alphabets,
// padded or not, at each of the three byte alignments it can take inside a longer encoding)
// and base64-encoded twice (a Secret's data as a manifest of it holds it, encoded again).
type Secrets struct {
	needles map[string]string // needle -> label
}

// NewSecrets returns an empty set.
func NewSecrets() *Secrets { return &Secrets{needles: map[string]string{}} }

// Add records value under label (values shorter than MinSecretLen are ignored).
func (s *Secrets) Add(label, value string) {
	if len(value) < MinSecretLen {
		return
	}
	s.needles[value] = label
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for shift := range 3 {
			// Inside a longer base64 text the value starts at any of three alignments: encode it
			// behind shift filler bytes and keep only the characters that depend on it alone.
			src := append(bytes.Repeat([]byte{0}, shift), value...)
			e := enc.EncodeToString(src)
			lead := (shift*8 + 5) / 6 // characters touched by the filler
			e = e[lead:]
			// Drop the padding and the last character, which depends on what follows.
			e = trimPad(e)
			if len(e) > 1 {
				e = e[:len(e)-1]
			}
			if len(e) >= MinSecretLen {
				s.needles[e] = label + " (base64)"
			}
		}
	}
	s.needles[base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(value))))] = label + " (base64 twice)"
}

func trimPad(s string) string {
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	return s
}

// AddValues records values labelled by their position and length ("secret #3 (24 bytes)").
func (s *Secrets) AddValues(values ...string) {
	for i, v := range values {
		s.Add(fmt.Sprintf("secret #%d (%d bytes)", i, len(v)), v)
	}
}

// AddCredentials records the secret parts of fake credential sets: token, token secret and
// consumer secret (the consumer key is sent in clear in every OAuth1 header and is not one).
func (s *Secrets) AddCredentials(creds ...fakeapi.Credential) {
	for i, c := range creds {
		s.Add(fmt.Sprintf("OAuth token of credential set %d", i), c.Token)
		s.Add(fmt.Sprintf("OAuth token secret of credential set %d", i), c.Secret)
		s.Add(fmt.Sprintf("OAuth consumer secret of credential set %d", i), c.ConsumerSecret)
	}
}

// AddAddonEnvs records AddonSecrets(fake) and returns how many values it added.
func (s *Secrets) AddAddonEnvs(fake *fakeapi.Server) int {
	values := AddonSecrets(fake)
	for label, v := range values {
		s.Add(label, v)
	}
	return len(values)
}

// Len is the number of needles.
func (s *Secrets) Len() int { return len(s.needles) }

// Finding is one secret found somewhere; it names the place and what was found, never the
// value.
type Finding struct{ Where, What string }

func (f Finding) String() string { return f.What + " found in " + f.Where }

// Scan returns the findings in data (one per needle).
func (s *Secrets) Scan(where string, data []byte) []Finding {
	var out []Finding
	for n, label := range s.needles {
		if bytes.Contains(data, []byte(n)) {
			out = append(out, Finding{Where: where, What: label})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].What < out[j].What })
	return out
}

// ScanTexts scans every text, in the order of their names.
func (s *Secrets) ScanTexts(texts map[string]string) []Finding {
	names := make([]string, 0, len(texts))
	for n := range texts {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Finding
	for _, n := range names {
		out = append(out, s.Scan(n, []byte(texts[n]))...)
	}
	return out
}

// ScanFiles scans whole files (e.g. operator logs).
func (s *Secrets) ScanFiles(paths ...string) ([]Finding, error) {
	var out []Finding
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s.Scan(p, b)...)
	}
	return out, nil
}

// ScanCluster scans ClusterTexts: every Event and the status of every resource.
func (s *Secrets) ScanCluster(ctx context.Context, c client.Reader) ([]Finding, error) {
	texts, err := ClusterTexts(ctx, c)
	if err != nil {
		return nil, err
	}
	return s.ScanTexts(texts), nil
}

// Leaks returns one line per secret value (or encoded form of it) found in one of the texts,
// naming the text and the value's position and length, never the value.
func Leaks(values []string, texts map[string]string) []string {
	s := NewSecrets()
	s.AddValues(values...)
	var out []string
	for _, f := range s.ScanTexts(texts) {
		out = append(out, f.String())
	}
	return out
}

// AddonSecrets returns, labelled, every environment value of every add-on the fake holds (and
// the download URLs and commands of its backups, as the fake lists them now), except the
// values that are public by design: those the operator mirrors into status (status.url,
// status.admin_url: kinds' URLStatus variables), the owner ids and the add-ons' own ids
// (ADDON_PULSAR_TENANT / _NAMESPACE), and values shorter than MinSecretLen.
func AddonSecrets(fake *fakeapi.Server) map[string]string {
	public := map[string]bool{}
	for _, k := range kinds.Kinds {
		for _, env := range k.URLStatus {
			public[env] = true
		}
	}
	out := map[string]string{}
	for owner, list := range fake.AllAddons() {
		for _, a := range list {
			for _, v := range fake.Env(a.ID) {
				if public[v.Name] || v.Value == owner || v.Value == a.ID || v.Value == a.RealID || len(v.Value) < MinSecretLen {
					continue
				}
				out["value of "+v.Name+" of add-on "+a.ID] = v.Value
			}
			// Backup download URLs and restore commands (kinds Clever Cloud backs up).
			for i, b := range fake.BackupSecrets(a.ID) {
				out[fmt.Sprintf("backup secret %d of add-on %s", i, a.ID)] = b
			}
		}
	}
	return out
}

// AddonSecretValues is AddonSecrets without labels.
func AddonSecretValues(fake *fakeapi.Server) []string {
	return Values(AddonSecrets(fake))
}

// CredentialValues returns the secret parts of fake credential sets (Secrets.AddCredentials).
func CredentialValues(creds ...fakeapi.Credential) []string {
	var out []string
	for _, c := range creds {
		out = append(out, c.Token, c.Secret, c.ConsumerSecret)
	}
	return out
}

// ClusterTexts returns what the operator writes into the cluster where users read it: every
// Event (all namespaces), and the status (conditions and their messages included) of every
// resource of every kind it manages, one text each.
func ClusterTexts(ctx context.Context, c client.Reader) (map[string]string, error) {
	out := map[string]string{}
	evs := &corev1.EventList{}
	if err := c.List(ctx, evs); err != nil {
		return nil, err
	}
	for _, e := range evs.Items {
		b, _ := json.Marshal(e)
		out[fmt.Sprintf("Event %s/%s (%s %s)", e.Namespace, e.Name, e.Reason, e.InvolvedObject.Name)] = string(b)
	}
	for _, k := range kinds.Kinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err := c.List(ctx, l); err != nil {
			return nil, fmt.Errorf("listing %s: %w", k.GVK.Kind, err)
		}
		for i := range l.Items {
			b, _ := json.Marshal(l.Items[i].Object["status"])
			out["status of "+Key(&l.Items[i])] = string(b)
		}
	}
	return out, nil
}

// OperatorOutput is ClusterTexts and the operator's logs.
func OperatorOutput(ctx context.Context, c client.Reader, logs string) (map[string]string, error) {
	out, err := ClusterTexts(ctx, c)
	if err != nil {
		return nil, err
	}
	out["operator logs"] = logs
	return out, nil
}

// SecretValues returns every secret an in-process operator suite handled: the add-on
// environment values the suite's fake handed out (at least 20 unless specs were focused), the
// credentials given, and every ConfigProvider variable value in the cluster.
func (s *Suite) SecretValues(creds ...fakeapi.Credential) []string {
	GinkgoHelper()
	values := AddonSecretValues(s.Fake)
	if sc, _ := GinkgoConfiguration(); len(sc.FocusStrings) == 0 {
		Expect(len(values)).To(BeNumerically(">", 20), "the suite created add-ons with credentials")
	}
	values = append(values, CredentialValues(creds...)...)
	cps := &unstructured.UnstructuredList{}
	cps.SetGroupVersionKind(schema.GroupVersionKind{Group: "api.clever-cloud.com", Version: "v1", Kind: "ConfigProviderList"})
	Expect(s.Client.List(context.Background(), cps)).To(Succeed())
	for _, cp := range cps.Items {
		vars, _, _ := unstructured.NestedStringMap(cp.Object, "spec", "variables")
		for _, v := range vars {
			values = append(values, v)
		}
	}
	return values
}

// ExpectNoLeak checks that none of values (nor their encoded forms) appears in the operator's
// logs, in any Event, or in the status of any resource (OperatorOutput).
func (s *Suite) ExpectNoLeak(logs string, values []string) {
	GinkgoHelper()
	Expect(len(logs)).To(BeNumerically(">", 1000), "the operator logged")
	texts, err := OperatorOutput(context.Background(), s.Client, logs)
	Expect(err).NotTo(HaveOccurred())
	Expect(Leaks(values, texts)).To(BeEmpty())
}
