// Package namespaced holds the +kubebuilder:rbac markers of the operator's namespaced
// permissions: what it needs inside the namespaces it watches (the 15 add-on kinds, their
// Secrets and ConfigMaps, events, the credential rollout of workloads). controller-gen writes
// them into the ClusterRole manager-namespaced-role (config/rbac/namespaced-role/role.yaml,
// `make manifests`), which is bound cluster-wide when every namespace is watched and with one
// RoleBinding per namespace when the operator watches a set of namespaces (config/namespaced,
// the chart's watchNamespaces, OLM's permissions). The cluster-scoped needs (namespaces, the
// cluster credential kinds, the metrics authentication) stay in main.go's markers, the
// ClusterRole manager-role, bound cluster-wide in every install mode.
//
// The package has no code: it exists so that controller-gen can generate the two roles apart.
package namespaced

// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=postgresqls;redis;mysqls;mongodbs;elasticsearches;pulsars;configproviders;kvs;metabases;keycloaks;matomos;otoroshis;azimutts;cellars;addons,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=postgresqls/status;redis/status;mysqls/status;mongodbs/status;elasticsearches/status;pulsars/status;configproviders/status;kvs/status;metabases/status;keycloaks/status;matomos/status;otoroshis/status;azimutts/status;cellars/status;addons/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=postgresqls/finalizers;redis/finalizers;mysqls/finalizers;mongodbs/finalizers;elasticsearches/finalizers;pulsars/finalizers;configproviders/finalizers;kvs/finalizers;metabases/finalizers;keycloaks/finalizers;matomos/finalizers;otoroshis/finalizers;azimutts/finalizers;cellars/finalizers;addons/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=list;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// A namespace's own credentials objects (internal/credentials): read, status written, and
// their in-use finalizer set and removed (credentials.InUseFinalizer).
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=clevercredentials,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=clevercredentials/status,verbs=get;update;patch
// Network Groups (internal/networkgroup): read, finalizer and status written; add-ons read them.
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=networkgroups,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=networkgroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=networkgroups/finalizers,verbs=update
// Cellar buckets (internal/cellarbucket): read, finalizer and status written.
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=cellarbuckets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=cellarbuckets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=api.clever-cloud.com,resources=cellarbuckets/finalizers,verbs=update
