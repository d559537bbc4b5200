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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/api/shared"
	apiv1 "github.com/clever-operator/clever-operator/api/v1"
	apiv1alpha1 "github.com/clever-operator/clever-operator/api/v1alpha1"
)

// helmStatus is what the helm-operator-plugins reconciler writes: the whole
// status replaced by conditions (reason/message often empty) and a
// deployedRelease carrying the rendered manifest, credentials included.
func helmStatus(release string) map[string]any {
	return map[string]any{
		"conditions": []any{
			map[string]any{"type": "Initialized", "status": "True", "reason": "", "message": "",
				"lastTransitionTime": "2026-01-02T03:04:05Z"},
			map[string]any{"type": "Deployed", "status": "True", "reason": "InstallSuccessful",
				"message": "1. Secret rendered", "lastTransitionTime": "2026-01-02T03:04:05Z"},
			map[string]any{"type": "ReleaseFailed", "status": "False", "lastTransitionTime": "2026-01-02T03:04:05Z"},
			map[string]any{"type": "Irreconcilable", "status": "False"},
		},
		"deployedRelease": map[string]any{
			"name":     release,
			"manifest": "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: pg-secrets\ndata:\n  POSTGRESQL_ADDON_PASSWORD: c2VjcmV0\n",
		},
	}
}

