package kube

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clever-operator/clever-operator/pkg/fakeapi"
	"github.com/clever-operator/clever-operator/test/envtestutil"
)

// SecretValues returns every secret an in-process operator suite handled: the add-on
// environment values the suite's fake handed out (at least 20 unless specs were focused), the
// credentials given, and every ConfigProvider variable value in the cluster.
func (s *Suite) SecretValues(creds ...fakeapi.Credential) []string {
	GinkgoHelper()
	values := envtestutil.AddonSecretValues(s.Fake)
	if sc, _ := GinkgoConfiguration(); len(sc.FocusStrings) == 0 {
		Expect(len(values)).To(BeNumerically(">", 20), "the suite created add-ons with credentials")
	}
	values = append(values, envtestutil.CredentialValues(creds...)...)
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

// ExpectNoLeak checks that none of values (nor their base64 forms) appears in the operator's
// logs, in any Event, or in the status of any resource (envtestutil.OperatorOutput).
func (s *Suite) ExpectNoLeak(logs string, values []string) {
	GinkgoHelper()
	Expect(len(logs)).To(BeNumerically(">", 1000), "the operator logged")
	texts, err := envtestutil.OperatorOutput(context.Background(), s.Client, logs)
	Expect(err).NotTo(HaveOccurred())
	Expect(envtestutil.Leaks(values, texts)).To(BeEmpty())
}
