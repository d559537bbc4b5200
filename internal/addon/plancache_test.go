package addon

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/secrets"
)

func TestCredentialsHashStableAndValueFree(t *testing.T) {
	a := secrets.Hash(map[string]string{"A": "1", "B": "secret-value"})
	b := secrets.Hash(map[string]string{"B": "secret-value", "A": "1"})
	if a != b || len(a) != 16 || strings.Contains(a, "secret") {
		t.Fatalf("hash %q / %q", a, b)
	}
	if a == secrets.Hash(map[string]string{"A": "1", "B": "other"}) {
		t.Fatal("hash ignores values")
	}
}

// kind is the table row of a kind by name.
func kind(t *testing.T, name string) *kinds.Kind {
	t.Helper()
	return kinds.MustNamed(name)
}

func obj(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
}
