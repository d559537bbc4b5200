package harness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/kinds"
)

// MinSecretLen is the shortest value the leak scanner looks for: shorter env values (ports,
// versions, regions, "true") are not credentials and would match by chance.
const MinSecretLen = 8

// Secrets is a set of credential values to look for, each with a label that says what it is
// (never the value). A value is searched as is and base64-encoded (standard and URL alphabets,
// padded or not, at each of the three byte alignments it can take inside a longer encoding).
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
}

func trimPad(s string) string {
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	return s
}

// AddFakeCredentials adds every credential set of the harness (consumer key excepted: it is
// an identifier, not a secret).
func (s *Secrets) AddFakeCredentials(h *Harness) {
	for i, c := range h.Creds {
		s.Add(fmt.Sprintf("OAuth token of credential set %d", i), c.Token)
		s.Add(fmt.Sprintf("OAuth token secret of credential set %d", i), c.Secret)
		s.Add(fmt.Sprintf("OAuth consumer secret of credential set %d", i), c.ConsumerSecret)
	}
}

// AddAddonEnvs adds every env value of every add-on the fake currently holds, except the
// variables the operator publishes in status by design (URLs, the Kind.URLStatus of
// internal/addon). It returns how many values it added.
func (s *Secrets) AddAddonEnvs(h *Harness) int {
	public := PublicEnvKeys()
	n := 0
	for _, addons := range h.Fake().AllAddons() {
		for _, a := range addons {
			for _, v := range h.Fake().Env(a.ID) {
				if public[v.Name] {
					continue
				}
				s.Add("value of "+v.Name+" of add-on "+a.ID, v.Value)
				n++
			}
		}
	}
	return n
}

// PublicEnvKeys are the env variables mirrored in status fields (status.url, …) by design.
func PublicEnvKeys() map[string]bool {
	out := map[string]bool{}
	gvks, err := Kinds()
	if err != nil {
		return out
	}
	for _, gvk := range gvks {
		if k, ok := kinds.KindFor(gvk); ok {
			for _, env := range k.URLStatus {
				out[env] = true
			}
		}
	}
	return out
}

// Len is the number of needles.
func (s *Secrets) Len() int { return len(s.needles) }

// Finding is one credential found somewhere; it names the place and what was found, never
// the value.
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

// ScanCluster scans every Event (all namespaces) and the status of every custom resource of
// the operator's kinds.
func (s *Secrets) ScanCluster(ctx context.Context, c client.Reader) ([]Finding, error) {
	var out []Finding
	evs := &corev1.EventList{}
	if err := c.List(ctx, evs); err != nil {
		return nil, err
	}
	for _, e := range evs.Items {
		b, _ := json.Marshal(e)
		out = append(out, s.Scan(fmt.Sprintf("Event %s/%s (%s %s)", e.Namespace, e.Name, e.Reason, e.InvolvedObject.Name), b)...)
	}
	items, err := ListAll(ctx, c, "")
	if err != nil {
		return nil, err
	}
	for i := range items {
		b, _ := json.Marshal(items[i].Object["status"])
		out = append(out, s.Scan("status of "+Key(&items[i]), b)...)
	}
	return out, nil
}
