package badinput_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// schemaCase is input the API server must refuse, with a message naming the field.
type schemaCase struct {
	file string
	// initial, when set, changes the object before it is created (update cases).
	initial func(u *unstructured.Unstructured)
	// mutate makes the object invalid (on create), or, with update, the change refused.
	mutate func(u *unstructured.Unstructured)
	update bool
	// message is a substring of the API server's answer.
	message string
}

func runSchemaCase(sc schemaCase) {
	ctx := context.Background()
	c := newCase()
	u := c.sample(sc.file)
	if sc.initial != nil {
		sc.initial(u)
	}
	var err error
	if sc.update {
		Expect(k8s.Create(ctx, u)).To(Succeed())
		// The operator adds its finalizers meanwhile: retry on conflicts only.
		Eventually(func() bool {
			cur := suite.Get(u)
			sc.mutate(cur)
			err = k8s.Update(ctx, cur)
			return !apierrors.IsConflict(err)
		}).Should(BeTrue())
	} else {
		sc.mutate(u)
		err = k8s.Create(ctx, u)
	}
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "422 Invalid, got %v", err)
	Expect(err.Error()).To(ContainSubstring(sc.message))
	Expect(err.Error()).NotTo(ContainSubstring("\\n"), "one readable line")
	GinkgoWriter.Println("refused:", err.Error())
}

func remove(path ...string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, path...) }
}

func setTo(value any, path ...string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		Expect(unstructured.SetNestedField(u.Object, value, path...)).To(Succeed())
	}
}

var _ = Describe("bad input the API server refuses", func() {
	DescribeTable("with a message naming the field", runSchemaCase,
		Entry("missing spec.organisation", schemaCase{file: "api_v1_redis.yaml", mutate: remove("spec", "organisation"),
			message: `spec.organisation: Required value`}),
		Entry("empty spec.organisation", schemaCase{file: "api_v1_redis.yaml", mutate: setTo("", "spec", "organisation"),
			message: `spec.organisation: Invalid value: "": spec.organisation in body should be at least 1 chars long`}),
		Entry("missing spec.instance", schemaCase{file: "api_v1_postgresql.yaml", mutate: remove("spec", "instance"),
			message: `spec.instance: Required value`}),
		Entry("empty spec.instance.plan (PostgreSql)", schemaCase{file: "api_v1_postgresql.yaml", mutate: setTo("", "spec", "instance", "plan"),
			message: `spec.instance.plan in body should be at least 1 chars long`}),
		Entry("missing spec.options.version", schemaCase{file: "api_v1_postgresql.yaml", mutate: remove("spec", "options", "version"),
			message: `spec.options.version: Required value`}),
		Entry("version of the wrong type", schemaCase{file: "api_v1_redis.yaml", mutate: setTo("7.2.4", "spec", "options", "version"),
			message: `spec.options.version: Invalid value: "string"`}),
		Entry("invalid deletionPolicy", schemaCase{file: "api_v1_redis.yaml", mutate: setTo("Keep", "spec", "deletionPolicy"),
			message: `spec.deletionPolicy: Unsupported value: "Keep": supported values: "Delete", "Orphan"`}),
		Entry("invalid managementPolicy", schemaCase{file: "api_v1_redis.yaml", mutate: setTo("ReadOnly", "spec", "managementPolicy"),
			message: `spec.managementPolicy: Unsupported value: "ReadOnly": supported values: "Full", "ObserveOnly"`}),
		Entry("malformed spec.addonId", schemaCase{file: "api_v1_redis.yaml", mutate: setTo("12345", "spec", "addonId"),
			message: `spec.addonId in body should match '^addon_[A-Za-z0-9-]+$'`}),
		Entry("invalid spec.secret.name", schemaCase{file: "api_v1_redis.yaml", mutate: setTo("Bad_Name", "spec", "secret", "name"),
			message: `spec.secret.name in body should match`}),
		Entry("resource name longer than 63 characters", schemaCase{file: "api_v1_redis.yaml",
			mutate:  func(u *unstructured.Unstructured) { u.SetName(strings.Repeat("n", 64)) },
			message: `metadata.name must be at most 63 characters`}),
		Entry("ConfigProvider variables that are not strings", schemaCase{file: "api_v1_configprovider.yaml", mutate: setTo(map[string]any{"N": int64(1)}, "spec", "variables"),
			message: `spec.variables.N: Invalid value: "integer"`}),
		Entry("changing spec.organisation", schemaCase{file: "api_v1_redis.yaml", update: true, mutate: setTo("orga_00000000-0000-0000-0000-00000000ffff", "spec", "organisation"),
			message: `spec.organisation is immutable`}),
		Entry("lowering the version", schemaCase{file: "api_v1_postgresql.yaml", update: true, mutate: setTo(int64(15), "spec", "options", "version"),
			message: `spec.options.version cannot go down`}),
		Entry("changing encryption", schemaCase{file: "api_v1_postgresql.yaml", update: true, mutate: setTo(true, "spec", "options", "encryption"),
			message: `spec.options.encryption is set when the add-on is created and cannot change`}),
		Entry("changing the region of a kind Clever Cloud cannot migrate", schemaCase{file: "api_v1_metabase.yaml", update: true, mutate: setTo("rbx", "spec", "instance", "region"),
			message: `spec.instance.region is immutable`}),
		Entry("changing spec.addonId once set", schemaCase{file: "api_v1_redis.yaml", update: true,
			initial: setTo("addon_00000000-0000-0000-0000-00000000aaaa", "spec", "addonId"),
			mutate:  setTo("addon_00000000-0000-0000-0000-00000000bbbb", "spec", "addonId"),
			message: `spec.addonId cannot be changed or removed once set`}),
	)
})
