package security_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/backups"
	"github.com/clever-operator/clever-operator/internal/cellarbucket"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/rollout"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/status"
	"github.com/clever-operator/clever-operator/test/kube"
)

// The tenant red-team suite (issue #43, "Done when" 5). Each spec is one tenant action by
// team-b, made as team-b's namespace editor (tenantClient), then checks of what team-a's
// namespace, team-b's other objects and the fake Clever Cloud hold afterwards. To add a case:
// pick the closest It (or add an Entry), make the action through `asB`, and assert on
// objects the action must not have changed (data and resourceVersion), on calls(org) and on
// expectNoneOf(w.teamB, team-a's values). Each It's title states the action and the outcome.

// rtObject is a snapshot of an object the operator must leave alone.
type rtObject struct {
	obj  client.Object
	rv   string
	data string
}

// specific keeps the values of team-a's Secrets that are specific to its add-on (at least 12
// characters, not the service binding's constant provider).
func specific(values []string) []string {
	var out []string
	for _, v := range values {
		if len(v) >= 12 && v != kinds.BindingProvider {
			out = append(out, v)
		}
	}
	Expect(out).NotTo(BeEmpty())
	return out
}

// rtSnapshot reads obj (Secret, ConfigMap or Deployment) with the admin client.
func rtSnapshot(obj client.Object) rtObject {
	GinkgoHelper()
	Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	return rtObject{obj: obj, rv: obj.GetResourceVersion(), data: rtData(obj)}
}

func rtData(obj client.Object) string {
	var v any
	switch o := obj.(type) {
	case *corev1.Secret:
		v = []any{o.Data, o.OwnerReferences, o.Labels}
	case *corev1.ConfigMap:
		v = []any{o.Data, o.OwnerReferences, o.Labels}
	case *appsv1.Deployment:
		v = o.Spec.Template.Annotations
	}
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// expectSame checks that the object still exists, unchanged (same resourceVersion and data).
func (s rtObject) expectSame(what string) {
	GinkgoHelper()
	cur := s.obj.DeepCopyObject().(client.Object)
	Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(s.obj), cur)).To(Succeed(), "%s still exists", what)
	Expect(rtData(cur)).To(Equal(s.data), "%s: content unchanged", what)
	Expect(cur.GetResourceVersion()).To(Equal(s.rv), "%s: not written at all", what)
}

// rtDeployment creates a Deployment with c.
func rtDeployment(c client.Client, ns, name string, labels, annotations map[string]string) *appsv1.Deployment {
	GinkgoHelper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}, Annotations: map[string]string{"kept": "yes"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
			},
		},
	}
	Expect(c.Create(context.Background(), d)).To(Succeed())
	return d
}

func rtPodAnnotations(ns, name string) map[string]string {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, d)).To(Succeed())
	return d.Spec.Template.Annotations
}

