package chart_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/clever-operator/clever-operator/test/kube"
)

// otelEnv returns the container's variables whose name starts with OTEL_.
func otelEnv(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		if len(e.Name) > 5 && e.Name[:5] == "OTEL_" {
			out[e.Name] = e.Value
		}
	}
	return out
}

var _ = Describe("tracing values", func() {
	It("renders no tracing by default", func() {
		c := deployment(kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x")))).Spec.Template.Spec.Containers[0]
		Expect(c.Args).NotTo(ContainElement("--tracing"))
		Expect(otelEnv(c)).To(BeEmpty())
	})

	It("turns tracing.enabled, endpoint and protocol into --tracing and the OTLP variables", func() {
		c := deployment(kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "--set", "tracing.enabled=true",
			"--set", "tracing.endpoint=http://otel-collector.observability:4317", "--set", "tracing.protocol=grpc")))).Spec.Template.Spec.Containers[0]
		Expect(c.Args).To(ContainElement("--tracing"))
		Expect(otelEnv(c)).To(Equal(map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability:4317",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		}))

		c = deployment(kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "--set", "tracing.enabled=true")))).Spec.Template.Spec.Containers[0]
		Expect(otelEnv(c)).To(Equal(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}), "no endpoint: the SDK's default")
	})

	It("rejects a protocol the operator does not speak and an endpoint that is not a URL", func() {
		out, err := helmTemplate("--set", "credentials.existingSecret=x", "--set", "tracing.enabled=true", "--set", "tracing.protocol=http/json")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("/tracing/protocol"))
		out, err = helmTemplate("--set", "credentials.existingSecret=x", "--set", "tracing.endpoint=collector:4318")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("/tracing/endpoint"))
	})
})
