package plugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/config"
	"github.com/clever-operator/clever-operator/internal/kinds"
)

const importHelp = `Usage: kubectl clever import [ID|NAME...] [flags]

Lists the add-ons of a Clever Cloud organisation and writes, for each one whose provider has a
clever-operator kind, a resource bound to it: spec.addonId, its real plan, region and version
(read from the API), and spec.deletionPolicy Orphan, so that deleting the resource never
deletes the add-on. Applying the output creates nothing at Clever Cloud. Positional arguments
select add-ons by id or name; without them, every add-on (narrowed by --kind, --name-regex).

Credentials: those the operator reads (CLEVER_OPERATOR_API_TOKEN and _SECRET, or
CLEVER_OPERATOR_API_BEARER_TOKEN; _ENDPOINT; a configuration file; clever-tools' login file).

Binding an add-on the namespace did not create must be allowed by the credentials the
resources use (docs/security.md): either an admin lists the ids in spec.binding.addonIds of a
ClusterCleverCredentials (--credentials-ref ClusterCleverCredentials/NAME), or --grant NAME
also writes a CleverCredentials NAME allowing exactly these ids. A CleverCredentials is the
namespace's OWN Clever Cloud identity: it grants binding only with the credentials of the
Secret it names (--grant-secret; you create it, import never writes a credential), whose user
must reach the organisation; it never lends the operator's identity.

Flags:
`

// maxGrantIDs is the CRDs' limit on spec.binding.addonIds.
const maxGrantIDs = 256

type importFlags struct {
	org, namespace, kinds, nameRegex, deletionPolicy string
	credentialsRef, grant, grantSecret, outputDir    string
	configFile, cleverTools                          string
}

