package plugin

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/kinds"
)

// maxName is the longest resource name the CRDs accept (metadata.name ≤ 63: label values and
// Helm release names are built from it).
const maxName = 63

var notLabelChar = regexp.MustCompile(`[^a-z0-9-]+`)

// SanitizeName turns an add-on's name into a DNS-1123 label (lower case letters, digits and
// '-', starting and ending with a letter or digit, at most 63 characters); fallback when
// nothing is left.
func SanitizeName(name, fallback string) string {
	n := strings.ToLower(name)
	n = notLabelChar.ReplaceAllString(n, "-")
	for strings.Contains(n, "--") {
		n = strings.ReplaceAll(n, "--", "-")
	}
	n = strings.Trim(n, "-")
	if len(n) > maxName {
		n = strings.TrimRight(n[:maxName], "-")
	}
	if n == "" {
		return fallback
	}
	return n
}

// names hands out names unique in one output: the second "db" becomes "db-2". Unique across
// kinds too: two kinds sharing a name in a namespace would share a credentials Secret name.
type names map[string]bool

func (u names) unique(base string) string {
	if !u[base] {
		u[base] = true
		return base
	}
	for i := 2; ; i++ {
		suffix := "-" + strconv.Itoa(i)
		b := base
		if len(b)+len(suffix) > maxName {
			b = strings.TrimRight(b[:maxName-len(suffix)], "-")
		}
		if n := b + suffix; !u[n] {
			u[n] = true
			return n
		}
	}
}

