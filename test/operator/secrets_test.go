package operator_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/test/kube"
)

// setSecretSpec replaces spec.secret of the live resource.
func setSecretSpec(u *unstructured.Unstructured, spec map[string]any) {
	cur := suite.Get(u)
	if spec == nil {
		unstructured.RemoveNestedField(cur.Object, "spec", "secret")
	} else {
		Expect(unstructured.SetNestedMap(cur.Object, spec, "spec", "secret")).To(Succeed())
	}
	suite.Update(cur)
}

func credentialsStatus(u *unstructured.Unstructured, field string) string {
	s, _, _ := unstructured.NestedString(suite.Get(u).Object, "status", "credentials", field)
	return s
}

func configMapData(ns, name string) map[string]string {
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		return nil
	}
	return cm.Data
}

// addonEnv is the add-on's env at the fake.
func addonEnv(u *unstructured.Unstructured) map[string]string {
	return envMap(fake.Env(kube.StatusString(suite.Get(u), "addon")))
}

func deployment(ns, name string, labels, annotations map[string]string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
			},
		},
	}
	Expect(k8s.Create(context.Background(), d)).To(Succeed())
	return d
}

func podTemplateAnnotations(ns, name string) map[string]string {
	d := &appsv1.Deployment{}
	Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
	return d.Spec.Template.Annotations
}

