package admission

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestObjects(t *testing.T) {
	p, b, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "clever-operator-credentials" || b.Name != p.Name || b.Spec.PolicyName != p.Name {
		t.Fatalf("names: policy %q, binding %q -> %q", p.Name, b.Name, b.Spec.PolicyName)
	}
	if p.Spec.ParamKind == nil || p.Spec.ParamKind.Kind != "ClusterCleverCredentials" {
		t.Fatalf("paramKind: %+v", p.Spec.ParamKind)
	}
	if b.Spec.ParamRef == nil || b.Spec.ParamRef.Selector == nil || b.Spec.ParamRef.ParameterNotFoundAction == nil ||
		*b.Spec.ParamRef.ParameterNotFoundAction != admissionregistrationv1.AllowAction {
		t.Fatalf("paramRef: %+v", b.Spec.ParamRef)
	}
}

func TestEnsureCreatesAndRestores(t *testing.T) {
	s := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).Build()
	ctx := context.Background()
	if err := EnsureCredentialsPolicy(ctx, c); err != nil {
		t.Fatal(err)
	}
	want, _, _ := Objects()
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := c.Get(ctx, client.ObjectKey{Name: PolicyName}, p); err != nil {
		t.Fatal(err)
	}
	// Weakened by someone: restored, labels too.
	p.Spec.Validations = nil
	p.Labels = map[string]string{"other": "x"}
	if err := c.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := c.Get(ctx, client.ObjectKey{Name: PolicyName}, b); err != nil {
		t.Fatal(err)
	}
	b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}
	if err := c.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := EnsureCredentialsPolicy(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: PolicyName}, p); err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.Validations) != len(want.Spec.Validations) {
		t.Fatalf("validations not restored: %d", len(p.Spec.Validations))
	}
	if p.Labels["other"] != "x" || p.Labels["app.kubernetes.io/component"] != "credentials-policy" {
		t.Fatalf("labels: %v", p.Labels)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: PolicyName}, b); err != nil {
		t.Fatal(err)
	}
	if len(b.Spec.ValidationActions) != 1 || b.Spec.ValidationActions[0] != admissionregistrationv1.Deny {
		t.Fatalf("validationActions not restored: %v", b.Spec.ValidationActions)
	}
}
