package operator_test

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
)

// addonsNamed returns the fake's add-ons with that name, across owners.
func addonsNamed(name string) []fakeapi.Addon {
	var out []fakeapi.Addon
	for _, list := range fake.AllAddons() {
		for _, a := range list {
			if a.AddonName() == name {
				out = append(out, a)
			}
		}
	}
	return out
}

func addonName(u *unstructured.Unstructured) string {
	return "kubernetes::" + u.GetKind() + "::" + string(u.GetUID())
}

func envMap(vars []fakeapi.Variable) map[string]string {
	m := map[string]string{}
	for _, v := range vars {
		m[v.Name] = v.Value
	}
	return m
}
