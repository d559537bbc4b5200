package kube

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// V4Values returns, for an operator add-on (Keycloak, Metabase, Matomo, Otoroshi), the values
// its Secret must carry from the fake's v4 answer (access URL, initial credentials where the
// add-on has them); nil for an add-on the fake does not serve at v4.
func V4Values(fake *fakeapi.Server, realID string) []string {
	GinkgoHelper()
	doc, ok := fake.OperatorAddon(realID)
	if !ok {
		return nil
	}
	want := []string{}
	if u, _ := doc["accessUrl"].(string); u != "" {
		want = append(want, u)
	}
	if ic, ok := doc["initialCredentials"].(map[string]any); ok {
		for _, k := range []string{"user", "password"} {
			if v, _ := ic[k].(string); v != "" {
				want = append(want, v)
			}
		}
	}
	Expect(want).NotTo(BeEmpty(), "the fake's v4 answer for %s has an access URL", realID)
	return want
}

// Values returns the values of m (in no order).
func Values(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// AddonExists tells whether the fake holds the add-on id, in any organisation.
func AddonExists(fake *fakeapi.Server, id string) bool {
	for _, list := range fake.AllAddons() {
		for _, a := range list {
			if a.ID == id {
				return true
			}
		}
	}
	return false
}
