package security_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// A tenant is played by a ServiceAccount of its namespace holding exactly what the built-in
// `edit` role grants there, reached by impersonation on a control plane that enforces RBAC:
// every write a spec makes "as team-b" is one a namespace editor could make.
//
// envtest runs no kube-controller-manager, so nothing aggregates the `edit` ClusterRole: the
// Role below is what that aggregation computes, the rules of every ClusterRole labelled
// aggregate-to-edit or aggregate-to-view (Kubernetes' own system:aggregate-to-edit and
// system:aggregate-to-view, and the operator's per-kind editor roles from config/rbac).

const aggregateToEdit = "rbac.authorization.k8s.io/aggregate-to-edit"

// tenantClient returns a client acting as the editor of namespace ns (created on first use).
func tenantClient(ns string) client.Client {
	GinkgoHelper()
	installEditorRoles()
	const sa = "editor"
	create := func(o client.Object) {
		GinkgoHelper()
		if err := k8s.Create(context.Background(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	}
	create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})
	create(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-edit"}, Rules: editRules()})
	create(&rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant-edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	})
	cfg := rest.CopyConfig(restCfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// mutateAs applies fn to the live object of u and writes it with c (a tenant's client),
// retrying on conflict.
func mutateAs(c client.Client, u *unstructured.Unstructured, fn func(live *unstructured.Unstructured)) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := u.DeepCopy()
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(u), live); err != nil {
			return err
		}
		fn(live)
		return c.Update(context.Background(), live)
	})).To(Succeed())
}

// annotateAs sets annotations on u's live object with c.
func annotateAs(c client.Client, u *unstructured.Unstructured, kv map[string]string) {
	GinkgoHelper()
	mutateAs(c, u, func(live *unstructured.Unstructured) {
		a := live.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		for k, v := range kv {
			a[k] = v
		}
		live.SetAnnotations(a)
	})
}

// editRules is the aggregation of `edit` (and the `view` it includes) as it stands now.
func editRules() []rbacv1.PolicyRule {
	GinkgoHelper()
	var rules []rbacv1.PolicyRule
	for _, label := range []string{aggregateToEdit, "rbac.authorization.k8s.io/aggregate-to-view"} {
		list := &rbacv1.ClusterRoleList{}
		Expect(k8s.List(context.Background(), list, client.MatchingLabels{label: "true"})).To(Succeed())
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		for _, cr := range list.Items {
			rules = append(rules, cr.Rules...)
		}
	}
	Expect(rules).NotTo(BeEmpty())
	return rules
}

// installEditorRoles applies the operator's aggregated editor ClusterRoles (as make deploy
// and the bundle install them), once per suite.
var editorRolesInstalled bool

func installEditorRoles() {
	GinkgoHelper()
	if editorRolesInstalled {
		return
	}
	files, err := filepath.Glob(filepath.Join("config", "rbac", "*_editor_role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty())
	for _, f := range files {
		b, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		cr := &rbacv1.ClusterRole{}
		Expect(yaml.Unmarshal(b, cr)).To(Succeed())
		if cr.Labels[aggregateToEdit] != "true" {
			continue // not part of `edit` (the ClusterCleverCredentials editor is admin-only)
		}
		if err := k8s.Create(context.Background(), cr); err != nil && !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	}
	editorRolesInstalled = true
}

var _ = Describe("the tenant client", func() {
	It("holds exactly a namespace editor's rights: resources and Secrets of its namespace, nothing elsewhere, no status", func() {
		w := newWorld()
		b := tenantClient(w.teamB)
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: "mine"}, StringData: map[string]string{"k": "v"}}
		Expect(b.Create(context.Background(), sec)).To(Succeed())
		pg := sample("api_v1_postgresql.yaml", w.teamB, "mine", w.orgB)
		Expect(b.Create(context.Background(), pg)).To(Succeed())
		// Not in team-a, not cluster-wide, not the status subresource.
		Expect(apierrors.IsForbidden(b.Get(context.Background(), client.ObjectKey{Namespace: w.teamA, Name: "x"}, &corev1.Secret{}))).To(BeTrue())
		Expect(apierrors.IsForbidden(b.List(context.Background(), &corev1.NamespaceList{}))).To(BeTrue())
		pg.Object["status"] = map[string]any{"addon": "addon_forged"}
		Expect(apierrors.IsForbidden(b.Status().Update(context.Background(), pg))).To(BeTrue())
		Expect(k8s.Delete(context.Background(), pg)).To(Succeed())
	})
})
