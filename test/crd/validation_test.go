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
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Valid base objects in the validation namespace; each case mutates a fresh copy.

func postgreSql(name string) *unstructured.Unstructured {
	return decode(fmt.Sprintf(`
apiVersion: api.clever-cloud.com/v1
kind: PostgreSql
metadata: {namespace: %s, name: %s}
spec:
  organisation: %s
  options: {version: 17, encryption: false}
  instance: {region: par, plan: xs_sml}
`, validationNamespace, name, orgaID))
}

func redis(name string) *unstructured.Unstructured {
	return decode(fmt.Sprintf(`
apiVersion: api.clever-cloud.com/v1
kind: Redis
metadata: {namespace: %s, name: %s}
spec:
  organisation: %s
  options: {version: 880, encryption: true}
  instance: {region: par, plan: s_mono}
`, validationNamespace, name, orgaID))
}

func elasticSearch(name string) *unstructured.Unstructured {
	return decode(fmt.Sprintf(`
apiVersion: api.clever-cloud.com/v1
kind: ElasticSearch
metadata: {namespace: %s, name: %s}
spec:
  organisation: %s
  options: {version: 9, encryption: false, kibana: false, apm: true}
  instance: {region: par, plan: xs}
`, validationNamespace, name, orgaID))
}

func configProvider(name string) *unstructured.Unstructured {
	return decode(fmt.Sprintf(`
apiVersion: api.clever-cloud.com/v1
kind: ConfigProvider
metadata: {namespace: %s, name: %s}
spec:
  organisation: %s
  variables: {FOO: bar}
`, validationNamespace, name, orgaID))
}

func metabase(name string) *unstructured.Unstructured {
	return decode(fmt.Sprintf(`
apiVersion: api.clever-cloud.com/v1
kind: Metabase
metadata: {namespace: %s, name: %s}
spec:
  organisation: %s
  instance: {region: par, plan: base}
`, validationNamespace, name, orgaID))
}

func kv(name string) *unstructured.Unstructured {
	return decode(fmt.Sprintf(`
apiVersion: api.clever-cloud.com/v1alpha1
kind: KV
metadata: {namespace: %s, name: %s}
spec:
  organisation: %s
  instance: {region: par}
`, validationNamespace, name, orgaID))
}

func pulsar(name string) *unstructured.Unstructured {
	return decode(fmt.Sprintf(`
apiVersion: api.clever-cloud.com/v1beta1
kind: Pulsar
metadata: {namespace: %s, name: %s}
spec:
  organisation: %s
  instance: {region: par}
`, validationNamespace, name, orgaID))
}

type mutation func(u *unstructured.Unstructured)

func set(value any, path ...string) mutation {
	return func(u *unstructured.Unstructured) {
		Expect(unstructured.SetNestedField(u.Object, value, path...)).To(Succeed())
	}
}

func remove(path ...string) mutation {
	return func(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, path...) }
}

func rename(name string) mutation {
	return func(u *unstructured.Unstructured) { u.SetName(name) }
}

func with(base func(string) *unstructured.Unstructured, name string, muts ...mutation) func() *unstructured.Unstructured {
	return func() *unstructured.Unstructured {
		u := base(name)
		for _, m := range muts {
			m(u)
		}
		return u
	}
}

// expectInvalid checks that err is a 422 Invalid whose message has every want.
func expectInvalid(err error, wants ...string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got: %v", err)
	for _, w := range wants {
		Expect(err.Error()).To(ContainSubstring(w))
	}
}