var _ = Describe("Secret shaping (spec.secret)", func() {
	ctx := context.Background()

	It("adds labels, annotations, a key prefix, template keys and a ConfigMap with the non-secret keys", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedMap(cr.Object, map[string]any{
			"name":        "app-db",
			"labels":      map[string]any{"team": "payments"},
			"annotations": map[string]any{"reloader.example/match": "true"},
			"keyPrefix":   "APP_",
			"templates": map[string]any{
				"DATABASE_URL": "postgresql://{{ .POSTGRESQL_ADDON_USER }}:{{ .POSTGRESQL_ADDON_PASSWORD }}@{{ .POSTGRESQL_ADDON_HOST }}:{{ .POSTGRESQL_ADDON_PORT }}/{{ .POSTGRESQL_ADDON_DB }}",
				"JDBC_URL":     "jdbc:postgresql://{{ .POSTGRESQL_ADDON_HOST }}:{{ .POSTGRESQL_ADDON_PORT }}/{{ .POSTGRESQL_ADDON_DB }}",
			},
			"configMap": map[string]any{"name": "app-db-public"},
		}, "spec", "secret")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr), 20*time.Second).Should(Equal("True/Provisioned"))
		env := addonEnv(cr)

		s := suite.Secret(ns, "app-db")
		Expect(s).NotTo(BeNil())
		Expect(s.Labels).To(HaveKeyWithValue("team", "payments"))
		Expect(s.Labels).To(HaveKeyWithValue("api.clever-cloud.com/managed-by", "clever-operator"))
		Expect(s.Annotations).To(HaveKeyWithValue("reloader.example/match", "true"))
		data := kube.SecretData(s)
		Expect(data).To(HaveLen(len(env) + 2))
		for k, v := range env {
			Expect(data).To(HaveKeyWithValue("APP_"+k, v))
		}
		Expect(data["DATABASE_URL"]).To(Equal("postgresql://" + env["POSTGRESQL_ADDON_USER"] + ":" + env["POSTGRESQL_ADDON_PASSWORD"] + "@" +
			env["POSTGRESQL_ADDON_HOST"] + ":" + env["POSTGRESQL_ADDON_PORT"] + "/" + env["POSTGRESQL_ADDON_DB"]))
		Expect(data["JDBC_URL"]).To(Equal("jdbc:postgresql://" + env["POSTGRESQL_ADDON_HOST"] + ":" + env["POSTGRESQL_ADDON_PORT"] + "/" + env["POSTGRESQL_ADDON_DB"]))
		Expect(suite.Secret(ns, cr.GetName()+"-secrets")).To(BeNil(), "no Secret under the default name")

		Expect(configMapData(ns, "app-db-public")).To(Equal(map[string]string{
			"APP_POSTGRESQL_ADDON_HOST": env["POSTGRESQL_ADDON_HOST"], "APP_POSTGRESQL_ADDON_PORT": env["POSTGRESQL_ADDON_PORT"],
			"APP_POSTGRESQL_ADDON_DB": env["POSTGRESQL_ADDON_DB"], "APP_POSTGRESQL_ADDON_VERSION": env["POSTGRESQL_ADDON_VERSION"],
		}))
		live := suite.Get(cr)
		Expect(kube.StatusString(live, "secretName")).To(Equal("app-db"))
		Expect(kube.StatusString(live, "configMapName")).To(Equal("app-db-public"))
		Expect(credentialsStatus(cr, "hash")).To(Equal(s.Annotations["api.clever-cloud.com/credentials-hash"]))
		Expect(credentialsStatus(cr, "lastChangedAt")).NotTo(BeEmpty())
	})

	It("reports a bad template as SecretTemplateInvalid and leaves the published Secret as it was", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr), 20*time.Second).Should(Equal("True/Provisioned"))
		before := suite.Secret(ns, cr.GetName()+"-secrets")
		Expect(before).NotTo(BeNil())

		setSecretSpec(cr, map[string]any{"templates": map[string]any{"DATABASE_URL": "postgresql://{{ .POSTGRESQL_ADDON_USERNAME }}@{{ .POSTGRESQL_ADDON_HOST }}"}})
		Eventually(suite.ReadyOf(cr), 10*time.Second).Should(Equal("False/SecretTemplateInvalid"))
		live := suite.Get(cr)
		Expect(kube.Condition(live, "Stalled")).To(Equal("True/SecretTemplateInvalid"))
		Expect(kube.ConditionMessage(live, "Ready")).To(ContainSubstring("spec.secret.templates[DATABASE_URL]"))
		Expect(kube.ConditionMessage(live, "Ready")).To(ContainSubstring("POSTGRESQL_ADDON_USERNAME"))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Warning SecretTemplateInvalid"))
		Consistently(func() string { return suite.Secret(ns, cr.GetName()+"-secrets").ResourceVersion }, 2*time.Second).Should(Equal(before.ResourceVersion))

		setSecretSpec(cr, map[string]any{"templates": map[string]any{"DATABASE_URL": "postgresql://{{ .POSTGRESQL_ADDON_USER }}@{{ .POSTGRESQL_ADDON_HOST }}"}})
		Eventually(suite.ReadyOf(cr), 10*time.Second).Should(Equal("True/Provisioned"))
		env := addonEnv(cr)
		Eventually(func() string { return kube.SecretData(suite.Secret(ns, cr.GetName()+"-secrets"))["DATABASE_URL"] }).
			Should(Equal("postgresql://" + env["POSTGRESQL_ADDON_USER"] + "@" + env["POSTGRESQL_ADDON_HOST"]))
		Expect(kube.Condition(suite.Get(cr), "Stalled")).To(BeEmpty())
	})

	It("publishes no Secret when disabled, and still the ConfigMap", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_redis.yaml", ns)
		Expect(unstructured.SetNestedMap(cr.Object, map[string]any{"disabled": true, "configMap": map[string]any{}}, "spec", "secret")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr), 20*time.Second).Should(Equal("True/Provisioned"))
		env := addonEnv(cr)
		Expect(configMapData(ns, cr.GetName()+"-config")).To(Equal(map[string]string{
			"REDIS_HOST": env["REDIS_HOST"], "REDIS_PORT": env["REDIS_PORT"], "REDIS_VERSION": env["REDIS_VERSION"],
		}))
		list := &corev1.SecretList{}
		Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, s := range list.Items {
			Expect(s.Labels["api.clever-cloud.com/role"]).NotTo(BeElementOf("credentials", "binding"), "Secret %s", s.Name)
		}
		live := suite.Get(cr)
		Expect(kube.StatusString(live, "secretName")).To(BeEmpty())
		_, hasBinding, _ := unstructured.NestedMap(live.Object, "status", "binding")
		Expect(hasBinding).To(BeFalse())
		Expect(kube.ConditionMessage(live, "Ready")).To(ContainSubstring("no credentials Secret"))
	})

	It("publishes a servicebinding.io Secret with the well-known entries for every database-like kind", func() {
		ns := suite.NewNamespace()
		type want struct {
			file, typ string
			entries   map[string]string // entry -> add-on key
		}
		db := func(prefix string) map[string]string {
			return map[string]string{"host": prefix + "_HOST", "port": prefix + "_PORT", "username": prefix + "_USER", "password": prefix + "_PASSWORD", "database": prefix + "_DB", "uri": prefix + "_URI"}
		}
		cases := []want{
			{"api_v1_postgresql.yaml", "postgresql", db("POSTGRESQL_ADDON")},
			{"api_v1_mysql.yaml", "mysql", db("MYSQL_ADDON")},
			{"api_v1_mongodb.yaml", "mongodb", db("MONGODB_ADDON")},
			{"api_v1_redis.yaml", "redis", map[string]string{"host": "REDIS_HOST", "port": "REDIS_PORT", "password": "REDIS_PASSWORD", "uri": "REDIS_URL"}},
			{"api_v1_elasticsearch.yaml", "elasticsearch", map[string]string{"host": "ES_ADDON_HOST", "username": "ES_ADDON_USER", "password": "ES_ADDON_PASSWORD", "uri": "ES_ADDON_URI", "uris": "ES_ADDON_URI"}},
			{"api_v1alpha1_kv.yaml", "redis", map[string]string{"host": "KV_HOST", "port": "KV_PORT", "password": "KV_TOKEN", "uri": "REDIS_URL"}},
		}
		crs := make([]*unstructured.Unstructured, len(cases))
		for i, c := range cases {
			crs[i] = suite.Sample(c.file, ns)
			Expect(k8s.Create(ctx, crs[i])).To(Succeed())
		}
		for i, c := range cases {
			cr := crs[i]
			Eventually(suite.ReadyOf(cr), 30*time.Second).Should(Equal("True/Provisioned"), c.file)
			live := suite.Get(cr)
			name, _, _ := unstructured.NestedString(live.Object, "status", "binding", "name")
			Expect(name).To(Equal(cr.GetName() + "-secrets-binding"))
			b := suite.Secret(ns, name)
			Expect(b).NotTo(BeNil())
			Expect(string(b.Type)).To(Equal("servicebinding.io/" + c.typ))
			env := addonEnv(cr)
			wantData := map[string]string{"type": c.typ, "provider": "clever-cloud"}
			for entry, key := range c.entries {
				Expect(env).To(HaveKey(key), "%s has %s", c.file, key)
				wantData[entry] = env[key]
			}
			Expect(kube.SecretData(b)).To(Equal(wantData), c.file)
		}
		// Kinds that are not databases have no binding.
		mb := suite.Sample("api_v1_metabase.yaml", ns)
		Expect(k8s.Create(ctx, mb)).To(Succeed())
		Eventually(suite.ReadyOf(mb), 30*time.Second).Should(Equal("True/Provisioned"))
		_, hasBinding, _ := unstructured.NestedMap(suite.Get(mb).Object, "status", "binding")
		Expect(hasBinding).To(BeFalse())
	})

	It("moves the credentials to a new Secret name without a moment with neither, across a manager restart and an interrupted release", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_mysql.yaml", ns)
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr), 20*time.Second).Should(Equal("True/Provisioned"))
		want := kube.SecretData(suite.Secret(ns, cr.GetName()+"-secrets"))
		Expect(want).To(HaveKey("MYSQL_ADDON_PASSWORD"))

		// Watch, from now on, that the credentials are always in one Secret or the other.
		var gaps, samples, sawOld, sawNew atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				old := &corev1.Secret{}
				errOld := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: cr.GetName() + "-secrets"}, old)
				nw := &corev1.Secret{}
				errNew := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mysql-moved"}, nw)
				okOld := errOld == nil && equalData(old, want)
				okNew := errNew == nil && equalData(nw, want)
				samples.Add(1)
				if okOld {
					sawOld.Add(1)
				}
				if okNew {
					sawNew.Add(1)
				}
				if !okOld && !okNew {
					gaps.Add(1)
				}
			}
		}()

		// First: the operator dies with the release left pending (as if killed mid-upgrade).
		mgr.Stop()
		cs, err := kubernetes.NewForConfig(restCfg)
		Expect(err).NotTo(HaveOccurred())
		store := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(ns)))
		last, err := store.Last("mysql-" + cr.GetName())
		Expect(err).NotTo(HaveOccurred())
		last.SetStatus(release.StatusPendingUpgrade, "interrupted")
		Expect(store.Update(last)).To(Succeed())

		setSecretSpec(cr, map[string]any{"name": "mysql-moved"})
		startManager()
		// Then it dies again right after starting to work on the rename.
		time.Sleep(300 * time.Millisecond)
		mgr.Stop()
		startManager()

		Eventually(func() map[string]string { return kube.SecretData(suite.Secret(ns, "mysql-moved")) }, 30*time.Second).Should(Equal(want))
		Eventually(func() *corev1.Secret { return suite.Secret(ns, cr.GetName()+"-secrets") }, 30*time.Second).Should(BeNil())
		Eventually(suite.ReadyOf(cr), 20*time.Second).Should(Equal("True/Provisioned"))
		Eventually(func() string { return kube.StatusString(suite.Get(cr), "secretName") }).Should(Equal("mysql-moved"))
		Eventually(func() string {
			name, _, _ := unstructured.NestedString(suite.Get(cr).Object, "status", "binding", "name")
			return name
		}).Should(Equal("mysql-moved-binding"))
		close(stop)
		wg.Wait()
		// The sampler watched the whole move: it saw the credentials under the old name, then
		// under the new one, and never in neither.
		Expect(sawOld.Load()).To(BeNumerically(">", 0), "samples with the old Secret")
		Expect(sawNew.Load()).To(BeNumerically(">", 0), "samples with the new Secret")
		Expect(gaps.Load()).To(BeZero(), "samples with the credentials in neither Secret (of %d)", samples.Load())
	})
})

