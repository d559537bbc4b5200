package badinput_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// Sizes: one resource cannot bloat etcd or the operator's memory. Every user string, map and
// list of the CRDs is bounded (test/crdsizes checks the schemas); here the API server itself
// refuses oversized objects with a readable message.

func manyStrings(n, size int) map[string]any {
	m := map[string]any{}
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("K%04d", i)] = strings.Repeat("v", size)
	}
	return m
}

var _ = Describe("oversized input the API server refuses", func() {
	DescribeTable("with a message naming the field", runSchemaCase,
		Entry("spec.organisation of 65 characters", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo("orga_"+strings.Repeat("0", 60), "spec", "organisation"),
			message: "spec.organisation: Too long: may not be more than 64"}),
		Entry("spec.instance.region of 65 characters", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo(strings.Repeat("r", 65), "spec", "instance", "region"),
			message: "spec.instance.region: Too long: may not be more than 64"}),
		Entry("spec.instance.plan of 129 characters", schemaCase{file: "api_v1_postgresql.yaml",
			mutate:  setTo(strings.Repeat("p", 129), "spec", "instance", "plan"),
			message: "spec.instance.plan: Too long: may not be more than 128"}),
		Entry("spec.addonId of 65 characters", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo("addon_"+strings.Repeat("a", 59), "spec", "addonId"),
			message: "spec.addonId: Too long: may not be more than 64"}),
		Entry("a label value of 64 characters", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo(map[string]any{"team": strings.Repeat("l", 64)}, "spec", "secret", "labels"),
			message: "spec.secret.labels: a key is at most 317 characters (prefix/name) and a value at most 63"}),
		Entry("65 labels", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo(manyStrings(65, 1), "spec", "secret", "labels"),
			message: "spec.secret.labels: Too many: 65: must have at most 64 items"}),
		Entry("an annotation value of 4097 characters", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo(map[string]any{"note": strings.Repeat("a", 4097)}, "spec", "secret", "annotations"),
			message: "spec.secret.annotations: a key is at most 317 characters (prefix/name) and a value at most 4096"}),
		Entry("a template of 8193 characters", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo(map[string]any{"T": strings.Repeat("t", 8193)}, "spec", "secret", "templates"),
			message: "spec.secret.templates: a key is at most 253 characters and a template at most 8192"}),
		Entry("templates of 72000 characters in all", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo(manyStrings(9, 8000), "spec", "secret", "templates"),
			message: "spec.secret.templates: the templates are at most 65536 characters in all"}),
		Entry("65 templates", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo(manyStrings(65, 1), "spec", "secret", "templates"),
			message: "spec.secret.templates: Too many: 65: must have at most 64 items"}),
		Entry("65 rollout matchLabels", schemaCase{file: "api_v1_redis.yaml",
			mutate:  setTo(map[string]any{"matchLabels": manyStrings(65, 1)}, "spec", "secret", "rollout"),
			message: "spec.secret.rollout.matchLabels: Too many: 65: must have at most 64 items"}),
		Entry("257 ConfigProvider variables", schemaCase{file: "api_v1_configprovider.yaml",
			mutate:  setTo(manyStrings(257, 1), "spec", "variables"),
			message: "spec.variables: Too many: 257: must have at most 256 items"}),
		Entry("a ConfigProvider variable of 256 KiB + 1", schemaCase{file: "api_v1_configprovider.yaml",
			mutate:  setTo(map[string]any{"BIG": strings.Repeat("v", 256<<10+1)}, "spec", "variables"),
			message: "spec.variables: a name is at most 253 characters and a value at most 262144"}),
		Entry("ConfigProvider variables of 800 KiB in all", schemaCase{file: "api_v1_configprovider.yaml",
			mutate:  setTo(manyStrings(4, 200<<10), "spec", "variables"),
			message: "spec.variables: the names and values are at most 786432 bytes in all"}),
	)
})