var _ = Describe("validation on create", func() {
	DescribeTable("rejects an invalid resource with a message naming the problem",
		func(build func() *unstructured.Unstructured, wants ...string) {
			expectInvalid(k8s.Create(ctx, build()), wants...)
		},
		// No version enum (issue #13): the versions on offer are what Clever Cloud announces,
		// checked by the operator (reason VersionNotAvailable); the schema only wants a code.
		Entry("PostgreSql version 0",
			with(postgreSql, "pg-v0", set(int64(0), "spec", "options", "version")),
			"spec.options.version", "greater than or equal to 1"),
		Entry("Redis version -1",
			with(redis, "redis-neg", set(int64(-1), "spec", "options", "version")),
			"spec.options.version", "greater than or equal to 1"),
		Entry("version given as a string",
			with(postgreSql, "pg-string", set("15", "spec", "options", "version")),
			"spec.options.version", "must be of type integer"),
		Entry("no plan",
			with(postgreSql, "pg-no-plan", remove("spec", "instance", "plan")),
			"spec.instance.plan", "Required value"),
		Entry("no encryption",
			with(postgreSql, "pg-no-encryption", remove("spec", "options", "encryption")),
			"spec.options.encryption", "Required value"),
		Entry("ElasticSearch without kibana",
			with(elasticSearch, "es-no-kibana", remove("spec", "options", "kibana")),
			"spec.options.kibana", "Required value"),
		Entry("no options on a database kind",
			with(redis, "redis-no-options", remove("spec", "options")),
			"spec.options", "Required value"),
		Entry("no region",
			with(kv, "kv-no-region", remove("spec", "instance", "region")),
			"spec.instance.region", "Required value"),
		Entry("no instance",
			with(metabase, "mb-no-instance", remove("spec", "instance")),
			"spec.instance", "Required value"),
		Entry("no organisation",
			with(pulsar, "pulsar-no-orga", remove("spec", "organisation")),
			"spec.organisation", "Required value"),
		Entry("empty organisation",
			with(pulsar, "pulsar-empty-orga", set("", "spec", "organisation")),
			"spec.organisation", "at least 1 chars long"),
		Entry("no spec",
			with(metabase, "mb-no-spec", remove("spec")),
			"spec", "Required value"),
		Entry("ConfigProvider without variables",
			with(configProvider, "cp-no-vars", remove("spec", "variables")),
			"spec.variables", "Required value"),
		Entry("ConfigProvider variable that is not a string",
			with(configProvider, "cp-int-var", set(map[string]any{"PORT": int64(8080)}, "spec", "variables")),
			"spec.variables.PORT", "must be of type string"),
		Entry("a 64-character name",
			with(metabase, strings.Repeat("m", 64)),
			"metadata.name must be at most 63 characters (it is used in label values and Helm release names)"),
		Entry("spec.secret.name that is not a DNS subdomain",
			with(postgreSql, "pg-bad-secret", set("My_Secret", "spec", "secret", "name")),
			"spec.secret.name", "should match"),
		Entry("spec.secret.name longer than 253 characters",
			with(postgreSql, "pg-long-secret", set(strings.Repeat("s", 254), "spec", "secret", "name")),
			"spec.secret.name", "may not be more than 253"),
		Entry("empty spec.secret.name",
			with(kv, "kv-empty-secret", set("", "spec", "secret", "name")),
			"spec.secret.name"),
		Entry("a spec.secret.templates key that is not a Secret key",
			with(postgreSql, "pg-bad-tmpl-key", set(map[string]any{"DATABASE URL": "x"}, "spec", "secret", "templates")),
			"spec.secret.templates keys must be valid Secret keys"),
		Entry("a spec.secret.keyPrefix with a space",
			with(postgreSql, "pg-bad-prefix", set("APP ", "spec", "secret", "keyPrefix")),
			"spec.secret.keyPrefix", "should match"),
		Entry("a reserved label in spec.secret.labels",
			with(redis, "redis-reserved-label", set(map[string]any{"api.clever-cloud.com/managed-by": "me"}, "spec", "secret", "labels")),
			"spec.secret.labels cannot set api.clever-cloud.com/"),
		Entry("a Helm annotation in spec.secret.annotations",
			with(kv, "kv-helm-annotation", set(map[string]any{"meta.helm.sh/release-name": "x"}, "spec", "secret", "annotations")),
			"spec.secret.annotations cannot set"),
		Entry("a ConfigMap name that is not a DNS subdomain",
			with(postgreSql, "pg-bad-cm", set(map[string]any{"name": "Bad_Name"}, "spec", "secret", "configMap")),
			"spec.secret.configMap.name", "should match"),
		Entry("a rollout without a selector",
			with(postgreSql, "pg-rollout-nosel", set(map[string]any{}, "spec", "secret", "rollout")),
			"spec.secret.rollout.matchLabels", "Required value"),
	)

	It("accepts and keeps every spec.secret option", func() {
		secretSpec := map[string]any{
			"name": "app-db", "disabled": false, "keyPrefix": "APP_",
			"labels":      map[string]any{"team": "payments"},
			"annotations": map[string]any{"reloader.example/match": "true"},
			"templates":   map[string]any{"DATABASE_URL": "postgresql://{{ .POSTGRESQL_ADDON_HOST }}", "jdbc.url": "jdbc:{{ .POSTGRESQL_ADDON_HOST }}"},
			"configMap":   map[string]any{"name": "app-db-public"},
			"rollout":     map[string]any{"matchLabels": map[string]any{"uses": "db"}},
		}
		live := expectAcceptedUnchanged(with(postgreSql, "pg-all-secret-options", set(secretSpec, "spec", "secret"))())
		got, _, _ := unstructured.NestedMap(live.Object, "spec", "secret")
		Expect(got).To(HaveKeyWithValue("keyPrefix", "APP_"))
		Expect(got).To(HaveKey("templates"))
		Expect(got).To(HaveKey("rollout"))
	})

	It("accepts a 63-character name", func() {
		create(with(metabase, strings.Repeat("m", 63))())
	})

	It("accepts a valid spec.secret.name and keeps it", func() {
		obj := with(postgreSql, "pg-secret", set("pg-secret.credentials", "spec", "secret", "name"))()
		live := expectAcceptedUnchanged(obj)
		name, _, _ := unstructured.NestedString(live.Object, "spec", "secret", "name")
		Expect(name).To(Equal("pg-secret.credentials"))
	})

	It("accepts the newest versions (PostgreSQL 18, Redis 880, Elasticsearch 9)", func() {
		expectAcceptedUnchanged(with(postgreSql, "pg-18", set(int64(18), "spec", "options", "version"))())
		expectAcceptedUnchanged(redis("redis-880"))
		expectAcceptedUnchanged(elasticSearch("es-9"))
	})

	It("accepts versions it has never heard of: no enum, the operator checks them against what Clever Cloud announces", func() {
		expectAcceptedUnchanged(with(postgreSql, "pg-19", set(int64(19), "spec", "options", "version"))())
		expectAcceptedUnchanged(with(postgreSql, "pg-10", set(int64(10), "spec", "options", "version"))())
		expectAcceptedUnchanged(with(redis, "redis-900", set(int64(900), "spec", "options", "version"))())
		expectAcceptedUnchanged(with(metabase, "mb-version", set("0.57.1", "spec", "version"))())
	})

	It("prunes unknown fields instead of storing them", func() {
		pg := with(postgreSql, "pg-unknown",
			set("bar", "spec", "options", "foo"),
			set(int64(1), "spec", "extra"),
			set("x", "spec", "instance", "size"))()
		create(pg)
		live := suite.Live(pg)
		for _, path := range [][]string{{"spec", "options", "foo"}, {"spec", "extra"}, {"spec", "instance", "size"}} {
			_, found, err := unstructured.NestedFieldNoCopy(live.Object, path...)
			Expect(err).NotTo(HaveOccurred())
			Expect(found).To(BeFalse(), "%v should have been pruned", path)
		}
		Expect(live.Object["spec"]).To(Equal(postgreSql("pg-unknown").Object["spec"]))

		mb := with(metabase, "mb-unknown", set(map[string]any{"foo": int64(1)}, "spec", "options"))()
		create(mb)
		opts, found, err := unstructured.NestedMap(suite.Live(mb).Object, "spec", "options")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())
		Expect(opts).To(BeEmpty())
	})
})