func equalData(s *corev1.Secret, want map[string]string) bool {
	got := kube.SecretData(s)
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

var _ = Describe("rotation", func() {
	ctx := context.Background()

	It("publishes changed credentials, records the hash and restarts only the opted-in workloads", func() {
		ns := suite.NewNamespace()
		cr := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(unstructured.SetNestedMap(cr.Object, map[string]any{
			"rollout": map[string]any{"matchLabels": map[string]any{"uses": "pg"}},
		}, "spec", "secret")).To(Succeed())
		Expect(k8s.Create(ctx, cr)).To(Succeed())
		Eventually(suite.ReadyOf(cr), 20*time.Second).Should(Equal("True/Provisioned"))
		secretName := cr.GetName() + "-secrets"
		deployment(ns, "by-annotation", nil, map[string]string{"api.clever-cloud.com/rollout-on-secret-change": "other, " + secretName})
		deployment(ns, "by-selector", map[string]string{"uses": "pg"}, nil)
		deployment(ns, "bystander", map[string]string{"uses": "other"}, map[string]string{"api.clever-cloud.com/rollout-on-secret-change": "other"})
		sts := &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "by-statefulset", Namespace: ns, Annotations: map[string]string{"api.clever-cloud.com/rollout-on-secret-change": secretName}},
			Spec: appsv1.StatefulSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sts"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "sts"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
				},
			},
		}
		Expect(k8s.Create(ctx, sts)).To(Succeed())
		hash1 := credentialsStatus(cr, "hash")
		changed1 := credentialsStatus(cr, "lastChangedAt")
		Expect(hash1).NotTo(BeEmpty())
		Expect(credentialsStatus(cr, "rolledOutHash")).To(Equal(hash1), "the first publication restarts nothing")

		// Clever Cloud changes the password; the next refresh sees it.
		time.Sleep(1100 * time.Millisecond) // lastChangedAt has a one-second resolution
		id := kube.StatusString(suite.Get(cr), "addon")
		env := fake.Env(id)
		for i := range env {
			if env[i].Name == "POSTGRESQL_ADDON_PASSWORD" {
				env[i].Value = "rotated-Pa55word-value"
			}
		}
		Expect(fake.SetEnv(id, env)).To(Succeed())
		suite.Annotate(cr, map[string]string{"api.clever-cloud.com/reconcile-requested-at": "rotate-1"})

		Eventually(func() string { return kube.SecretData(suite.Secret(ns, secretName))["POSTGRESQL_ADDON_PASSWORD"] }, 10*time.Second).Should(Equal("rotated-Pa55word-value"))
		Eventually(func() string { return credentialsStatus(cr, "hash") }).ShouldNot(Equal(hash1))
		hash2 := credentialsStatus(cr, "hash")
		Expect(credentialsStatus(cr, "lastChangedAt")).NotTo(Equal(changed1))
		Expect(suite.Secret(ns, secretName).Annotations).To(HaveKeyWithValue("api.clever-cloud.com/credentials-hash", hash2))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Normal CredentialsUpdated"))
		Eventually(func() string { return credentialsStatus(cr, "rolledOutHash") }, 10*time.Second).Should(Equal(hash2))
		key := "credentials.api.clever-cloud.com/" + secretName
		Expect(podTemplateAnnotations(ns, "by-annotation")).To(HaveKeyWithValue(key, hash2))
		Expect(podTemplateAnnotations(ns, "by-selector")).To(HaveKeyWithValue(key, hash2))
		Expect(podTemplateAnnotations(ns, "bystander")).NotTo(HaveKey(key))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
		Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue(key, hash2))
		// Old credentials do not linger in Helm's history: at most 2 release revisions.
		releases := &corev1.SecretList{}
		Expect(k8s.List(ctx, releases, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": "postgresql-" + cr.GetName()})).To(Succeed())
		Expect(len(releases.Items)).To(And(BeNumerically(">=", 1), BeNumerically("<=", 2)))
		Eventually(suite.EventsOf(cr)).Should(ContainElement("Normal RolloutTriggered"))
		// The binding Secret follows.
		Expect(kube.SecretData(suite.Secret(ns, secretName+"-binding"))["password"]).To(Equal("rotated-Pa55word-value"))
	})

	It("regenerates Cellar keys on request and says plainly where Clever Cloud cannot", func() {
		ns := suite.NewNamespace()
		cel := suite.Sample("api_v1_cellar.yaml", ns)
		pg := suite.Sample("api_v1_postgresql.yaml", ns)
		Expect(k8s.Create(ctx, cel)).To(Succeed())
		Expect(k8s.Create(ctx, pg)).To(Succeed())
		Eventually(suite.ReadyOf(cel), 20*time.Second).Should(Equal("True/Provisioned"))
		Eventually(suite.ReadyOf(pg), 20*time.Second).Should(Equal("True/Provisioned"))
		before := kube.SecretData(suite.Secret(ns, cel.GetName()+"-secrets"))
		pgBefore := kube.SecretData(suite.Secret(ns, pg.GetName()+"-secrets"))
		calls := suite.CountCalls(ns)

		suite.Annotate(cel, map[string]string{"api.clever-cloud.com/rotate-requested-at": "2026-11-22T08:00:00Z"})
		Eventually(func() string {
			return kube.SecretData(suite.Secret(ns, cel.GetName()+"-secrets"))["CELLAR_ADDON_KEY_SECRET"]
		}, 10*time.Second).
			ShouldNot(Equal(before["CELLAR_ADDON_KEY_SECRET"]))
		after := kube.SecretData(suite.Secret(ns, cel.GetName()+"-secrets"))
		Expect(after["CELLAR_ADDON_KEY_ID"]).To(Equal(before["CELLAR_ADDON_KEY_ID"]))
		Expect(after["CELLAR_ADDON_KEY_SECRET"]).To(Equal(addonEnv(cel)["CELLAR_ADDON_KEY_SECRET"]))
		Expect(calls.Matching(clevercloud.RouteCellarRenew)).To(Equal(1))
		Eventually(func() string { return credentialsStatus(cel, "lastRotationRequest") }).Should(Equal("2026-11-22T08:00:00Z"))
		Eventually(suite.EventsOf(cel)).Should(ContainElement("Normal CredentialsRotated"))

		suite.Annotate(pg, map[string]string{"api.clever-cloud.com/rotate-requested-at": "now"})
		Eventually(suite.EventsOf(pg)).Should(ContainElement("Warning RotationNotSupported"))
		Eventually(func() string { return credentialsStatus(pg, "lastRotationRequest") }).Should(Equal("now"))
		Expect(kube.SecretData(suite.Secret(ns, pg.GetName()+"-secrets"))).To(Equal(pgBefore))
		Expect(suite.ReadyOf(pg)()).To(Equal("True/Provisioned"))
		// Acted on once: a later unrelated change does not rotate again.
		suite.Annotate(cel, map[string]string{"unrelated": "x"})
		Consistently(func() int { return calls.Matching(clevercloud.RouteCellarRenew) }, 2*time.Second).Should(Equal(1))
	})
})