// operatorCreated parses an add-on name the operator gives (kubernetes::<Kind>::<uid>).
func operatorCreated(name string) (kind, uid string, ok bool) {
	parts := strings.Split(name, "::")
	if len(parts) != 3 || parts[0] != "kubernetes" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// baseName is the resource name an add-on suggests: its sanitised name; for an add-on the
// operator named (kubernetes::<Kind>::<uid>) or one without a usable name, the kind and the
// start of its id.
func baseName(k *kinds.Kind, a *clevercloud.Addon) string {
	short := strings.TrimPrefix(a.ID, "addon_")
	if len(short) > 8 {
		short = short[:8]
	}
	fallback := SanitizeName(k.Lower()+"-"+short, k.Lower())
	if _, _, ok := operatorCreated(a.AddonName()); ok {
		return fallback
	}
	return SanitizeName(a.AddonName(), fallback)
}

// Observed is what import read about one add-on at Clever Cloud.
type Observed struct {
	Addon clevercloud.Addon
	// Version is the version the add-on runs, as the API names it ("" unknown).
	Version string
	// EnvKeys are the names (never the values) of the add-on's variables.
	EnvKeys []string
	// Announced are the dedicated versions the provider announces (GET /v4/addon-providers/{id}).
	Announced []string
	// DefaultVersion is the provider's default dedicated version.
	DefaultVersion string
}

// Options of the manifests import writes.
type Options struct {
	Namespace      string
	Organisation   string
	DeletionPolicy string
	// CredentialsRef is spec.credentialsRef ("" kind: none).
	CredentialsRefKind, CredentialsRefName string
}

// Manifest is one resource import writes, with the comment lines that go before it.
type Manifest struct {
	Kind     *kinds.Kind
	AddonID  string
	Object   *unstructured.Unstructured
	Comments []string
}

// BuildManifest writes the resource bound to an existing add-on: spec.addonId, the add-on's
// real plan, region and version in the fields the kind's CRD spells them, and the deletion
// policy. Which fields a kind has comes from the kind table (internal/kinds/kinds.go): a plan
// unless the kind fixes one, a region unless fixed, the version code (and encryption) of
// versioned databases, Kibana/APM of ElasticSearch, spec.version of operator add-ons, and
// spec.variables of configuration providers.
func BuildManifest(k *kinds.Kind, o *Observed, name string, opts Options) (*Manifest, error) {
	a := &o.Addon
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(k.GVK)
	u.SetName(name)
	if opts.Namespace != "" {
		u.SetNamespace(opts.Namespace)
	}
	spec := map[string]any{
		"organisation":   opts.Organisation,
		"addonId":        a.ID,
		"deletionPolicy": opts.DeletionPolicy,
	}
	if opts.CredentialsRefKind != "" {
		spec["credentialsRef"] = map[string]any{"kind": opts.CredentialsRefKind, "name": opts.CredentialsRefName}
	}
	m := &Manifest{Kind: k, AddonID: a.ID, Object: u}
	plan := a.Plan.Slug
	if plan == "" {
		plan = a.Plan.ID
	}
	m.Comments = append(m.Comments, fmt.Sprintf("%s add-on %s %q (provider %s, plan %s, region %s) in %s",
		k.GVK.Kind, a.ID, a.AddonName(), a.Provider.ID, orDash(plan), orDash(a.Region), opts.Organisation))
	instance := map[string]any{}
	if k.FixedRegion == "" {
		if a.Region == "" {
			return nil, fmt.Errorf("add-on %s: the API gave no region", a.ID)
		}
		instance["region"] = a.Region
	}
	if k.PlanFromSpec() {
		if plan == "" {
			return nil, fmt.Errorf("add-on %s: the API gave no plan", a.ID)
		}
		instance["plan"] = plan
	}
	if len(instance) > 0 {
		spec["instance"] = instance
	}
	options := map[string]any{}
	if k.VersionCode != nil {
		code, from, err := versionCode(k, o)
		if err != nil {
			return nil, fmt.Errorf("add-on %s: %w", a.ID, err)
		}
		options["version"] = code
		if from != "" {
			m.Comments = append(m.Comments, from)
		}
	}
	if k.Encryption {
		// Encryption is chosen at creation only; the API does not say whether this add-on has
		// it, and the operator never applies it to an existing one.
		options["encryption"] = false
		m.Comments = append(m.Comments, "options.encryption: not readable from the API; only used when creating an add-on, never applied to this one")
	}
	if k.ElasticServices {
		options["kibana"] = hasKey(o.EnvKeys, "ES_ADDON_KIBANA_HOST")
		options["apm"] = hasKey(o.EnvKeys, "ES_ADDON_APM_HOST")
	}
	if len(options) > 0 {
		spec["options"] = options
	}
	if k.HasSpecVersion() && o.Version != "" {
		spec["version"] = o.Version
		m.Comments = append(m.Comments, fmt.Sprintf("spec.version pins the version the add-on runs (%s): the operator asks Clever Cloud for it if it changes; remove it to leave versions to Clever Cloud", o.Version))
	}
	if k.HasVariables() {
		// spec.variables replace the provider's whole variable list under managementPolicy
		// Full: import never copies values into a manifest, so it observes only.
		spec["variables"] = map[string]any{}
		spec["managementPolicy"] = "ObserveOnly"
		m.Comments = append(m.Comments, "managementPolicy ObserveOnly: the operator publishes the provider's variables and never changes them; to manage them, copy them into spec.variables and remove managementPolicy")
	}
	if kind, uid, ok := operatorCreated(a.AddonName()); ok {
		m.Comments = append(m.Comments, fmt.Sprintf("WARNING: this add-on was created by clever-operator for a %s with uid %s; while that resource exists, this one is refused (AddonClaimed): import it only when that resource is gone", kind, uid))
	}
	u.Object["spec"] = spec
	return m, nil
}

// versionCode is spec.options.version for the version the add-on runs: the code (digits) of
// the longest announced version it runs ("8.4" for 8.4.3: 84), else the longest leading part
// of its version that the kind's code formats back to itself, else the provider's default.
func versionCode(k *kinds.Kind, o *Observed) (int64, string, error) {
	actual := strings.TrimSpace(o.Version)
	if actual != "" {
		best := ""
		for _, v := range o.Announced {
			if (v == actual || strings.HasPrefix(actual, v+".")) && len(v) > len(best) {
				best = v
			}
		}
		if best != "" {
			if c, ok := digits(best); ok {
				return c, "", nil
			}
		}
		note := ""
		if len(o.Announced) > 0 {
			// The operator checks the code against what the provider announces (reason
			// VersionNotAvailable) when it compares the add-on with the spec.
			note = fmt.Sprintf("WARNING: the add-on runs %s, which %s no longer announces (%s): on a dedicated plan the operator reports VersionNotAvailable until spec.options.version names an announced one (a migration)",
				actual, k.ProviderID, strings.Join(o.Announced, ", "))
		}
		parts := strings.Split(actual, ".")
		for n := len(parts); n >= 1; n-- {
			want := strings.Join(parts[:n], ".")
			if c, ok := digits(want); ok && c > 0 && k.VersionCode(c) == want {
				return c, note, nil
			}
		}
	}
	if c, ok := digits(o.DefaultVersion); ok && c > 0 {
		return c, fmt.Sprintf("options.version: the add-on publishes no version; %s is the provider's default", o.DefaultVersion), nil
	}
	return 0, "", fmt.Errorf("cannot tell which %s version it runs (it publishes %q)", k.GVK.Kind, actual)
}

func digits(v string) (int64, bool) {
	v = strings.ReplaceAll(strings.TrimSpace(v), ".", "")
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

func hasKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// envVersion is the version an add-on's variables publish: its first *_VERSION variable in
// name order (as the engine reads it), ignoring runtime versions (CC_JAVA_VERSION, ...).
func envVersion(env []clevercloud.Variable) string {
	keys := []string{}
	vals := map[string]string{}
	for _, v := range env {
		if strings.HasSuffix(v.Name, "_VERSION") {
			keys = append(keys, v.Name)
			vals[v.Name] = v.Value
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		return vals[keys[0]]
	}
	return ""
}

// Grant is the CleverCredentials import writes with --grant: the namespace's own credentials
// (a Secret the user names and fills; import never writes a value), allowed in the imported
// add-ons' organisation and to bind exactly those add-ons.
func Grant(name, namespace, secret, org string, addonIDs []string) *unstructured.Unstructured {
	ids := make([]any, 0, len(addonIDs))
	for _, id := range addonIDs {
		ids = append(ids, id)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.Group + "/v1alpha1",
		"kind":       "CleverCredentials",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"secretRef":     map[string]any{"name": secret},
			"organisations": []any{org},
			"binding":       map[string]any{"addonIds": ids},
		},
	}}
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	return u
}

// Render writes one YAML document: the comments, then the object.
func Render(comments []string, obj *unstructured.Unstructured) ([]byte, error) {
	b, err := yaml.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	for _, c := range comments {
		sb.WriteString("# " + strings.ReplaceAll(c, "\n", " ") + "\n")
	}
	sb.Write(b)
	return []byte(sb.String()), nil
}