// asTenant creates u with c (team-b's editor).
func asTenant(c client.Client, u *unstructured.Unstructured) *unstructured.Unstructured {
	GinkgoHelper()
	Expect(c.Create(context.Background(), u)).To(Succeed(), "%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	return u
}

// deleteAs deletes objs with c and waits until they are gone.
func deleteAs(c client.Client, objs ...*unstructured.Unstructured) {
	GinkgoHelper()
	for _, u := range objs {
		Expect(client.IgnoreNotFound(c.Delete(context.Background(), u.DeepCopy()))).To(Succeed())
	}
	for _, u := range objs {
		Eventually(suite.GetOf(u)).Should(BeNil(), "%s %s/%s is deleted", u.GetKind(), u.GetNamespace(), u.GetName())
	}
}

// envValue is one variable of an add-on at the fake.
func envValue(id, name string) string {
	for _, v := range fake.Env(id) {
		if v.Name == name {
			return v.Value
		}
	}
	return ""
}

// changePassword changes an add-on's password at the fake (as Clever Cloud would).
func changePassword(id, password string) {
	GinkgoHelper()
	env := fake.Env(id)
	found := false
	for i := range env {
		if env[i].Name == "POSTGRESQL_ADDON_PASSWORD" {
			env[i].Value, found = password, true
		}
	}
	Expect(found).To(BeTrue())
	Expect(fake.SetEnv(id, env)).To(Succeed())
}

var _ = Describe("red team: a tenant (team-b, as its namespace editor) attacking through the fields and annotations the operator reads", func() {
	ctx := context.Background()

	It("annotations on its own resource (rollout opt-in, reconcile-requested-at, resync-period, backup-max-age, paused) act on its own objects only", func() {
		w := newWorld()
		db, idA, valuesA := teamAPostgres(w)
		valuesA = specific(valuesA)
		orgA := calls(w.orgA)
		// Team-a's Deployment opts in to both its own Secret and team-b's Secret name, by
		// annotation and by the labels team-b's resource selects.
		aApp := rtSnapshot(rtDeployment(k8s, w.teamA, "app", map[string]string{"uses": "pg"},
			map[string]string{rollout.AnnotationRolloutOnSecretChange: "db-secrets, mine-secrets"}))

		forB := grantTeamB(w, w.orgB, nil)
		asB := tenantClient(w.teamB)
		opted := rtDeployment(asB, w.teamB, "opted", map[string]string{"uses": "pg"}, nil)
		bystander := rtSnapshot(rtDeployment(asB, w.teamB, "bystander", map[string]string{"uses": "other"}, nil))
		// Opted in to team-a's Secret name, not to the one team-b's resource publishes.
		named := rtSnapshot(rtDeployment(asB, w.teamB, "named", nil, map[string]string{rollout.AnnotationRolloutOnSecretChange: "db-secrets"}))

		mine := withRef(sample("api_v1_postgresql.yaml", w.teamB, "mine", w.orgB), "ClusterCleverCredentials", forB)
		Expect(unstructured.SetNestedStringMap(mine.Object, map[string]string{"uses": "pg"}, "spec", "secret", "rollout", "matchLabels")).To(Succeed())
		mine.SetAnnotations(map[string]string{
			kinds.AnnotationResyncPeriod: "1ns",  // clamped to 30 s: no hot loop
			backups.AnnotationMaxAge:     "-36h", // invalid: a clear condition
		})
		asTenant(asB, mine)
		Eventually(suite.ReadyOf(mine)).Should(Equal("True/Provisioned"))
		idB := kube.StatusString(suite.Get(mine), "addon")
		// An invalid backup-max-age is reported on BackupStale once backups were read (never on
		// Ready): the resource stays Ready through refreshes.
		annotateAs(asB, mine, map[string]string{kinds.AnnotationReconcileRequestedAt: "rt-0"})
		Consistently(suite.ReadyOf(mine), 2*time.Second).Should(Equal("True/Provisioned"))
		Expect(kube.Condition(suite.Get(mine), status.TypeBackupStale)).To(Or(BeEmpty(), Equal("Unknown/"+status.ReasonInvalidBackupMaxAge)))

		// No hot loop from resync-period 1ns: a quiet resource makes (almost) no call.
		quiet := calls(w.orgB)
		time.Sleep(3 * time.Second)
		Expect(quiet.Matching("")).To(BeNumerically("<=", 2), "resync-period 1ns is clamped (no call loop)")

		// Clever Cloud changes team-b's password; team-b asks for a refresh: its opted-in
		// Deployment (and only it) is restarted.
		time.Sleep(1100 * time.Millisecond) // lastChangedAt has a one-second resolution
		changePassword(idB, "team-b-new-Pa55word-1")
		annotateAs(asB, mine, map[string]string{kinds.AnnotationReconcileRequestedAt: "rt-1"})
		key := rollout.PodTemplateAnnotation("mine-secrets")
		Eventually(func() map[string]string { return rtPodAnnotations(w.teamB, opted.Name) }, 15*time.Second).Should(HaveKey(key),
			"the positive control: team-b's opted-in Deployment is restarted")
		Consistently(func() map[string]string { return rtPodAnnotations(w.teamA, "app") }, time.Second).ShouldNot(HaveKey(key))
		aApp.expectSame("team-a's Deployment (opted in to team-b's Secret name and labels)")
		bystander.expectSame("team-b's Deployment that did not opt in")
		named.expectSame("team-b's Deployment opted in to another Secret name")

		// Paused: the new credentials are not published, nothing is written at Clever Cloud.
		annotateAs(asB, mine, map[string]string{kinds.AnnotationPaused: "true"})
		time.Sleep(time.Second)
		published := kube.SecretData(suite.Secret(w.teamB, "mine-secrets"))["POSTGRESQL_ADDON_PASSWORD"]
		Expect(published).To(Equal("team-b-new-Pa55word-1"))
		writes := calls(w.orgB)
		changePassword(idB, "team-b-new-Pa55word-2")
		annotateAs(asB, mine, map[string]string{kinds.AnnotationReconcileRequestedAt: "rt-2"})
		Consistently(func() string {
			return kube.SecretData(suite.Secret(w.teamB, "mine-secrets"))["POSTGRESQL_ADDON_PASSWORD"]
		}, 3*time.Second).Should(Equal(published), "paused: the Secret is not re-rendered")
		expectNoWrites(writes, "team-b's organisation while paused")

		expectTeamAIntact(db, idA, orgA)
		Expect(kube.SecretData(suite.Secret(w.teamA, "db-secrets"))).NotTo(BeEmpty())
		expectNoneOf(w.teamB, valuesA)
	})

	It("cannot have team-a's bucket emptied: its CellarBucket naming team-a's Cellar and bucket, annotated delete-bucket-contents, deletionPolicy Delete", func() {
		w := newWorld()
		_, id, env, s3 := teamACellar(w)
		keyID, keySecret := env["CELLAR_ADDON_KEY_ID"], env["CELLAR_ADDON_KEY_SECRET"]
		data := create(bucket(w.teamA, "data", map[string]any{"name": "cellar"}))
		Eventually(suite.ReadyOf(data)).Should(Equal("True/Available"))
		bucketA := kube.StatusString(suite.Get(data), "bucketName")
		Expect(s3.PutObject(bucketA, "precious.txt", "team-a's data")).To(Succeed())
		forB := grantTeamB(w, w.orgA, nil) // team-a's organisation, no binding privilege
		orgA := calls(w.orgA)
		lookups := lookupsOf(keyID)
		deletes := s3.Requests("DELETE")
		asB := tenantClient(w.teamB)

		empty := withRef(bucket(w.teamB, "empty", map[string]any{"addonId": id, "organisation": w.orgA}), "ClusterCleverCredentials", forB)
		Expect(unstructured.SetNestedField(empty.Object, bucketA, "spec", "bucketName")).To(Succeed())
		Expect(unstructured.SetNestedField(empty.Object, "Delete", "spec", "deletionPolicy")).To(Succeed())
		empty.SetAnnotations(map[string]string{cellarbucket.AnnotationDeleteContents: "true"})
		// The same by name: a Cellar named like team-a's does not exist in team-b.
		byName := bucket(w.teamB, "by-name", map[string]any{"name": "cellar"})
		Expect(unstructured.SetNestedField(byName.Object, bucketA, "spec", "bucketName")).To(Succeed())
		Expect(unstructured.SetNestedField(byName.Object, "Delete", "spec", "deletionPolicy")).To(Succeed())
		byName.SetAnnotations(map[string]string{cellarbucket.AnnotationDeleteContents: "true"})
		asTenant(asB, empty)
		asTenant(asB, byName)
		expectRefused(empty, status.ReasonBindingNotAllowed)
		Eventually(suite.ReadyOf(byName)).Should(Equal("False/" + status.ReasonCellarNotFound))
		deleteAs(asB, empty, byName)

		Expect(s3.BucketExists(bucketA)).To(BeTrue(), "team-a's bucket exists")
		Expect(s3.Objects(bucketA)).To(Equal(1), "team-a's object is still there")
		Expect(s3.Requests("DELETE")).To(Equal(deletes), "no S3 delete")
		Expect(lookupsOf(keyID)-lookups).To(BeNumerically("<=", 2), "no S3 client with team-a's keys beyond team-a's own bucket's refreshes")
		Expect(orgA.Route(envRoute)).To(BeZero(), "team-a's Cellar's keys are never read")
		expectUntouched(orgA, "team-a's organisation")
		expectNoneOf(w.teamB, []string{keyID, keySecret})
		Expect(suite.ReadyOf(data)()).To(Equal("True/Available"))
	})

	It("spec.secret.name, configMap.name and the binding Secret's name chosen to collide with objects the operator does not own (its own Secret, another resource's source Secret, a Helm release record): SecretConflict, nothing written or deleted", func() {
		w := newWorld()
		_, _, valuesA := teamAPostgres(w)
		valuesA = specific(valuesA)
		forB := grantTeamB(w, w.orgB, nil)
		asB := tenantClient(w.teamB)
		mkSecret := func(name string) rtObject {
			GinkgoHelper()
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: name}, StringData: map[string]string{"token": "team-b-own-" + name}}
			Expect(asB.Create(ctx, s)).To(Succeed())
			return rtSnapshot(&corev1.Secret{ObjectMeta: s.ObjectMeta})
		}
		victim := mkSecret("victim")
		bindingVictim := mkSecret("bnd-binding")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: "victim-cm"}, Data: map[string]string{"k": "team-b's"}}
		Expect(asB.Create(ctx, cm)).To(Succeed())
		cmVictim := rtSnapshot(&corev1.ConfigMap{ObjectMeta: cm.ObjectMeta})

		other := withRef(sample("api_v1_redis.yaml", w.teamB, "other", w.orgB), "ClusterCleverCredentials", forB)
		asTenant(asB, other)
		Eventually(suite.ReadyOf(other)).Should(Equal("True/Provisioned"))
		time.Sleep(time.Second) // its Helm release settles (the record is written once)
		source := rtSnapshot(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: "other-redis-source"}})
		record := rtSnapshot(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: "sh.helm.release.v1.redis-other.v1"}})
		otherSecret := rtSnapshot(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: "other-secrets"}})

		pg := func(name string, secret map[string]any) *unstructured.Unstructured {
			u := withRef(sample("api_v1_postgresql.yaml", w.teamB, name, w.orgB), "ClusterCleverCredentials", forB)
			Expect(unstructured.SetNestedMap(u.Object, secret, "spec", "secret")).To(Succeed())
			return asTenant(asB, u)
		}
		attempts := []*unstructured.Unstructured{
			pg("to-victim", map[string]any{"name": "victim"}),
			pg("to-source", map[string]any{"name": "other-redis-source"}),
			pg("to-record", map[string]any{"name": "sh.helm.release.v1.redis-other.v1"}),
			pg("to-credentials", map[string]any{"name": "other-secrets"}),
			pg("to-binding", map[string]any{"name": "bnd"}),
			pg("to-configmap", map[string]any{"configMap": map[string]any{"name": "victim-cm"}}),
		}
		for _, u := range attempts {
			Eventually(suite.ReadyOf(u), 20*time.Second).Should(Equal("False/"+status.ReasonSecretConflict), "%s", u.GetName())
		}
		Consistently(suite.ReadyOf(other), time.Second).Should(Equal("True/Provisioned"))
		victim.expectSame("team-b's own Secret")
		bindingVictim.expectSame("team-b's own Secret named like a binding Secret")
		cmVictim.expectSame("team-b's own ConfigMap")
		source.expectSame("the Redis' source Secret")
		record.expectSame("the Redis' Helm release record")
		otherSecret.expectSame("the Redis' credentials Secret")

		// Deleting them (their releases failed) deletes none of those objects either.
		deleteAs(asB, attempts...)
		victim.expectSame("team-b's own Secret, after the deletions")
		bindingVictim.expectSame("team-b's own binding-named Secret, after the deletions")
		cmVictim.expectSame("team-b's own ConfigMap, after the deletions")
		source.expectSame("the Redis' source Secret, after the deletions")
		record.expectSame("the Redis' Helm release record, after the deletions")
		otherSecret.expectSame("the Redis' credentials Secret, after the deletions")
		Expect(suite.ReadyOf(other)()).To(Equal("True/Provisioned"))
		expectNoneOf(w.teamB, valuesA)
	})

	It("spec.secret.templates cannot read the cluster, the operator's environment or files, nor exhaust it: SecretTemplateInvalid, nothing published", func() {
		w := newWorld()
		_, _, valuesA := teamAPostgres(w)
		valuesA = specific(valuesA)
		forB := grantTeamB(w, w.orgB, nil)
		asB := tenantClient(w.teamB)
		templates := map[string]string{
			"lookup":      fmt.Sprintf(`{{ lookup "v1" "Secret" %q "db-secrets" }}`, w.teamA),
			"env":         `{{ env "HOME" }}`,
			"expandenv":   `{{ expandenv "$HOME $KUBEBUILDER_ASSETS" }}`,
			"dns":         `{{ getHostByName "localhost" }}`,
			"tpl":         `{{ tpl "{{ .POSTGRESQL_ADDON_HOST }}" . }}`,
			"include":     `{{ define "x" }}x{{ end }}{{ include "x" . }}`,
			"template":    `{{ define "y" }}y{{ end }}{{ template "y" }}`,
			"files":       `{{ .Files.Get "/etc/passwd" }}`,
			"release":     `{{ .Release.Namespace }}`,
			"loop":        `{{ range until 100000000 }}{{ end }}`,
			"output":      `{{ repeat 2000000 "x" }}`,
			"nested-loop": `{{ range until 10000 }}{{ range until 10000 }}x{{ end }}{{ end }}`,
		}
		var attempts []*unstructured.Unstructured
		for name, tpl := range templates {
			u := withRef(sample("api_v1_postgresql.yaml", w.teamB, "tpl-"+name, w.orgB), "ClusterCleverCredentials", forB)
			Expect(unstructured.SetNestedStringMap(u.Object, map[string]string{"X": tpl}, "spec", "secret", "templates")).To(Succeed())
			attempts = append(attempts, asTenant(asB, u))
		}
		// The positive control: a template over the add-on's own keys is published.
		good := withRef(sample("api_v1_postgresql.yaml", w.teamB, "tpl-good", w.orgB), "ClusterCleverCredentials", forB)
		Expect(unstructured.SetNestedStringMap(good.Object, map[string]string{"X": "{{ .POSTGRESQL_ADDON_USER }}@{{ .POSTGRESQL_ADDON_HOST }}"}, "spec", "secret", "templates")).To(Succeed())
		asTenant(asB, good)
		Eventually(suite.ReadyOf(good), 20*time.Second).Should(Equal("True/Provisioned"))
		goodID := kube.StatusString(suite.Get(good), "addon")
		Expect(kube.SecretData(suite.Secret(w.teamB, "tpl-good-secrets"))).To(HaveKeyWithValue("X",
			envValue(goodID, "POSTGRESQL_ADDON_USER")+"@"+envValue(goodID, "POSTGRESQL_ADDON_HOST")))

		for _, u := range attempts {
			Eventually(suite.ReadyOf(u), 20*time.Second).Should(Equal("False/"+status.ReasonSecretTemplateInvalid), "%s", u.GetName())
			GinkgoWriter.Printf("%s: %s\n", u.GetName(), kube.ConditionMessage(suite.Get(u), "Ready"))
			Expect(suite.Secret(w.teamB, u.GetName()+"-secrets")).To(BeNil(), "%s: nothing published", u.GetName())
		}
		expectNoneOf(w.teamB, valuesA)
		deleteAs(asB, append(attempts, good)...)
	})

	It("ownerReferences to team-a's resource and the operator's labels on its own Secrets: nothing adopted, deleted or published there; its own resource of that name gets its own data", func() {
		w := newWorld()
		db, idA, valuesA := teamAPostgres(w)
		valuesA = specific(valuesA)
		asB := tenantClient(w.teamB)
		yes := true
		ownerA := metav1.OwnerReference{APIVersion: "api.clever-cloud.com/v1", Kind: "PostgreSql", Name: db.GetName(), UID: db.GetUID(), Controller: &yes}
		forged := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: "db-postgresql-source",
			Labels:          map[string]string{kinds.LabelManagedBy: kinds.ManagedByValue, kinds.LabelRole: kinds.RoleSource, kinds.LabelKind: "postgresql"},
			Annotations:     map[string]string{kinds.AnnotationAddonID: idA, secrets.AnnotationSignature: "v1/forged"},
			OwnerReferences: []metav1.OwnerReference{ownerA}},
			StringData: map[string]string{"POSTGRESQL_ADDON_PASSWORD": "forged-password-0001"}}
		Expect(asB.Create(ctx, forged)).To(Succeed())
		stray := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: "stray", OwnerReferences: []metav1.OwnerReference{ownerA}},
			StringData: map[string]string{"k": "team-b's stray value"}}
		Expect(asB.Create(ctx, stray)).To(Succeed())
		// Team-a's resource is refreshed: nothing of it goes to team-b.
		suite.Annotate(db, map[string]string{kinds.AnnotationReconcileRequestedAt: "rt-owner"})
		forgedSnap := rtSnapshot(&corev1.Secret{ObjectMeta: forged.ObjectMeta})
		straySnap := rtSnapshot(&corev1.Secret{ObjectMeta: stray.ObjectMeta})
		Consistently(func() string {
			return rtData(rtSnapshot(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: forged.Name}}).obj)
		}, 3*time.Second).Should(Equal(forgedSnap.data))
		forgedSnap.expectSame("the forged source Secret, with no resource of that name in team-b")
		orgA := calls(w.orgA) // after team-a's own refresh
		straySnap.expectSame("team-b's Secret owned by team-a's resource")
		Expect(suite.Secret(w.teamB, "db-secrets")).To(BeNil(), "nothing published from the forged Secret")
		expectNoneOf(w.teamB, valuesA)

		// Team-b's own PostgreSql named like team-a's: its own add-on, its own data.
		forB := grantTeamB(w, w.orgB, nil)
		mine := withRef(sample("api_v1_postgresql.yaml", w.teamB, "db", w.orgB), "ClusterCleverCredentials", forB)
		asTenant(asB, mine)
		Eventually(suite.ReadyOf(mine), 20*time.Second).Should(Equal("True/Provisioned"))
		idB := kube.StatusString(suite.Get(mine), "addon")
		Expect(idB).NotTo(Equal(idA))
		Eventually(func() string {
			return suite.Secret(w.teamB, "db-postgresql-source").Annotations[kinds.AnnotationAddonID]
		}).Should(Equal(idB))
		src := suite.Secret(w.teamB, "db-postgresql-source")
		Expect(metav1.GetControllerOf(src).UID).To(Equal(suite.Get(mine).GetUID()), "controlled by team-b's resource, not team-a's")
		Eventually(func() string {
			return kube.SecretData(suite.Secret(w.teamB, "db-secrets"))["POSTGRESQL_ADDON_PASSWORD"]
		}).Should(
			Equal(envValue(idB, "POSTGRESQL_ADDON_PASSWORD")), "team-b's own password, not the forged one")
		straySnap.expectSame("team-b's Secret owned by team-a's resource")
		expectNoneOf(w.teamB, append(valuesA, "forged-password-0001"))
		deleteAs(asB, mine)
		straySnap.expectSame("team-b's Secret owned by team-a's resource, after the deletion")
		expectTeamAIntact(db, idA, orgA)
		Expect(suite.Secret(w.teamA, "db-postgresql-source").Annotations[kinds.AnnotationAddonID]).To(Equal(idA))
	})

	It("names chosen to collide with the operator's objects: another kind's default Secret name, and a name whose Helm release name equals a long-named resource's (shortened with a hash)", func() {
		w := newWorld()
		forB := grantTeamB(w, w.orgB, nil)
		asB := tenantClient(w.teamB)
		kind, ok := kinds.KindFor(fakeapiPG)
		Expect(ok).To(BeTrue())

		// A Redis and a PostgreSql named alike: both default to same-secrets.
		rd := asTenant(asB, withRef(sample("api_v1_redis.yaml", w.teamB, "same", w.orgB), "ClusterCleverCredentials", forB))
		Eventually(suite.ReadyOf(rd)).Should(Equal("True/Provisioned"))
		sameSecret := rtSnapshot(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: "same-secrets"}})
		pgSame := asTenant(asB, withRef(sample("api_v1_postgresql.yaml", w.teamB, "same", w.orgB), "ClusterCleverCredentials", forB))
		Eventually(suite.ReadyOf(pgSame), 20*time.Second).Should(Equal("False/" + status.ReasonSecretConflict))
		sameSecret.expectSame("the Redis' credentials Secret")

		// A long name (63 characters) gets a release name shortened with a hash; a 42-character
		// name can spell that release name exactly.
		long := "a-very-long-postgresql-resource-name-chosen-by-team-b-0123456789"[:63]
		rn := kind.ReleaseName(long)
		short := strings.TrimPrefix(rn, kind.Lower()+"-")
		Expect(kind.ReleaseName(short)).To(Equal(rn), "the two names share a release name")
		first := asTenant(asB, withRef(sample("api_v1_postgresql.yaml", w.teamB, long, w.orgB), "ClusterCleverCredentials", forB))
		Eventually(suite.ReadyOf(first), 20*time.Second).Should(Equal("True/Provisioned"))
		time.Sleep(time.Second)
		firstSecret := rtSnapshot(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.teamB, Name: long + "-secrets"}})
		second := asTenant(asB, withRef(sample("api_v1_postgresql.yaml", w.teamB, short, w.orgB), "ClusterCleverCredentials", forB))
		Eventually(func() string { return kube.StatusString(suite.Get(second), "addon") }, 20*time.Second).ShouldNot(BeEmpty())
		Consistently(func() bool { return suite.Secret(w.teamB, long+"-secrets") != nil }, 5*time.Second).Should(BeTrue(),
			"the first resource's credentials Secret is not removed by the second's release")
		firstSecret.expectSame("the first resource's credentials Secret")
		Expect(suite.ReadyOf(first)()).To(Equal("True/Provisioned"))
		Expect(suite.ReadyOf(second)()).NotTo(Equal("True/Provisioned"), "the second resource does not take the first one's release")
		GinkgoWriter.Printf("second: %s: %s\n", suite.ReadyOf(second)(), kube.ConditionMessage(suite.Get(second), "Ready"))
		// Deleting the second leaves the first's release and Secret.
		deleteAs(asB, second)
		firstSecret.expectSame("the first resource's credentials Secret, after the second's deletion")
		Expect(suite.ReadyOf(first)()).To(Equal("True/Provisioned"))
		deleteAs(asB, first, pgSame, rd)
	})

	It("huge or deeply nested specs are refused at admission or pruned, with no crash or loop: team-a keeps being served", func() {
		w := newWorld()
		forB := grantTeamB(w, w.orgB, nil)
		asB := tenantClient(w.teamB)
		pg := func(name string) *unstructured.Unstructured {
			return withRef(sample("api_v1_postgresql.yaml", w.teamB, name, w.orgB), "ClusterCleverCredentials", forB)
		}
		invalid := func(u *unstructured.Unstructured, what string) {
			GinkgoHelper()
			err := asB.Create(ctx, u)
			Expect(apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsBadRequest(err)).To(BeTrue(), "%s refused at admission: %v", what, err)
			GinkgoWriter.Printf("%s: %s\n", what, clip(err.Error(), 300))
		}
		many := func(n, size int) map[string]string {
			m := map[string]string{}
			for i := range n {
				m[fmt.Sprintf("k%03d", i)] = strings.Repeat("v", size)
			}
			return m
		}
		u := pg("labels")
		Expect(unstructured.SetNestedStringMap(u.Object, many(65, 1), "spec", "secret", "labels")).To(Succeed())
		invalid(u, "65 spec.secret.labels")
		u = pg("label-values")
		Expect(unstructured.SetNestedStringMap(u.Object, many(1, 64), "spec", "secret", "labels")).To(Succeed())
		invalid(u, "a 64-character label value")
		u = pg("templates")
		Expect(unstructured.SetNestedStringMap(u.Object, many(64, 8192), "spec", "secret", "templates")).To(Succeed())
		invalid(u, "64 templates of 8 KiB (512 KiB)")
		u = pg("big")
		Expect(unstructured.SetNestedStringMap(u.Object, many(64, 23000), "spec", "secret", "annotations")).To(Succeed())
		invalid(u, "1.4 MiB of spec.secret.annotations")
		// Deeply nested spec.options on the generic Addon kind.
		nested := map[string]any{"leaf": "x"}
		for range 200 {
			nested = map[string]any{"n": nested}
		}
		ad := sample("api_v1alpha1_addon.yaml", w.teamB, "nested", w.orgB)
		Expect(unstructured.SetNestedField(ad.Object, nested, "spec", "options")).To(Succeed())
		invalid(withRef(ad, "ClusterCleverCredentials", forB), "200 levels of spec.options")
		// An unknown field of 1.4 MB is pruned: the stored object is small.
		u = pg("pruned")
		Expect(unstructured.SetNestedField(u.Object, strings.Repeat("x", 1400*1024), "spec", "padding")).To(Succeed())
		Expect(asB.Create(ctx, u)).To(Succeed())
		stored := suite.Get(u)
		_, kept, _ := unstructured.NestedString(stored.Object, "spec", "padding")
		Expect(kept).To(BeFalse(), "the unknown field is pruned")
		// Annotations at the limit of the schema (64 × 4 KiB) that the published Secret cannot
		// carry (256 KiB of annotations at most): a clear condition, not a loop.
		atLimit := pg("at-limit")
		Expect(unstructured.SetNestedStringMap(atLimit.Object, many(64, 4096), "spec", "secret", "annotations")).To(Succeed())
		asTenant(asB, atLimit)

		Eventually(suite.ReadyOf(stored), 20*time.Second).Should(Equal("True/Provisioned"))
		Eventually(suite.ReadyOf(atLimit), 20*time.Second).Should(HavePrefix("False/"))
		GinkgoWriter.Printf("at-limit: %s: %s\n", suite.ReadyOf(atLimit)(), clip(kube.ConditionMessage(suite.Get(atLimit), "Ready"), 300))
		Expect(suite.Secret(w.teamB, "at-limit-secrets")).To(BeNil())
		orgB := calls(w.orgB)
		time.Sleep(3 * time.Second)
		Expect(orgB.Matching("")).To(BeNumerically("<=", 4), "no call loop at Clever Cloud")

		// Team-a is still served.
		db := ready(sample("api_v1_postgresql.yaml", w.teamA, "db", w.orgA))
		Expect(kube.StatusString(db, "addon")).NotTo(BeEmpty())
		deleteAs(asB, stored, atLimit)
	})

	It("a restore in team-b of team-a's backup (the signed addon-claim copied) is refused, also once team-a's resource is gone: no status, no credentials, team-a's add-on untouched", func() {
		w := newWorld()
		db, idA, valuesA := teamAPostgres(w)
		valuesA = specific(valuesA)
		backup := kube.Manifest(db, w.teamB)
		Expect(backup.GetAnnotations()).To(HaveKey(kinds.AnnotationAddonClaim))
		// Team-b even has credentials in team-a's organisation (without the binding privilege).
		forB := grantTeamB(w, w.orgA, nil)
		asB := tenantClient(w.teamB)
		orgA := calls(w.orgA)

		restored := withRef(backup.DeepCopy(), "ClusterCleverCredentials", forB)
		asTenant(asB, restored)
		expectRefused(restored, status.ReasonBindingNotAllowed)
		cur := suite.Get(restored)
		Expect(kube.Condition(cur, "Stalled")).To(HavePrefix("True/"))
		Expect(cur.Object["status"].(map[string]any)).NotTo(HaveKey("credentials"))
		Expect(suite.Secret(w.teamB, "db-secrets")).To(BeNil())
		Expect(suite.Secret(w.teamB, "db-postgresql-source")).To(BeNil())
		expectUntouched(orgA, "team-a's organisation")
		expectNoneOf(w.teamB, valuesA)
		deleteAs(asB, restored)

		// Team-a's resource is lost (Orphan: the add-on stays), as in a disaster: the claim is
		// not free for another namespace to take.
		suite.Mutate(db, func(live *unstructured.Unstructured) {
			Expect(unstructured.SetNestedField(live.Object, "Orphan", "spec", "deletionPolicy")).To(Succeed())
		})
		deleteAll(db)
		Expect(kube.AddonExists(fake, idA)).To(BeTrue())
		orgA = calls(w.orgA)
		again := withRef(backup.DeepCopy(), "ClusterCleverCredentials", forB)
		asTenant(asB, again)
		expectRefused(again, status.ReasonBindingNotAllowed)
		Expect(suite.Secret(w.teamB, "db-secrets")).To(BeNil())
		expectUntouched(orgA, "team-a's organisation")
		expectNoneOf(w.teamB, valuesA)
		deleteAs(asB, again)
		Expect(kube.AddonExists(fake, idA)).To(BeTrue(), "team-a's add-on is not deleted with team-b's copy")
		expectUntouched(orgA, "team-a's organisation, after the deletion")
	})
})

// fakeapiPG is the PostgreSql kind.
var fakeapiPG = schema.GroupVersionKind{Group: kinds.Group, Version: "v1", Kind: "PostgreSql"}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
