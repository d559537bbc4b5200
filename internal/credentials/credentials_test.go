package credentials

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/status"
)

type stubChecker struct {
	err   error
	calls int
}

func (s *stubChecker) Self(context.Context) (*clevercloud.Self, error) {
	s.calls++
	if s.err != nil {
		return nil, s.err
	}
	return &clevercloud.Self{ID: "user_1", Name: "Alice"}, nil
}

func (s *stubChecker) Organisations(context.Context) ([]clevercloud.Organisation, error) {
	return []clevercloud.Organisation{{ID: "user_1", Name: "Alice"}, {ID: "orga_b", Name: "B"}, {ID: "orga_a", Name: "A"}}, nil
}

func setup(t *testing.T, checker *stubChecker, objs ...client.Object) (*Reconciler, client.Client, *record.FakeRecorder) {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	scheme.AddKnownTypes(v1alpha1.GroupVersion, &v1alpha1.CleverCredentials{}, &v1alpha1.CleverCredentialsList{},
		&v1alpha1.ClusterCleverCredentials{}, &v1alpha1.ClusterCleverCredentialsList{})
	metav1.AddToGroupVersion(scheme, v1alpha1.GroupVersion)
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.CleverCredentials{}, &v1alpha1.ClusterCleverCredentials{}).Build()
	rec := record.NewFakeRecorder(10)
	res := &Resolver{Reader: cl, SecretReader: cl, Global: config.APIConfig{Token: "op-token-123456", Secret: "op-secret-654321"}}
	r := &Reconciler{Client: cl, Resolver: res, Recorder: rec, Log: logr.Discard(), Period: time.Minute,
		NewChecker: func(config.APIConfig) (Checker, error) { return checker, nil }}
	return r, cl, rec
}

func TestCheckWritesWhoTheCredentialsAre(t *testing.T) {
	cc := &v1alpha1.CleverCredentials{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ci", Generation: 2},
		Spec: v1alpha1.CleverCredentialsSpec{SecretRef: v1alpha1.CredentialsSecretRef{Name: "ci-clever"}}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ci-clever"},
		Data: map[string][]byte{"config": []byte("[api]\ntoken = \"ns-token-abcdef\"\nsecret = \"ns-secret-fedcba\"\n")}}
	checker := &stubChecker{}
	r, cl, _ := setup(t, checker, cc, sec)
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "ci"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter < time.Minute || res.RequeueAfter > 66*time.Second {
		t.Errorf("requeue after %v, want the period with up to a tenth of jitter", res.RequeueAfter)
	}
	got := &v1alpha1.CleverCredentials{}
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(cc), got); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, status.TypeReady)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != status.ReasonAuthenticated {
		t.Fatalf("Ready = %+v", c)
	}
	if got.Status.User == nil || got.Status.User.ID != "user_1" || len(got.Status.Organisations) != 3 || got.Status.Organisations[0].ID != "orga_a" {
		t.Errorf("status = %+v", got.Status)
	}
	if got.Status.LastCheckedAt == nil || got.Status.ObservedGeneration != 2 {
		t.Errorf("lastCheckedAt %v, observedGeneration %d", got.Status.LastCheckedAt, got.Status.ObservedGeneration)
	}
}

func TestRefusedCredentialsLeakNothing(t *testing.T) {
	ccc := &v1alpha1.ClusterCleverCredentials{ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Spec: v1alpha1.ClusterCleverCredentialsSpec{SecretRef: &v1alpha1.ClusterCredentialsSecretRef{
			CredentialsSecretRef: v1alpha1.CredentialsSecretRef{Name: "shared-clever"}, Namespace: "ops"}}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "shared-clever"},
		Data: map[string][]byte{"config": []byte("[api]\nbearer-token = \"shared-bearer-0a1b2c3d\"\n")}}
	checker := &stubChecker{err: &clevercloud.APIError{StatusCode: 401, Message: "unknown bearer token"}}
	r, cl, rec := setup(t, checker, ccc, sec)
	r.Cluster = true
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "shared"}}); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.ClusterCleverCredentials{}
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(ccc), got); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, status.TypeReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != status.ReasonInvalidCredentials {
		t.Fatalf("Ready = %+v", c)
	}
	event := <-rec.Events
	for _, s := range []string{c.Message, event} {
		if strings.Contains(s, "shared-bearer-0a1b2c3d") || strings.Contains(s, "op-token-123456") {
			t.Errorf("%q leaks a secret value", s)
		}
	}
	if !strings.Contains(event, "Warning InvalidCredentials") {
		t.Errorf("event = %q", event)
	}

	// The Secret goes away: reported without a call.
	if err := cl.Delete(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	checker.calls, checker.err = 0, errors.New("must not be called")
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "shared"}}); err != nil {
		t.Fatal(err)
	}
	_ = cl.Get(context.Background(), client.ObjectKeyFromObject(ccc), got)
	if c := meta.FindStatusCondition(got.Status.Conditions, status.TypeReady); !strings.Contains(c.Message, "does not exist") || checker.calls != 0 {
		t.Errorf("Ready = %+v after %d calls", c, checker.calls)
	}
}