func runImport(ctx context.Context, args []string, env *Env) error {
	f := importFlags{}
	fs := newFlags("import", env)
	fs.StringVar(&f.org, "org", "", "organisation (orga_…) or user (user_…) whose add-ons to import (default: the credentials' own user, GET /v2/self)")
	fs.StringVar(&f.namespace, "namespace", "", "metadata.namespace of the resources (default: none, kubectl apply's namespace)")
	fs.StringVar(&f.namespace, "n", "", "shorthand for --namespace")
	fs.StringVar(&f.kinds, "kind", "", "comma-separated kinds to import (e.g. PostgreSql,Redis; default: every kind)")
	fs.StringVar(&f.nameRegex, "name-regex", "", "import only the add-ons whose name matches this regular expression")
	fs.StringVar(&f.deletionPolicy, "deletion-policy", "Orphan", "spec.deletionPolicy of the resources: Orphan (deleting a resource keeps its add-on) or Delete")
	fs.StringVar(&f.credentialsRef, "credentials-ref", "", "spec.credentialsRef of the resources, KIND/NAME (ClusterCleverCredentials/NAME or CleverCredentials/NAME)")
	fs.StringVar(&f.grant, "grant", "", "also write a CleverCredentials NAME (in --namespace) allowing the binding of exactly the imported add-ons, and refer the resources to it")
	fs.StringVar(&f.grantSecret, "grant-secret", "", "with --grant: the Secret (same namespace, key config) holding the namespace's own Clever Cloud credentials; required with --grant")
	fs.StringVar(&f.outputDir, "output-dir", "", "write one file per resource into this directory instead of stdout")
	fs.StringVar(&f.outputDir, "o", "", "shorthand for --output-dir")
	fs.StringVar(&f.configFile, "config", "", "operator configuration file to take the credentials from (default: the operator's search path)")
	fs.StringVar(&f.cleverTools, config.FlagCleverToolsConfig, "", "clever-tools login file to take the credentials from")
	selectors, err := parse(fs, args, importHelp, env)
	if err != nil {
		return err
	}
	if f.deletionPolicy != "Orphan" && f.deletionPolicy != "Delete" {
		return fmt.Errorf("--deletion-policy must be Orphan or Delete, not %q", f.deletionPolicy)
	}
	opts := Options{Namespace: f.namespace, DeletionPolicy: f.deletionPolicy}
	if f.credentialsRef != "" {
		kind, name, ok := strings.Cut(f.credentialsRef, "/")
		if !ok || name == "" || (kind != "ClusterCleverCredentials" && kind != "CleverCredentials") {
			return fmt.Errorf("--credentials-ref must be ClusterCleverCredentials/NAME or CleverCredentials/NAME, not %q", f.credentialsRef)
		}
		opts.CredentialsRefKind, opts.CredentialsRefName = kind, name
	}
	if f.grant != "" {
		if f.grantSecret == "" {
			return fmt.Errorf("--grant needs --grant-secret: the Secret holding the namespace's own Clever Cloud credentials (a CleverCredentials never uses the operator's)")
		}
		if f.credentialsRef != "" {
			return fmt.Errorf("--grant and --credentials-ref both set spec.credentialsRef: choose one")
		}
		opts.CredentialsRefKind, opts.CredentialsRefName = "CleverCredentials", f.grant
	}
	var nameRe *regexp.Regexp
	if f.nameRegex != "" {
		if nameRe, err = regexp.Compile(f.nameRegex); err != nil {
			return fmt.Errorf("--name-regex: %w", err)
		}
	}
	wantKinds := map[string]bool{}
	for _, k := range strings.Split(f.kinds, ",") {
		if k = strings.TrimSpace(k); k != "" {
			if kindByName(k) == nil {
				return fmt.Errorf("--kind: unknown kind %q (%s)", k, strings.Join(kindNames(), ", "))
			}
			wantKinds[strings.ToLower(k)] = true
		}
	}

	cfg, err := config.Load(config.LoadOptions{ConfigFile: f.configFile, Env: env.getenv, CleverToolsFile: f.cleverTools})
	if err != nil {
		return err
	}
	if err := cfg.API.Validate(); err != nil {
		return err
	}
	api, err := clevercloud.NewFromConfig(cfg.API, clevercloud.ClientOptions{Timeout: 30 * time.Second})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	org := f.org
	if org == "" {
		self, err := api.Self(ctx)
		if err != nil {
			return fmt.Errorf("asking Clever Cloud who the credentials are (GET /v2/self): %w", err)
		}
		org = self.ID
	}
	opts.Organisation = org
	list, err := api.ListAddons(ctx, org)
	if err != nil {
		return fmt.Errorf("listing the add-ons of %s: %w", org, err)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].AddonName() != list[j].AddonName() {
			return list[i].AddonName() < list[j].AddonName()
		}
		return list[i].ID < list[j].ID
	})
	matched := map[string]bool{}
	used := names{}
	infos := map[string]*clevercloud.ProviderInfo{}
	var out []*Manifest
	for i := range list {
		a := &list[i]
		if len(selectors) > 0 {
			sel := selected(a, selectors)
			if sel == "" {
				continue
			}
			matched[sel] = true
		}
		if nameRe != nil && !nameRe.MatchString(a.AddonName()) {
			continue
		}
		k := kindByProvider(a.Provider.ID)
		if k == nil {
			fmt.Fprintf(env.Stderr, "skipped %s %q: provider %s has no clever-operator kind\n", a.ID, a.AddonName(), a.Provider.ID)
			continue
		}
		if len(wantKinds) > 0 && !wantKinds[k.Lower()] {
			continue
		}
		obs, err := observe(ctx, api, org, k, a, infos)
		if err != nil {
			return err
		}
		m, err := BuildManifest(k, obs, used.unique(baseName(k, a)), opts)
		if err != nil {
			return err
		}
		out = append(out, m)
	}
	for _, s := range selectors {
		if !matched[s] {
			return fmt.Errorf("no add-on %q in %s", s, org)
		}
	}
	docs := make([][]byte, 0, len(out)+1)
	files := make([]string, 0, len(out)+1)
	if f.grant != "" && len(out) > maxGrantIDs {
		return fmt.Errorf("--grant: %d add-ons selected, but a CleverCredentials lists at most %d (spec.binding.addonIds); narrow the import with --kind, --name-regex or add-on ids", len(out), maxGrantIDs)
	}
	if f.grant != "" && len(out) > 0 {
		ids := make([]string, 0, len(out))
		for _, m := range out {
			ids = append(ids, m.AddonID)
		}
		g := Grant(f.grant, f.namespace, f.grantSecret, org, ids)
		b, err := Render([]string{
			fmt.Sprintf("The namespace's own Clever Cloud credentials, allowed to bind the %d imported add-ons.", len(ids)),
			fmt.Sprintf("Create Secret %s first (key config: token, secret, consumer-key, consumer-secret or bearer-token; see docs/operator.md).", f.grantSecret),
		}, g)
		if err != nil {
			return err
		}
		docs, files = append(docs, b), append(files, "clevercredentials-"+f.grant+".yaml")
	}
	for _, m := range out {
		b, err := Render(m.Comments, m.Object)
		if err != nil {
			return err
		}
		docs, files = append(docs, b), append(files, m.Kind.Lower()+"-"+m.Object.GetName()+".yaml")
	}
	fmt.Fprintf(env.Stderr, "%d add-ons of %s imported\n", len(out), org)
	if f.outputDir != "" {
		if err := os.MkdirAll(f.outputDir, 0o755); err != nil {
			return err
		}
		for i, d := range docs {
			if err := os.WriteFile(filepath.Join(f.outputDir, files[i]), d, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	for i, d := range docs {
		if i > 0 {
			fmt.Fprintln(env.Stdout, "---")
		}
		if _, err := env.Stdout.Write(d); err != nil {
			return err
		}
	}
	return nil
}

// selected returns the selector (id, real id or name) that names a, or "".
func selected(a *clevercloud.Addon, selectors []string) string {
	for _, s := range selectors {
		if s == a.ID || s == a.RealID || (a.AddonName() != "" && s == a.AddonName()) {
			return s
		}
	}
	return ""
}

// observe reads what the manifest needs beyond the add-on itself: the version it runs (the
// names of its variables and the version variable only: no other value is kept) and the
// provider's announced versions, or an operator add-on's version.
func observe(ctx context.Context, api *clevercloud.Client, org string, k *kinds.Kind, a *clevercloud.Addon, infos map[string]*clevercloud.ProviderInfo) (*Observed, error) {
	o := &Observed{Addon: *a}
	if k.VersionCode != nil || k.ElasticServices {
		env, err := api.GetAddonEnv(ctx, org, a.ID)
		if err != nil {
			return nil, fmt.Errorf("reading the version of add-on %s: %w", a.ID, err)
		}
		o.Version = envVersion(env)
		for _, v := range env {
			o.EnvKeys = append(o.EnvKeys, v.Name)
		}
	}
	if k.VersionCode != nil {
		info, ok := infos[k.ProviderID]
		if !ok {
			var err error
			if info, err = api.GetProviderInfo(ctx, k.ProviderID); err != nil && !clevercloud.IsNotFound(err) {
				return nil, fmt.Errorf("reading the versions of %s: %w", k.ProviderID, err)
			}
			infos[k.ProviderID] = info
		}
		if info != nil {
			o.Announced, o.DefaultVersion = info.Versions(), info.DefaultDedicatedVersion
		}
	}
	if k.HasSpecVersion() && a.RealID != "" {
		// spec.version: the version the operator add-on runs, from its v4 provider.
		info, err := api.GetOperator(ctx, k.Operator, a.RealID)
		if err != nil && !clevercloud.IsNotFound(err) {
			return nil, fmt.Errorf("reading the version of add-on %s: %w", a.ID, err)
		}
		if info != nil {
			o.Version = info.Version
		}
	}
	return o, nil
}

func kindByProvider(id string) *kinds.Kind {
	for i := range kinds.Kinds {
		if kinds.Kinds[i].ProviderID == id {
			return &kinds.Kinds[i]
		}
	}
	return nil
}

func kindByName(name string) *kinds.Kind {
	for i := range kinds.Kinds {
		if strings.EqualFold(kinds.Kinds[i].GVK.Kind, name) {
			return &kinds.Kinds[i]
		}
	}
	return nil
}

func kindNames() []string {
	out := make([]string, 0, len(kinds.Kinds))
	for _, k := range kinds.Kinds {
		out = append(out, k.GVK.Kind)
	}
	return out
}
