/*
Copyright 2026 The clever-operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package crd_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// orgaID replaces the `<uuid v4>` placeholders of the reference examples.
const orgaID = "orga_3547a882-d464-4c34-8168-add4b3e0c135"

// withOrga fills the organisation placeholder of a reference example, leaving
// the rest of the text untouched.
func withOrga(manifest string) string {
	for _, placeholder := range []string{"orga_<uuid v4>", "orga_<uuid-v4>", "orga_<uuid>"} {
		manifest = strings.ReplaceAll(manifest, placeholder, orgaID)
	}
	return manifest
}

// decode turns one YAML document into an unstructured object, numbers as int64
// as the API server returns them.
func decode(manifest string) *unstructured.Unstructured {
	GinkgoHelper()
	js, err := yaml.YAMLToJSON([]byte(manifest))
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	Expect(u.UnmarshalJSON(js)).To(Succeed())
	return u
}

// create creates obj on the API server and deletes it when the spec ends.
func create(obj client.Object) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, obj)).To(Succeed())
	toDelete := obj.DeepCopyObject().(client.Object)
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, toDelete))).To(Succeed())
	})
}

// optionsDefaulted are the kinds whose CRD defaults spec.options to {}.
var optionsDefaulted = []string{"Metabase", "Keycloak", "Matomo", "Otoroshi", "Azimutt", "Cellar"}

// expectedSpec is the spec the API server should return for a manifest: the
// same, plus `options: {}` where the schema defaults it.
func expectedSpec(obj *unstructured.Unstructured) map[string]any {
	GinkgoHelper()
	spec, found, err := unstructured.NestedMap(obj.Object, "spec")
	Expect(err).NotTo(HaveOccurred())
	Expect(found).To(BeTrue())
	if _, has := spec["options"]; !has && slices.Contains(optionsDefaulted, obj.GetKind()) {
		spec["options"] = map[string]any{}
	}
	return spec
}

// expectAcceptedUnchanged creates obj and checks that the spec reads back as written.
func expectAcceptedUnchanged(obj *unstructured.Unstructured) *unstructured.Unstructured {
	GinkgoHelper()
	want := expectedSpec(obj)
	create(obj)
	live := suite.Live(obj)
	Expect(live.Object["spec"]).To(Equal(want))
	return live
}

var _ = Describe("the reference operator's example manifests (drop-in compatibility)", func() {
	DescribeTable("are accepted unchanged by the API server and read back with the same spec",
		func(manifest string) {
			obj := decode(withOrga(manifest))
			Expect(obj.GetNamespace()).To(Equal("default"))
			live := expectAcceptedUnchanged(obj)
			// A new resource reads as in progress for kstatus.
			og, found, err := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
			Expect(err).NotTo(HaveOccurred())
			Expect(found).To(BeTrue())
			Expect(og).To(BeZero())
		},
		Entry("10-postgresql-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: PostgreSql
metadata: {namespace: default, name: postgresql}
spec:
  organisation: orga_<uuid v4>
  options: {version: 13, encryption: false}
  instance: {region: par, plan: s_sml}
`),
		// The reference example says version 626, which is not in the reference's own enum.
		Entry("11-redis-addon.yaml (with version 724)", `
apiVersion: api.clever-cloud.com/v1
kind: Redis
metadata: {namespace: default, name: redis}
spec:
  organisation: orga_<uuid v4>
  options: {version: 724, encryption: false}
  instance: {region: par, plan: s_mono}
`),
		Entry("12-mysql-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: MySql
metadata: {namespace: default, name: mysql}
spec:
  organisation: orga_<uuid-v4>
  options: {version: 80, encryption: false}
  instance: {region: par, plan: s_sml}
`),
		Entry("13-mongodb-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: MongoDb
metadata: {namespace: default, name: mongodb}
spec:
  organisation: orga_<uuid-v4>
  options: {version: 403, encryption: false}
  instance: {region: par, plan: xs_sml}
`),
		Entry("14-pulsar-addon.yaml", `
apiVersion: api.clever-cloud.com/v1beta1
kind: Pulsar
metadata: {namespace: default, name: pulsar}
spec:
  organisation: orga_<uuid-v4>
  instance: {region: par}
`),
		Entry("15-config-provider-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: ConfigProvider
metadata: {namespace: default, name: config-provider}
spec:
  organisation: orga_<uuid-v4>
  variables: {region: par, instance: m_med}
`),
		Entry("16-elasticsearch-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: ElasticSearch
metadata: {namespace: default, name: elasticsearch}
spec:
  organisation: orga_<uuid-v4>
  options: {version: 8, encryption: true, kibana: true, apm: true}
  instance: {region: par, plan: xs}
`),
		Entry("17-kv-addon.yaml", `
apiVersion: api.clever-cloud.com/v1alpha1
kind: KV
metadata: {namespace: default, name: kv}
spec:
  organisation: orga_<uuid v4>
  instance: {region: par}
`),
		Entry("18-metabase-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: Metabase
metadata: {namespace: default, name: metabase}
spec:
  organisation: orga_<uuid v4>
  instance: {region: par, plan: base}
`),
		Entry("19-keycloak-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: Keycloak
metadata: {namespace: default, name: keycloak}
spec:
  organisation: orga_<uuid v4>
  instance: {region: par, plan: base}
`),
		Entry("20-matomo-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: Matomo
metadata: {namespace: default, name: matomo}
spec:
  organisation: orga_<uuid v4>
  instance: {region: par, plan: beta}
`),
		Entry("21-otoroshi-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: Otoroshi
metadata: {namespace: default, name: otoroshi}
spec:
  organisation: orga_<uuid v4>
  instance: {region: par, plan: base}
`),
		Entry("22-azimutt-addon.yaml", `
apiVersion: api.clever-cloud.com/v1
kind: Azimutt
metadata: {namespace: default, name: azimutt}
spec:
  organisation: orga_<uuid v4>
  instance: {region: par, plan: free}
`),
		Entry("Cellar (reference §8)", `
apiVersion: api.clever-cloud.com/v1
kind: Cellar
metadata: {namespace: default, name: cellar}
spec: {organisation: orga_<uuid>, instance: {region: par, plan: s}}
`),
		Entry("a Metabase with an explicit options: {} and a raw plan id", `
apiVersion: api.clever-cloud.com/v1
kind: Metabase
metadata: {namespace: default, name: metabase-plan-id}
spec:
  organisation: user_<uuid v4>
  options: {}
  instance: {region: par, plan: plan_2925d534-7155-4521-8052-d068d7ce8915}
`),
	)
})

var _ = Describe("config/samples", func() {
	samplesDir := filepath.Join("..", "..", "config", "samples")
	files, err := filepath.Glob(filepath.Join(samplesDir, "api_*.yaml"))
	if err != nil {
		panic(err)
	}

	It("has one sample per kind (14 typed add-on kinds, the generic Addon, 2 credentials kinds, NetworkGroup, CellarBucket), all listed in its kustomization.yaml", func() {
		Expect(files).To(HaveLen(19))
		listed := kustomizationResources(filepath.Join(samplesDir, "kustomization.yaml"))
		var names []string
		for _, f := range files {
			names = append(names, filepath.Base(f))
		}
		Expect(listed).To(ConsistOf(names))

		kinds := map[string]bool{}
		for _, f := range files {
			kinds[decode(readFile(f)).GetKind()] = true
		}
		Expect(kinds).To(HaveLen(19))
	})

	for _, f := range files {
		It("accepts "+filepath.Base(f), func() {
			obj := decode(readFile(f))
			Expect(obj.GetNamespace()).To(BeEmpty(), "samples are namespace-agnostic")
			if obj.GetKind() != "ClusterCleverCredentials" { // cluster-scoped
				obj.SetNamespace(samplesNamespace)
			}
			expectAcceptedUnchanged(obj)
		})
	}
})

var _ = Describe("config/crd/kustomization.yaml", func() {
	It("lists every generated CRD", func() {
		crdDir := filepath.Join("..", "..", "config", "crd")
		files, err := filepath.Glob(filepath.Join(crdDir, "bases", "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).To(HaveLen(19), "the 14 typed add-on kinds, the generic Addon, the 2 credentials kinds, NetworkGroup and CellarBucket")
		var names []string
		for _, f := range files {
			names = append(names, "bases/"+filepath.Base(f))
		}
		Expect(kustomizationResources(filepath.Join(crdDir, "kustomization.yaml"))).To(ConsistOf(names))
	})
})

func readFile(path string) string {
	GinkgoHelper()
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

func kustomizationResources(path string) []string {
	GinkgoHelper()
	var k struct {
		Resources []string `json:"resources"`
	}
	Expect(yaml.Unmarshal([]byte(readFile(path)), &k)).To(Succeed())
	return k.Resources
}
