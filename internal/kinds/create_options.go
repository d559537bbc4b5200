package kinds

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
)

// Create options beyond version and encryption (issue #18 §4), one row per option in each
// kind's CreateOptions. Keys and value forms are those Clever Cloud's clients send
// (docs/api-sources.md, "Create options"): the Terraform provider's
// pkg/resources/addon/{postgresql,mysql,mongodb,keycloak}/schema.go and
// pkg/resources/database/elasticsearch/crud.go, clever-tools' `addon create --option` (flat
// string values; booleans "true"/"false"; lists comma-separated). None can change once the
// add-on exists (no client or route changes them): the CRDs make them immutable.

// CreateOption is one spec.options field sent as a create option.
type CreateOption struct {
	// Field is the field's name under spec.options.
	Field string
	// Key is the option key the API reads.
	Key string
	// Dedicated: only dedicated plans offer it (clever-tools checks the key against the
	// plan's features at GET /v4/addon-providers/{id}; shared clusters list none). Set on a
	// shared plan, the resource is refused before the create (InvalidSpec); false, it is
	// not sent.
	Dedicated bool
}

var (
	optDirectHostOnly = CreateOption{Field: "directHostOnly", Key: "direct-host-only", Dedicated: true}
	optBackups        = CreateOption{Field: "backups", Key: "do-backup"}
)

func (o CreateOption) path() Path { return Path{"spec", "options", o.Field} }

// value is the option's wire value for obj ("", false when not set): a boolean as
// "true"/"false", a string as is (empty: not set), a list joined with commas (empty: not set).
func (o CreateOption) value(obj *unstructured.Unstructured) (string, bool) {
	v, found := o.path().Value(obj)
	if !found || v == nil {
		return "", false
	}
	switch t := v.(type) {
	case bool:
		return strconv.FormatBool(t), true
	case string:
		return t, t != ""
	case []any:
		parts := make([]string, 0, len(t))
		for _, e := range t {
			if s, ok := e.(string); ok && s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ","), len(parts) > 0
	default:
		return fmt.Sprint(t), true
	}
}

// createOptions are the kind's CreateOptions set on obj, by option key (nil: none).
func (k *Kind) createOptions(obj *unstructured.Unstructured) map[string]string {
	var out map[string]string
	for _, o := range k.CreateOptions {
		if v, ok := o.value(obj); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[o.Key] = v
		}
	}
	return out
}

// DropDedicatedOptions applies a shared plan to the options: a dedicated-only option set to
// false is not sent; one asked for is a SpecError naming it.
func (k *Kind) DropDedicatedOptions(o *clevercloud.Options, planSlug string) error {
	for _, c := range k.CreateOptions {
		v, ok := o.Extra[c.Key]
		if !c.Dedicated || !ok {
			continue
		}
		if v == "false" {
			delete(o.Extra, c.Key)
			continue
		}
		return &SpecError{Msg: fmt.Sprintf("spec.options.%s is only offered on dedicated plans; plan %s runs on a shared cluster (choose a dedicated plan in spec.instance.plan; the option itself cannot change: recreate the resource without it)", c.Field, planSlug)}
	}
	return nil
}
