package chart_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clever-operator/clever-operator/internal/operator"
	"github.com/clever-operator/clever-operator/test/kube"
)

var _ = Describe("sharding values (watchSelector, leaderElectionID)", func() {
	argsWith := func(values string) []string {
		GinkgoHelper()
		f := filepath.Join(GinkgoT().TempDir(), "values.yaml")
		Expect(os.WriteFile(f, []byte(values), 0o600)).To(Succeed())
		return deployment(kube.Decode([]byte(mustTemplate("--set", "credentials.existingSecret=x", "-f", f)))).Spec.Template.Spec.Containers[0].Args
	}
	flagValue := func(args []string, name string) (string, bool) {
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
				return v, true
			}
		}
		return "", false
	}

	It("passes neither flag by default (all resources, the historic lease)", func() {
		args := argsWith("{}")
		for _, f := range []string{"watch-selector", "leader-election-id"} {
			_, ok := flagValue(args, f)
			Expect(ok).To(BeFalse(), "--%s is passed by default", f)
		}
	})

	It("passes the selector and the lease name as one argument each, as the operator parses them", func() {
		args := argsWith("watchSelector: team in (pay,web),!legacy\nleaderElectionID: clever-operator-payments\n")
		sel, ok := flagValue(args, "watch-selector")
		Expect(ok).To(BeTrue())
		parsed, err := operator.ParseWatchSelector(sel)
		Expect(err).NotTo(HaveOccurred())
		Expect(parsed.Labels.Matches(labels.Set{"team": "pay"})).To(BeTrue())
		Expect(parsed.Labels.Matches(labels.Set{"team": "web", "legacy": "x"})).To(BeFalse())
		lease, ok := flagValue(args, "leader-election-id")
		Expect(ok).To(BeTrue())
		Expect(lease).To(Equal("clever-operator-payments"))
	})

	It("refuses a lease name Kubernetes would refuse", func() {
		out, err := helmTemplate("--set", "credentials.existingSecret=x", "--set", "leaderElectionID=Not_A_Name")
		Expect(err).To(HaveOccurred())
		Expect(out).To(ContainSubstring("leaderElectionID"))
	})
})
