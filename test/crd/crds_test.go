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
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type crdNames struct {
	kind, version, plural, singular string
	shortNames                      []string
}

func getCRD(plural string) *apiextensionsv1.CustomResourceDefinition {
	GinkgoHelper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(k8s.Get(ctx, client.ObjectKey{Name: plural + ".api.clever-cloud.com"}, crd)).To(Succeed())
	return crd
}

// Printer columns as "name type jsonPath": the reference's, then Ready, Reason, Age.
var (
	colOrga      = "organisation string .spec.organisation"
	colAddon     = "addon string .status.addon"
	colRegion    = "region string .spec.instance.region"
	colInstance  = "instance string .spec.instance.plan"
	colVersion   = "version integer .spec.options.version"
	colEncrypted = "encrypted boolean .spec.options.encryption"
	colKibana    = "kibana boolean .spec.options.kibana"
	colApm       = "apm boolean .spec.options.apm"
	colURL       = "url string .status.url"
	colAdminURL  = "admin_url string .status.admin_url"
	colReady     = `Ready string .status.conditions[?(@.type=="Ready")].status`
	colReason    = `Reason string .status.conditions[?(@.type=="Ready")].reason`
	colAge       = "Age date .metadata.creationTimestamp"
	// colBackup: the kinds Clever Cloud backs up, before Age (priority 1: -o wide only).
	colBackup = "Last Backup date .status.backups.last.time"
	// colPrice: what the add-on's plan costs (issue #18 §5), before Age.
	colPrice = "Price/30d string .status.price.per30Days"
)

func cols(c ...string) []string { return append(c, colReady, colReason, colPrice, colAge) }

// backupCols are the columns of a kind with backups.
func backupCols(c ...string) []string {
	return append(c, colReady, colReason, colBackup, colPrice, colAge)
}