var _ = Describe("validation on update", func() {
	DescribeTable("rejects a change to an immutable field",
		func(build func() *unstructured.Unstructured, value string, path []string, want string) {
			obj := build()
			create(obj)
			live := suite.Live(obj)
			Expect(unstructured.SetNestedField(live.Object, value, path...)).To(Succeed())
			expectInvalid(k8s.Update(ctx, live), want)
		},
		Entry("PostgreSql spec.organisation", with(postgreSql, "pg-move-orga"),
			"orga_00000000-0000-0000-0000-000000000002", []string{"spec", "organisation"},
			"spec.organisation is immutable: the add-on lives in that organisation; create a new resource to move it"),
		Entry("ConfigProvider spec.organisation", with(configProvider, "cp-move-orga"),
			"user_00000000-0000-0000-0000-000000000002", []string{"spec", "organisation"},
			"spec.organisation is immutable"),
		Entry("KV spec.organisation", with(kv, "kv-move-orga"),
			"orga_00000000-0000-0000-0000-000000000002", []string{"spec", "organisation"},
			"spec.organisation is immutable"),
		Entry("ElasticSearch spec.instance.region (no region migration for this kind)", with(elasticSearch, "es-move-region"),
			"rbx", []string{"spec", "instance", "region"}, "spec.instance.region is immutable"),
		Entry("Metabase spec.instance.region", with(metabase, "mb-move-region"),
			"rbx", []string{"spec", "instance", "region"}, "spec.instance.region is immutable"),
		Entry("KV spec.instance.region", with(kv, "kv-move-region"),
			"rbx", []string{"spec", "instance", "region"}, "spec.instance.region is immutable"),
		Entry("Pulsar spec.instance.region", with(pulsar, "pulsar-move-region"),
			"rbx", []string{"spec", "instance", "region"}, "spec.instance.region is immutable"),
	)

	It("allows what a migration can apply (plan, region, a version upgrade), the secret name and the metadata", func() {
		obj := postgreSql("pg-mutable")
		create(obj)
		live := suite.Live(obj)
		Expect(unstructured.SetNestedField(live.Object, "m_med", "spec", "instance", "plan")).To(Succeed())
		Expect(unstructured.SetNestedField(live.Object, "rbx", "spec", "instance", "region")).To(Succeed())
		v, _, _ := unstructured.NestedInt64(live.Object, "spec", "options", "version")
		if v < 18 {
			Expect(unstructured.SetNestedField(live.Object, v+1, "spec", "options", "version")).To(Succeed())
		}
		Expect(unstructured.SetNestedField(live.Object, "other-secrets", "spec", "secret", "name")).To(Succeed())
		live.SetLabels(map[string]string{"team": "data"})
		Expect(k8s.Update(ctx, live)).To(Succeed())
		Expect(suite.Live(obj).GetGeneration()).To(BeEquivalentTo(2))
	})

	DescribeTable("rejects what Clever Cloud cannot change on an existing add-on",
		func(build func() *unstructured.Unstructured, value any, path []string, want string) {
			obj := build()
			create(obj)
			live := suite.Live(obj)
			Expect(unstructured.SetNestedField(live.Object, value, path...)).To(Succeed())
			expectInvalid(k8s.Update(ctx, live), want)
		},
		Entry("PostgreSql encryption", with(postgreSql, "pg-enc"), true, []string{"spec", "options", "encryption"}, "spec.options.encryption is set when the add-on is created"),
		Entry("PostgreSql version downgrade", with(postgreSql, "pg-down"), int64(11), []string{"spec", "options", "version"}, "cannot go down"),
		Entry("ElasticSearch kibana", with(elasticSearch, "es-kibana"), true, []string{"spec", "options", "kibana"}, "cannot change"),
	)
})