var _ = Describe("status", func() {
	It("defaults to {observedGeneration: 0} on a new resource, so kstatus reads it as in progress", func() {
		obj := kv("kv-status-default")
		create(obj)
		live := suite.Live(obj)
		Expect(live.GetGeneration()).To(BeEquivalentTo(1))
		Expect(live.Object["status"]).To(Equal(map[string]any{"observedGeneration": int64(0)}))
	})

	It("drops a status sent with the create (status subresource)", func() {
		obj := postgreSql("pg-create-status")
		obj.Object["status"] = map[string]any{"addon": "addon_forged", "observedGeneration": int64(7)}
		create(obj)
		Expect(suite.Live(obj).Object["status"]).To(Equal(map[string]any{"observedGeneration": int64(0)}))
	})

	It("accepts the Helm reconciler's status write and prunes deployedRelease.manifest", func() {
		obj := postgreSql("pg-helm")
		create(obj)
		live := suite.Live(obj)
		live.Object["status"] = helmStatus("postgresql-pg-helm")
		Expect(k8s.Status().Update(ctx, live)).To(Succeed())

		after := suite.Live(obj)
		release, found, err := unstructured.NestedMap(after.Object, "status", "deployedRelease")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())
		Expect(release).To(Equal(map[string]any{"name": "postgresql-pg-helm"}), "manifest must be pruned")

		conds, _, err := unstructured.NestedSlice(after.Object, "status", "conditions")
		Expect(err).NotTo(HaveOccurred())
		Expect(conds).To(HaveLen(4))
		Expect(conds[0]).To(HaveKeyWithValue("reason", ""))
		Expect(conds[3]).NotTo(HaveKey("lastTransitionTime"))

		// The typed view agrees.
		typed := &apiv1.PostgreSql{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), typed)).To(Succeed())
		Expect(typed.Status.DeployedRelease).To(Equal(&shared.DeployedRelease{Name: "postgresql-pg-helm"}))
		Expect(shared.FindCondition(typed.Status.Conditions, "Deployed").Reason).To(Equal("InstallSuccessful"))
	})

	It("rejects a condition with an unknown status or without a type", func() {
		obj := kv("kv-bad-condition")
		create(obj)
		live := suite.Live(obj)
		live.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "Maybe"}}}
		expectInvalid(k8s.Status().Update(ctx, live), "status.conditions[0].status", "Unsupported value: \"Maybe\"")

		live = suite.Live(obj)
		live.Object["status"] = map[string]any{"conditions": []any{map[string]any{"status": "True"}}}
		expectInvalid(k8s.Status().Update(ctx, live), "type", "Required value")
	})

	It("round-trips every Go-owned status field through the typed API", func() {
		now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		kc := &apiv1.Keycloak{
			ObjectMeta: metav1.ObjectMeta{Namespace: validationNamespace, Name: "kc-typed"},
			Spec: apiv1.KeycloakSpec{
				Organisation: orgaID,
				Instance:     shared.Instance{Region: "par", Plan: "base"},
				Secret:       &shared.SecretSpec{Name: "kc-credentials"},
			},
		}
		create(kc)
		Expect(kc.Status.ObservedGeneration).To(BeZero())
		Expect(shared.SecretName(kc)).To(Equal("kc-credentials"))

		st := kc.GetCommonStatus()
		st.ObservedGeneration = kc.Generation
		st.Addon = "addon_00000000-0000-0000-0000-0000000000aa"
		st.Plan = "plan_3819e4b3-cc6d-4847-9f02-0db93212956c"
		st.SecretName = shared.SecretName(kc)
		st.DeployedRelease = &shared.DeployedRelease{Name: "keycloak-kc-typed"}
		Expect(shared.SetCondition(&st.Conditions, shared.Condition{
			Type: "Ready", Status: shared.ConditionTrue, Reason: "Provisioned", ObservedGeneration: 1,
		}, now)).To(BeTrue())
		Expect(shared.SetCondition(&st.Conditions, shared.Condition{Type: "AddonReady", Status: shared.ConditionTrue}, now)).To(BeTrue())
		urls := shared.URLsFromEnv(kc, map[string]string{
			"CC_KEYCLOAK_URL":       "https://kc.example.com",
			"CC_KEYCLOAK_ADMIN_URL": "https://kc.example.com/admin",
			"OTHER":                 "x",
		})
		Expect(urls).To(Equal(map[string]string{"url": "https://kc.example.com", "admin_url": "https://kc.example.com/admin"}))
		Expect(shared.SetURLs(kc, urls)).To(BeTrue())
		Expect(shared.SetURLs(kc, urls)).To(BeFalse())
		want := kc.Status.DeepCopy()
		Expect(k8s.Status().Update(ctx, kc)).To(Succeed())

		got := &apiv1.Keycloak{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(kc), got)).To(Succeed())
		Expect(got.Status).To(BeComparableTo(*want)) // times come back in Local

		// JSON names as the reference operator's (url, admin_url) and the printer columns expect.
		live := suite.Live(&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "api.clever-cloud.com/v1", "kind": "Keycloak",
			"metadata": map[string]any{"namespace": validationNamespace, "name": "kc-typed"},
		}})
		status := live.Object["status"].(map[string]any)
		Expect(status).To(HaveKeyWithValue("url", "https://kc.example.com"))
		Expect(status).To(HaveKeyWithValue("admin_url", "https://kc.example.com/admin"))
		Expect(status).To(HaveKeyWithValue("addon", "addon_00000000-0000-0000-0000-0000000000aa"))
		Expect(status).To(HaveKeyWithValue("secretName", "kc-credentials"))
	})

	It("defaults options and the secret name on typed objects", func() {
		k := &apiv1alpha1.KV{
			ObjectMeta: metav1.ObjectMeta{Namespace: validationNamespace, Name: "kv-typed"},
			Spec:       apiv1alpha1.KVSpec{Organisation: orgaID, Instance: shared.RegionInstance{Region: "par"}},
		}
		create(k)
		Expect(k.GetSecretSpec()).To(BeNil())
		Expect(shared.SecretName(k)).To(Equal("kv-typed-secrets"))
		Expect(shared.URLFields(k)).To(BeEmpty())
		Expect(shared.SetURLs(k, map[string]string{"url": "https://ignored"})).To(BeFalse())

		cellar := &apiv1.Cellar{
			ObjectMeta: metav1.ObjectMeta{Namespace: validationNamespace, Name: "cellar-typed"},
			Spec:       apiv1.CellarSpec{Organisation: orgaID, Instance: shared.Instance{Region: "par", Plan: "S"}},
		}
		create(cellar)
		Expect(shared.URLsFromEnv(cellar, map[string]string{"CELLAR_ADDON_HOST": "cellar-c2.services.clever-cloud.com"})).
			To(Equal(map[string]string{"url": "cellar-c2.services.clever-cloud.com"}))
	})
})