var _ = Describe("the installed CRDs", func() {
	DescribeTable("have the reference's names, the clever category, one version and the status subresource",
		func(n crdNames) {
			crd := getCRD(n.plural)
			Expect(crd.Spec.Group).To(Equal("api.clever-cloud.com"))
			Expect(crd.Spec.Scope).To(Equal(apiextensionsv1.NamespaceScoped))
			Expect(crd.Spec.Names.Kind).To(Equal(n.kind))
			Expect(crd.Spec.Names.Plural).To(Equal(n.plural))
			Expect(crd.Spec.Names.Singular).To(Equal(n.singular))
			if len(n.shortNames) == 0 {
				Expect(crd.Spec.Names.ShortNames).To(BeEmpty())
			} else {
				Expect(crd.Spec.Names.ShortNames).To(Equal(n.shortNames))
			}
			Expect(crd.Spec.Names.Categories).To(Equal([]string{"clever"}))
			Expect(crd.Spec.Versions).To(HaveLen(1))
			v := crd.Spec.Versions[0]
			Expect(v.Name).To(Equal(n.version))
			Expect(v.Served).To(BeTrue())
			Expect(v.Storage).To(BeTrue())
			Expect(v.Subresources).NotTo(BeNil())
			Expect(v.Subresources.Status).NotTo(BeNil())
			Expect(v.Subresources.Scale).To(BeNil())

			schema := v.Schema.OpenAPIV3Schema
			Expect(schema.Required).To(ConsistOf("spec"))
			Expect(schema.XValidations).To(ContainElement(HaveField("Rule", "self.metadata.name.size() <= 63")))
			status := schema.Properties["status"]
			Expect(status.Default).NotTo(BeNil(), "status needs a default for kstatus")
			Expect(json.RawMessage(status.Default.Raw)).To(MatchJSON(`{"observedGeneration": 0}`))
			Expect(status.Properties["deployedRelease"].Properties).To(HaveLen(1))
			Expect(status.Properties["deployedRelease"].Properties).To(HaveKey("name"))
			Expect(status.Properties["conditions"].Items.Schema.Required).To(ConsistOf("type", "status"))
			Expect(schema.Properties["spec"].Properties).To(HaveKey("secret"))
			Expect(schema.Properties["spec"].XValidations).To(ContainElement(
				HaveField("Rule", "self.organisation == oldSelf.organisation")))
		},
		Entry("PostgreSql", crdNames{"PostgreSql", "v1", "postgresqls", "postgresql", []string{"pg"}}),
		Entry("Redis", crdNames{"Redis", "v1", "redis", "redis", []string{"r"}}),
		Entry("MySql", crdNames{"MySql", "v1", "mysqls", "mysql", []string{"my"}}),
		Entry("MongoDb", crdNames{"MongoDb", "v1", "mongodbs", "mongodb", []string{"mo"}}),
		Entry("Pulsar", crdNames{"Pulsar", "v1beta1", "pulsars", "pulsar", []string{"pulse", "pul"}}),
		Entry("ConfigProvider", crdNames{"ConfigProvider", "v1", "configproviders", "configprovider", []string{"cp"}}),
		Entry("ElasticSearch", crdNames{"ElasticSearch", "v1", "elasticsearches", "elasticsearch", []string{"es"}}),
		Entry("KV", crdNames{"KV", "v1alpha1", "kvs", "kv", nil}),
		Entry("Metabase", crdNames{"Metabase", "v1", "metabases", "metabase", []string{"mb"}}),
		Entry("Keycloak", crdNames{"Keycloak", "v1", "keycloaks", "keycloak", []string{"kc"}}),
		Entry("Matomo", crdNames{"Matomo", "v1", "matomos", "matomo", nil}),
		Entry("Otoroshi", crdNames{"Otoroshi", "v1", "otoroshis", "otoroshi", nil}),
		Entry("Azimutt", crdNames{"Azimutt", "v1", "azimutts", "azimutt", nil}),
		Entry("Cellar", crdNames{"Cellar", "v1", "cellars", "cellar", nil}),
	)

	DescribeTable("have the reference's printer columns in order, then Ready, Reason, Price/30d and Age",
		func(plural string, want []string) {
			crd := getCRD(plural)
			var got []string
			for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
				got = append(got, c.Name+" "+c.Type+" "+c.JSONPath)
			}
			Expect(got).To(Equal(want))
		},
		Entry("PostgreSql", "postgresqls", backupCols(colOrga, colAddon, colRegion, colInstance, colVersion, colEncrypted)),
		Entry("Redis", "redis", backupCols(colOrga, colAddon, colRegion, colInstance, colVersion, colEncrypted)),
		Entry("MySql", "mysqls", backupCols(colOrga, colAddon, colRegion, colInstance, colVersion, colEncrypted)),
		Entry("MongoDb", "mongodbs", backupCols(colOrga, colAddon, colRegion, colInstance, colVersion, colEncrypted)),
		Entry("ElasticSearch", "elasticsearches",
			backupCols(colOrga, colAddon, colRegion, colInstance, colVersion, colEncrypted, colKibana, colApm)),
		Entry("Pulsar", "pulsars", cols(colOrga, colAddon, colRegion)),
		Entry("KV", "kvs", cols(colOrga, colAddon, colRegion)),
		Entry("ConfigProvider", "configproviders", cols(colOrga, colAddon)),
		Entry("Metabase", "metabases", cols(colOrga, colAddon, colRegion, colInstance, colURL)),
		Entry("Matomo", "matomos", cols(colOrga, colAddon, colRegion, colInstance, colURL)),
		Entry("Otoroshi", "otoroshis", cols(colOrga, colAddon, colRegion, colInstance, colURL)),
		Entry("Cellar", "cellars", cols(colOrga, colAddon, colRegion, colInstance, colURL)),
		Entry("Keycloak", "keycloaks", cols(colOrga, colAddon, colRegion, colInstance, colURL, colAdminURL)),
		Entry("Azimutt", "azimutts", cols(colOrga, colAddon, colRegion, colInstance)),
	)

	It("shows the last backup only in the wide output", func() {
		for _, plural := range []string{"postgresqls", "redis", "mysqls", "mongodbs", "elasticsearches"} {
			var found bool
			for _, c := range getCRD(plural).Spec.Versions[0].AdditionalPrinterColumns {
				if c.Name == "Last Backup" {
					found = true
					Expect(c.Priority).To(Equal(int32(1)), plural)
				} else {
					Expect(c.Priority).To(BeZero(), plural+" "+c.Name)
				}
			}
			Expect(found).To(BeTrue(), plural)
		}
	})

	It("keeps the reference's column descriptions", func() {
		desc := map[string]string{}
		for _, c := range getCRD("elasticsearches").Spec.Versions[0].AdditionalPrinterColumns {
			desc[c.Name] = c.Description
		}
		Expect(desc).To(HaveKeyWithValue("organisation", "Organisation"))
		Expect(desc).To(HaveKeyWithValue("addon", "Addon"))
		Expect(desc).To(HaveKeyWithValue("encrypted", "Cold encryption"))
		Expect(desc).To(HaveKeyWithValue("apm", "Application Performance Monitoring"))
	})

	It("describes every spec and status field (kubectl explain)", func() {
		for _, plural := range []string{"postgresqls", "redis", "mysqls", "mongodbs", "pulsars", "configproviders",
			"elasticsearches", "kvs", "metabases", "keycloaks", "matomos", "otoroshis", "azimutts", "cellars"} {
			schema := getCRD(plural).Spec.Versions[0].Schema.OpenAPIV3Schema
			for _, top := range []string{"spec", "status"} {
				expectDescribed(plural+"."+top, schema.Properties[top])
			}
		}
	})
})

// expectDescribed checks that a schema node and all its properties carry a description.
func expectDescribed(path string, s apiextensionsv1.JSONSchemaProps) {
	GinkgoHelper()
	Expect(s.Description).NotTo(BeEmpty(), "%s has no description", path)
	for name, p := range s.Properties {
		expectDescribed(path+"."+name, p)
	}
	if s.Items != nil && s.Items.Schema != nil {
		expectDescribed(path+"[]", *s.Items.Schema)
	}
}
