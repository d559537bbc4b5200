package kinds

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Annotations and values that steer a resource's life (documented in docs/operator.md).
const (
	// AnnotationPaused "true" stops every Clever Cloud write for the resource (no create, no
	// migration, no variable push) and the Secret's re-rendering; reads go on and the existing
	// Secret stays. Deletion is never blocked.
	AnnotationPaused = Group + "/paused"
	// AnnotationReconcileRequestedAt: any new value forces one immediate refresh.
	AnnotationReconcileRequestedAt = Group + "/reconcile-requested-at"
	// AnnotationResyncPeriod overrides the refresh period of one resource (Go duration, ≥ 30s).
	AnnotationResyncPeriod = Group + "/resync-period"
	// AnnotationDeletionPolicy on a Namespace sets the default policy of its resources.
	AnnotationDeletionPolicy = Group + "/deletion-policy"
	// AnnotationOnAddonMissing "report" (or "recreate") overrides --on-addon-missing.
	AnnotationOnAddonMissing = Group + "/on-addon-missing"
	// AnnotationAddonClaim is the operator's signed record that the add-on it names was
	// created by a resource of this namespace: "v1/<addon id>/<Kind>/<name>/<base64url
	// HMAC-SHA256>" (internal/addon/binding.go writes and checks it).
	AnnotationAddonClaim = Group + "/addon-claim"

	DeletionPolicyDelete = "Delete"
	DeletionPolicyOrphan = "Orphan"
	OnMissingRecreate    = "recreate"
	OnMissingReport      = "report"

	MinResyncPeriod = 30 * time.Second
)

// NetworkGroupGVK is the NetworkGroup kind (internal/networkgroup reconciles it).
var NetworkGroupGVK = schema.GroupVersionKind{Group: Group, Version: "v1alpha1", Kind: "NetworkGroup"}

// HelmUninstallFinalizer is the finalizer helm-operator-plugins puts on a resource before its
// first install (it uninstalls the release on deletion).
const HelmUninstallFinalizer = "uninstall-helm-release"
