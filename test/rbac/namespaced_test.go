package rbac

import (
	"context"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Issue #15 §3: watching a set of namespaces, the operator is granted Secret access only
// there, whichever way it is installed; SubjectAccessReviews on a real API server prove it.
var _ = Describe("a namespaced install (watching team-a and team-b)", Ordered, func() {
	watched := []string{"team-a", "team-b"}
	const elsewhere = "team-c"

	BeforeAll(func() {
		for _, ns := range append([]string{elsewhere}, watched...) {
			ensureNamespace(ns)
		}
	})

	// watchFlag returns the --watch-namespace value of the Deployment among objs.
	watchFlag := func(objs []*unstructured.Unstructured) []string {
		GinkgoHelper()
		for _, o := range objs {
			if o.GetKind() != "Deployment" {
				continue
			}
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
			for _, a := range args {
				if v, ok := strings.CutPrefix(a, "--watch-namespace="); ok {
					return strings.Split(v, ",")
				}
			}
		}
		Fail("no Deployment with --watch-namespace")
		return nil
	}

	// roleBindingNamespaces returns the namespaces of the RoleBindings of role (a ClusterRole).
	roleBindingNamespaces := func(objs []*unstructured.Unstructured, role string) []string {
		var out []string
		for _, o := range objs {
			if o.GetKind() == "RoleBinding" {
				if n, _, _ := unstructured.NestedString(o.Object, "roleRef", "name"); n == role {
					out = append(out, o.GetNamespace())
				}
			}
		}
		return out
	}

	// expectNamespacedOnly checks what the ServiceAccount saNS/sa may do.
	// ownOnlyKeyAndLease: in its own namespace the operator may only get Secrets by name and
	// create the claim key (OLM grants the CSV's permissions in the operator's namespace too).
	expectNamespacedOnly := func(saNS, sa string, ownOnlyKeyAndLease bool) {
		GinkgoHelper()
		for _, ns := range watched {
			for _, verb := range []string{"get", "list", "watch", "create", "update", "delete"} {
				Expect(access(saNS, sa, verb, "", "secrets", ns, "")).To(BeTrue(), "%s secrets in watched %s", verb, ns)
			}
			Expect(access(saNS, sa, "list", "", "configmaps", ns, "")).To(BeTrue())
			Expect(access(saNS, sa, "create", "", "events", ns, "")).To(BeTrue())
			Expect(access(saNS, sa, "update", "api.clever-cloud.com", "postgresqls", ns, "")).To(BeTrue())
			Expect(access(saNS, sa, "patch", "apps", "deployments", ns, "")).To(BeTrue())
		}
		for _, verb := range []string{"get", "list", "watch", "create", "update", "delete"} {
			Expect(access(saNS, sa, verb, "", "secrets", elsewhere, "")).To(BeFalse(), "%s secrets in unwatched %s", verb, elsewhere)
			Expect(access(saNS, sa, verb, "", "secrets", "", "")).To(BeFalse(), "%s secrets cluster-wide", verb)
		}
		Expect(access(saNS, sa, "get", "", "secrets", elsewhere, "clever-operator-claim-key")).To(BeFalse())
		Expect(access(saNS, sa, "list", "", "configmaps", elsewhere, "")).To(BeFalse())
		Expect(access(saNS, sa, "create", "", "events", elsewhere, "")).To(BeFalse())
		Expect(access(saNS, sa, "list", "api.clever-cloud.com", "postgresqls", elsewhere, "")).To(BeFalse())
		Expect(access(saNS, sa, "list", "api.clever-cloud.com", "postgresqls", "", "")).To(BeFalse())
		Expect(access(saNS, sa, "patch", "apps", "deployments", elsewhere, "")).To(BeFalse())

		// Its own namespace: the Lease, the claim key and the Secrets of ClusterCleverCredentials,
		// read by name (get), never listed or watched.
		Expect(access(saNS, sa, "update", "coordination.k8s.io", "leases", saNS, "")).To(BeTrue())
		Expect(access(saNS, sa, "get", "", "secrets", saNS, "clever-operator-claim-key")).To(BeTrue())
		Expect(access(saNS, sa, "get", "", "secrets", saNS, "shared-clever-credentials")).To(BeTrue())
		Expect(access(saNS, sa, "create", "", "secrets", saNS, "")).To(BeTrue())
		if ownOnlyKeyAndLease {
			Expect(access(saNS, sa, "list", "", "secrets", saNS, "")).To(BeFalse())
			Expect(access(saNS, sa, "watch", "", "secrets", saNS, "")).To(BeFalse())
			Expect(access(saNS, sa, "delete", "", "secrets", saNS, "clever-operator-credentials")).To(BeFalse())
		}

		// Cluster-scoped needs stay cluster-wide.
		Expect(access(saNS, sa, "get", "", "namespaces", "", elsewhere)).To(BeTrue())
		Expect(access(saNS, sa, "create", "authentication.k8s.io", "tokenreviews", "", "")).To(BeTrue())
		Expect(access(saNS, sa, "create", "authorization.k8s.io", "subjectaccessreviews", "", "")).To(BeTrue())
	}

	It("kustomize build config/namespaced: RoleBindings in the watched namespaces only", func() {
		objs := decode(tool("kustomize", "build", "config/namespaced"))
		Expect(watchFlag(objs)).To(Equal(watched))
		Expect(roleBindingNamespaces(objs, "clever-operator-manager-namespaced-role")).To(ConsistOf(watched))
		for _, o := range objs {
			if o.GetKind() == "ClusterRoleBinding" {
				n, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
				Expect(n).NotTo(Equal("clever-operator-manager-namespaced-role"), "the namespaced rules are never bound cluster-wide here")
			}
		}
		applyRBAC(objs)
		expectNamespacedOnly("clever-operator-system", "clever-operator-controller-manager", true)
	})

	It("helm template --set watchNamespaces={team-a,team-b}: RoleBindings in the watched namespaces only", func() {
		objs := decode(tool("helm", "template", "ns", "dist/chart", "--namespace", "helm-op", "--kube-version", "1.35.4",
			"--set", "watchNamespaces={team-a,team-b}"))
		Expect(watchFlag(objs)).To(Equal(watched))
		Expect(roleBindingNamespaces(objs, "ns-clever-operator-manager-namespaced")).To(ConsistOf(watched))
		n := applyRBAC(objs)
		Expect(n["RoleBinding"]).To(Equal(1+len(watched)), "leader election + one per watched namespace")
		expectNamespacedOnly("helm-op", "ns-clever-operator", true)
	})

	It("the OLM bundle: namespaced rules in the CSV's permissions, which OLM grants in the target namespaces only", func() {
		b, err := os.ReadFile(root("bundle", "manifests", "clever-operator.clusterserviceversion.yaml"))
		Expect(err).NotTo(HaveOccurred())
		csv := decode(b)
		Expect(csv).To(HaveLen(1))
		type perm struct {
			ServiceAccountName string              `json:"serviceAccountName"`
			Rules              []rbacv1.PolicyRule `json:"rules"`
		}
		var spec struct {
			Permissions        []perm `json:"permissions"`
			ClusterPermissions []perm `json:"clusterPermissions"`
		}
		raw, _, _ := unstructured.NestedMap(csv[0].Object, "spec", "install", "spec")
		Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec)).To(Succeed())
		Expect(spec.ClusterPermissions).To(HaveLen(1))
		for _, r := range spec.ClusterPermissions[0].Rules {
			Expect(r.Resources).NotTo(ContainElements("secrets"), "clusterPermissions must not grant Secrets")
			Expect(r.Resources).NotTo(ContainElements("configmaps"))
		}
		modes, _, _ := unstructured.NestedSlice(csv[0].Object, "spec", "installModes")
		Expect(modes).To(ContainElements(
			map[string]any{"type": "OwnNamespace", "supported": true}, map[string]any{"type": "SingleNamespace", "supported": true},
			map[string]any{"type": "MultiNamespace", "supported": true}, map[string]any{"type": "AllNamespaces", "supported": true}))

		// What OLM does for a MultiNamespace OperatorGroup (operator namespace olm-op, targets
		// team-a and team-b): clusterPermissions become a ClusterRole and ClusterRoleBinding;
		// permissions a Role and RoleBinding in the operator's namespace and in every target
		// namespace (for AllNamespaces, a ClusterRole bound cluster-wide instead).
		const opNS, sa = "olm-op", "clever-operator-controller-manager"
		ensureNamespace(opNS)
		ctx := context.Background()
		subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: opNS}}
		Expect(k8s.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "olm-sim-cluster"}, Rules: spec.ClusterPermissions[0].Rules})).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "olm-sim-cluster"}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "olm-sim-cluster"}})).To(Succeed())
		for _, ns := range append([]string{opNS}, watched...) {
			for i, p := range spec.Permissions {
				Expect(p.ServiceAccountName).To(Equal(sa))
				name := "olm-sim-" + string(rune('a'+i))
				Expect(k8s.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: p.Rules})).To(Succeed())
				Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Subjects: subject,
					RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}})).To(Succeed())
			}
		}
		expectNamespacedOnly(opNS, sa, false)
	})

	It("control: the chart watching every namespace binds the same rules cluster-wide", func() {
		objs := decode(tool("helm", "template", "all", "dist/chart", "--namespace", "helm-all", "--kube-version", "1.35.4"))
		applyRBAC(objs)
		Expect(access("helm-all", "all-clever-operator", "get", "", "secrets", elsewhere, "")).To(BeTrue())
		Expect(access("helm-all", "all-clever-operator", "watch", "", "secrets", "", "")).To(BeTrue())
		Expect(access("helm-all", "nobody", "get", "", "secrets", elsewhere, "")).To(BeFalse(), "the SubjectAccessReviews answer per subject")
	})
})
