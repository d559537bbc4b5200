// Package cellarbucket reconciles CellarBucket resources (issue #18 §2): buckets in a Clever
// Cloud Cellar add-on, made and deleted through Cellar's S3 API with the add-on's keys
// (minio-go), with optional versioning and a bucket policy, and a Secret carrying the
// bucket's name, the Cellar host and keys. A bucket holding objects is never deleted
// silently: unset deletionPolicy keeps it, Delete waits until it is emptied or the
// delete-bucket-contents annotation asks for its objects to go.
package cellarbucket

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/clever-operator/clever-operator/internal/clevercloud"
	"github.com/clever-operator/clever-operator/internal/credentials"
	"github.com/clever-operator/clever-operator/internal/kinds"
	"github.com/clever-operator/clever-operator/internal/queue"
	"github.com/clever-operator/clever-operator/internal/secrets"
	"github.com/clever-operator/clever-operator/internal/standalone"
	"github.com/clever-operator/clever-operator/internal/status"
)

// Finalizer keeps a CellarBucket until its bucket is dealt with.
const Finalizer = kinds.Group + "/cellarbucket"

// AnnotationDeleteContents asks the operator to delete a bucket's objects when the resource
// is deleted under deletionPolicy Delete.
const AnnotationDeleteContents = kinds.Group + "/delete-bucket-contents"

// Secret keys.
const (
	KeyBucketName = "BUCKET_NAME"
	KeyBucketHost = "BUCKET_HOST"
	KeyBucketURL  = "BUCKET_URL"
	KeyHost       = "CELLAR_ADDON_HOST"
	KeyKeyID      = "CELLAR_ADDON_KEY_ID"
	KeyKeySecret  = "CELLAR_ADDON_KEY_SECRET"
)

// GVK is the CellarBucket kind.
var GVK = schema.GroupVersionKind{Group: kinds.Group, Version: "v1alpha1", Kind: "CellarBucket"}

var cellarGVK = schema.GroupVersionKind{Group: kinds.Group, Version: "v1", Kind: "Cellar"}

// Reconciler reconciles CellarBucket resources.
type Reconciler struct {
	Client      client.Client
	Credentials credentials.Credentials
	Recorder    record.EventRecorder
	// Selector, when set, limits the controller to the resources it matches (--watch-selector).
	Selector     labels.Selector
	ResyncPeriod time.Duration
	Log          logr.Logger
	// Endpoint maps a Cellar host (CELLAR_ADDON_HOST) and key id to the S3 endpoint
	// (host[:port]) and whether it is reached over TLS; default: the host itself, over TLS.
	Endpoint func(host, keyID string) (endpoint string, secure bool)
	// NewS3 builds the S3 client of a Cellar's keys (default NewMinio).
	NewS3 func(keys Keys, endpoint string, secure bool) (S3, error)
	Now   func() time.Time
	// SignKey signs the bucket Secrets and verifies the Cellars' source Secrets (the
	// operator's claim key; secrets.Verified): a Secret edited in the namespace is
	// neither read nor left as edited.
	SignKey []byte

	tenants standalone.Tenants
}

func (r *Reconciler) report() standalone.Reporter {
	return standalone.Reporter{Recorder: r.Recorder, Now: r.Now}
}

func newObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GVK)
	return u
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.ResyncPeriod == 0 {
		r.ResyncPeriod = queue.DefaultResyncPeriod
	}
	cellar := &unstructured.Unstructured{}
	cellar.SetGroupVersionKind(cellarGVK)
	return ctrl.NewControllerManagedBy(mgr).
		Named("cellarbucket").
		For(newObject(), builder.WithPredicates(standalone.ForPredicates(r.Selector)...)).
		// A Cellar that becomes Ready, or whose keys change, wakes its buckets.
		Watches(cellar, handler.EnqueueRequestsFromMapFunc(r.bucketsOf)).
		Owns(&corev1.Secret{}).
		WithOptions(standalone.ControllerOptions()).
		Complete(r)
}

func (r *Reconciler) bucketsOf(ctx context.Context, cellar client.Object) []reconcile.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(GVK.GroupVersion().WithKind("CellarBucketList"))
	if err := r.Client.List(ctx, list, client.InNamespace(cellar.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if standalone.Str(&list.Items[i], "spec", "cellar", "name") == cellar.GetName() {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// Reconcile makes, observes or deletes one bucket.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return standalone.Run(ctx, r.Client, req, GVK, Finalizer, &r.tenants, r.reconcile)
}

// BucketName is the bucket a resource asks for: spec.bucketName, else
// <name>-<the first 8 characters of its uid>.
func BucketName(obj *unstructured.Unstructured) string {
	if n := standalone.Str(obj, "spec", "bucketName"); n != "" {
		return n
	}
	name := strings.ToLower(obj.GetName())
	if len(name) > 54 {
		name = strings.TrimRight(name[:54], "-.")
	}
	return name + "-" + string(obj.GetUID())[:8]
}

// keys finds the Cellar's host and keys: from the engine's source Secret of a Cellar resource
// (what its add-on published), or from the add-on's env read with the resource's credentials.
// A reason is returned when they cannot be had now.
func (r *Reconciler) keys(ctx context.Context, obj *unstructured.Unstructured) (k Keys, reason, msg string, err error) {
	ns := obj.GetNamespace()
	if name := standalone.Str(obj, "spec", "cellar", "name"); name != "" {
		cellar := &unstructured.Unstructured{}
		cellar.SetGroupVersionKind(cellarGVK)
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cellar); err != nil {
			if apierrors.IsNotFound(err) {
				return k, status.ReasonCellarNotFound, fmt.Sprintf("Cellar %s does not exist in namespace %s", name, ns), nil
			}
			return k, "", "", err
		}
		ready, _ := status.Find(status.Conditions(cellar), status.TypeReady)
		if ready.Status != string(metav1.ConditionTrue) {
			return k, status.ReasonCellarNotReady, fmt.Sprintf("Cellar %s is not Ready yet", name), nil
		}
		kind, _ := kinds.KindFor(cellarGVK)
		src := &corev1.Secret{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: kind.SourceSecretName(name)}, src); err != nil {
			if apierrors.IsNotFound(err) {
				return k, status.ReasonCellarNotReady, fmt.Sprintf("Cellar %s has not published its keys yet", name), nil
			}
			return k, "", "", err
		}
		if !secrets.Verified(r.SignKey, src) {
			// Edited in the namespace since the operator wrote it: the Cellar's pass writes
			// it again (its change wakes this bucket).
			return k, status.ReasonCellarNotReady, fmt.Sprintf("Cellar %s has not published its keys yet", name), nil
		}
		k = Keys{Host: string(src.Data[KeyHost]), KeyID: string(src.Data[KeyKeyID]), KeySecret: string(src.Data[KeyKeySecret])}
	} else {
		org, id := standalone.Str(obj, "spec", "cellar", "organisation"), standalone.Str(obj, "spec", "cellar", "addonId")
		g, reason, msg, err := standalone.Connect(ctx, r.Credentials, obj, org)
		if g == nil {
			return k, reason, msg, err
		}
		// Binding an existing add-on is a privilege (credentials.MayReference): a Cellar of this
		// namespace records it (status.addon, written only by the operator), or the
		// credentials allow binding it; decided before its keys are read.
		here, err := credentials.RecordedIn(ctx, r.Client, cellarGVK, ns, id, "addon")
		if err != nil {
			return k, "", "", err
		}
		if refused := credentials.MayReference(credentials.Reference{What: credentials.ReferenceAddon, ID: id, Organisation: org, Namespace: ns,
			Field: "spec.cellar.addonId", CreatedHere: here}, g); refused != nil {
			return k, refused.Reason, refused.Message, nil
		}
		env, aerr := g.API.GetAddonEnv(ctx, org, id)
		switch {
		case clevercloud.IsNotFound(aerr):
			return k, status.ReasonAddonNotFound, fmt.Sprintf("add-on %s does not exist in organisation %s", id, org), nil
		case aerr != nil:
			return k, "", "", aerr
		}
		for _, v := range env {
			switch v.Name {
			case KeyHost:
				k.Host = v.Value
			case KeyKeyID:
				k.KeyID = v.Value
			case KeyKeySecret:
				k.KeySecret = v.Value
			}
		}
	}
	if k.Host == "" || k.KeyID == "" || k.KeySecret == "" {
		return k, status.ReasonCellarNotReady, "the Cellar add-on does not publish CELLAR_ADDON_HOST, CELLAR_ADDON_KEY_ID and CELLAR_ADDON_KEY_SECRET (is it a Cellar add-on?)", nil
	}
	return k, "", "", nil
}

func (r *Reconciler) s3(k Keys) (S3, error) {
	endpoint, secure := k.Host, true
	if r.Endpoint != nil {
		endpoint, secure = r.Endpoint(k.Host, k.KeyID)
	}
	if r.NewS3 != nil {
		return r.NewS3(k, endpoint, secure)
	}
	return NewMinio(k, endpoint, secure, http.DefaultTransport)
}

func (r *Reconciler) reconcile(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
	rep := r.report()
	if obj.GetDeletionTimestamp() != nil {
		return r.finalize(ctx, obj)
	}
	if err := standalone.EnsureFinalizer(ctx, r.Client, obj, Finalizer); err != nil {
		return ctrl.Result{}, err
	}
	k, reason, msg, err := r.keys(ctx, obj)
	switch {
	case err != nil:
		return rep.Fail(obj, "reading the Cellar's keys", err)
	case reason == status.ReasonCellarNotFound || reason == status.ReasonCellarNotReady:
		return rep.Wait(obj, reason, msg, 5*time.Minute) // the Cellar's change wakes it sooner
	case reason != "":
		return rep.Refuse(obj, reason, msg)
	}
	s3, err := r.s3(k)
	if err != nil {
		return rep.Refuse(obj, status.ReasonS3Error, "Cellar endpoint "+k.Host+": "+err.Error())
	}
	bucket := BucketName(obj)
	exists, err := s3.BucketExists(ctx, bucket)
	switch {
	case ErrorCode(err) == "AccessDenied" || ErrorStatus(err) == http.StatusForbidden:
		return rep.Refuse(obj, status.ReasonBucketNameTaken, fmt.Sprintf("bucket %s belongs to another Cellar user (bucket names are shared by every user of the region); set spec.bucketName", bucket))
	case err != nil:
		return r.s3Failed(obj, "reading bucket "+bucket, err)
	case !exists:
		if err := s3.MakeBucket(ctx, bucket); err != nil {
			if code := ErrorCode(err); code == "BucketAlreadyExists" {
				return rep.Refuse(obj, status.ReasonBucketNameTaken, fmt.Sprintf("bucket %s belongs to another Cellar user (bucket names are shared by every user of the region); set spec.bucketName", bucket))
			} else if code == "InvalidBucketName" {
				return rep.Refuse(obj, status.ReasonInvalidSpec, fmt.Sprintf("Cellar refused the bucket name %s: %v", bucket, err))
			}
			return r.s3Failed(obj, "creating bucket "+bucket, err)
		}
		r.Recorder.Event(obj, corev1.EventTypeNormal, status.EventBucketCreated, fmt.Sprintf("Created bucket %s on %s", bucket, k.Host))
	}
	_ = unstructured.SetNestedField(obj.Object, bucket, "status", "bucketName")
	_ = unstructured.SetNestedField(obj.Object, k.Host, "status", "host")

	// Versioning: on when asked; suspended when no longer asked (S3 cannot turn it off).
	want, _, _ := unstructured.NestedBool(obj.Object, "spec", "versioning")
	cur, err := s3.Versioning(ctx, bucket)
	if err != nil {
		return r.s3Failed(obj, "reading the versioning of bucket "+bucket, err)
	}
	if (want && cur != "Enabled") || (!want && cur == "Enabled") {
		if err := s3.SetVersioning(ctx, bucket, want); err != nil {
			return r.s3Failed(obj, "changing the versioning of bucket "+bucket, err)
		}
		cur = map[bool]string{true: "Enabled", false: "Suspended"}[want]
	}
	if cur != "" {
		_ = unstructured.SetNestedField(obj.Object, cur, "status", "versioning")
	}

	// Policy: applied when it changed since the last time (status.policyHash).
	doc, perr := Policy(obj, bucket)
	if perr != nil {
		return rep.Refuse(obj, status.ReasonInvalidSpec, perr.Error())
	}
	if h := hash(doc); h != standalone.Str(obj, "status", "policyHash") {
		if doc != "" || standalone.Str(obj, "status", "policyHash") != "" {
			if err := s3.SetPolicy(ctx, bucket, doc); err != nil {
				if ErrorStatus(err) == http.StatusBadRequest {
					return rep.Refuse(obj, status.ReasonInvalidSpec, fmt.Sprintf("Cellar refused the policy of bucket %s: %v", bucket, err))
				}
				return r.s3Failed(obj, "applying the policy of bucket "+bucket, err)
			}
		}
		if h == "" {
			unstructured.RemoveNestedField(obj.Object, "status", "policyHash")
		} else {
			_ = unstructured.SetNestedField(obj.Object, h, "status", "policyHash")
		}
	}

	secretName, err := r.writeSecret(ctx, obj, bucket, k)
	if err != nil {
		if reason, ok := err.(secretConflict); ok {
			return rep.Refuse(obj, status.ReasonSecretConflict, string(reason))
		}
		return ctrl.Result{}, err
	}
	_ = unstructured.SetNestedField(obj.Object, secretName, "status", "secretName")
	rep.Ready(obj, metav1.ConditionTrue, status.ReasonAvailable, fmt.Sprintf("bucket %s exists on %s; its name, host and keys are in Secret %s", bucket, k.Host, secretName), false)
	return ctrl.Result{RequeueAfter: queue.Jitter(r.ResyncPeriod)}, nil
}

func (r *Reconciler) s3Failed(obj *unstructured.Unstructured, what string, err error) (ctrl.Result, error) {
	return r.report().FailWith(obj, status.ReasonS3Error, what+": "+err.Error())
}

// Policy is the policy document a resource asks for ("" none): public read of the bucket's
// objects, or its raw document (which must be JSON).
func Policy(obj *unstructured.Unstructured, bucket string) (string, error) {
	if raw := standalone.Str(obj, "spec", "policy", "raw"); raw != "" {
		if !json.Valid([]byte(raw)) {
			return "", fmt.Errorf("spec.policy.raw is not a JSON document")
		}
		return raw, nil
	}
	if pub, _, _ := unstructured.NestedBool(obj.Object, "spec", "policy", "publicRead"); pub {
		return fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Sid":"PublicRead","Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::%s/*"]}]}`, bucket), nil
	}
	return "", nil
}

func hash(doc string) string {
	if doc == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:8])
}

type secretConflict string

func (s secretConflict) Error() string { return string(s) }

// writeSecret creates or updates the bucket's Secret (owned by the resource, labelled as the
// operator's so its cache sees it).
func (r *Reconciler) writeSecret(ctx context.Context, obj *unstructured.Unstructured, bucket string, k Keys) (string, error) {
	name := standalone.Str(obj, "spec", "secretName")
	if name == "" {
		name = obj.GetName() + "-bucket"
	}
	sec := &corev1.Secret{}
	sec.Namespace, sec.Name = obj.GetNamespace(), name
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(sec), sec); err == nil {
		if owner := metav1.GetControllerOf(sec); owner == nil || owner.UID != obj.GetUID() {
			return "", secretConflict(fmt.Sprintf("Secret %s already exists and is not this resource's; it was left untouched (set spec.secretName)", name))
		}
	} else if !apierrors.IsNotFound(err) {
		return "", err
	}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, sec, func() error {
		if sec.Labels == nil {
			sec.Labels = map[string]string{}
		}
		sec.Labels[kinds.LabelManagedBy] = kinds.ManagedByValue
		sec.Type = corev1.SecretTypeOpaque
		sec.Data = map[string][]byte{
			KeyBucketName: []byte(bucket),
			KeyBucketHost: []byte(k.Host),
			KeyBucketURL:  []byte("https://" + k.Host + "/" + bucket),
			KeyHost:       []byte(k.Host),
			KeyKeyID:      []byte(k.KeyID),
			KeyKeySecret:  []byte(k.KeySecret),
		}
		secrets.Sign(r.SignKey, sec)
		return controllerutil.SetControllerReference(obj, sec, r.Client.Scheme())
	})
	return name, err
}

func (r *Reconciler) release(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
	return standalone.Release(ctx, r.Client, obj, Finalizer)
}

func (r *Reconciler) finalize(ctx context.Context, obj *unstructured.Unstructured) (ctrl.Result, error) {
	rep := r.report()
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return ctrl.Result{}, nil
	}
	bucket := standalone.Str(obj, "status", "bucketName")
	policy := standalone.Str(obj, "spec", "deletionPolicy")
	switch {
	case bucket == "":
		return r.release(ctx, obj) // never made
	case policy == "Orphan" || obj.GetAnnotations()[kinds.AnnotationSkipDeprovision] == "true":
		r.Recorder.Event(obj, corev1.EventTypeNormal, status.EventBucketKept, fmt.Sprintf("Bucket %s is kept in Cellar (deletion policy Orphan)", bucket))
		return r.release(ctx, obj)
	}
	k, reason, msg, err := r.keys(ctx, obj)
	switch {
	case err != nil:
		return rep.Fail(obj, "reading the Cellar's keys", err)
	case reason == status.ReasonCellarNotFound || reason == status.ReasonAddonNotFound:
		// The Cellar went first: its buckets went with its add-on.
		r.Recorder.Event(obj, corev1.EventTypeNormal, status.EventBucketDeleted, fmt.Sprintf("Bucket %s went with its Cellar (%s)", bucket, msg))
		return r.release(ctx, obj)
	case reason != "":
		return rep.Wait(obj, reason, msg+fmt.Sprintf("; the resource is kept (finalizer) until the bucket can be dealt with (to release it, annotate it %s=true)", kinds.AnnotationSkipDeprovision), time.Minute)
	}
	s3, err := r.s3(k)
	if err != nil {
		return rep.Refuse(obj, status.ReasonS3Error, "Cellar endpoint "+k.Host+": "+err.Error())
	}
	if exists, err := s3.BucketExists(ctx, bucket); err != nil {
		return r.s3Failed(obj, "reading bucket "+bucket, err)
	} else if !exists {
		return r.release(ctx, obj)
	}
	full, err := s3.HasObjects(ctx, bucket)
	if err != nil {
		return r.s3Failed(obj, "listing bucket "+bucket, err)
	}
	if full {
		switch {
		case policy != "Delete":
			r.Recorder.Event(obj, corev1.EventTypeWarning, status.EventBucketKept, fmt.Sprintf("Bucket %s holds objects: it is kept in Cellar (set spec.deletionPolicy: Delete to delete it with its resource)", bucket))
			return r.release(ctx, obj)
		case obj.GetAnnotations()[AnnotationDeleteContents] != "true":
			return rep.Wait(obj, status.ReasonBucketNotEmpty, fmt.Sprintf("bucket %s holds objects and deletionPolicy is Delete: the resource stays until the bucket is emptied, or until it is annotated %s=true to delete its objects (or %s=true to keep the bucket)", bucket, AnnotationDeleteContents, kinds.AnnotationSkipDeprovision), time.Minute)
		}
		if err := s3.Empty(ctx, bucket); err != nil {
			return r.s3Failed(obj, "deleting the objects of bucket "+bucket, err)
		}
		r.Recorder.Event(obj, corev1.EventTypeNormal, status.EventBucketEmptied, fmt.Sprintf("Deleted the objects of bucket %s (annotation %s)", bucket, AnnotationDeleteContents))
	}
	if err := s3.RemoveBucket(ctx, bucket); err != nil {
		if ErrorCode(err) == "BucketNotEmpty" {
			return rep.Wait(obj, status.ReasonBucketNotEmpty, fmt.Sprintf("bucket %s is not empty yet", bucket), 10*time.Second)
		}
		return r.s3Failed(obj, "deleting bucket "+bucket, err)
	}
	r.Recorder.Event(obj, corev1.EventTypeNormal, status.EventBucketDeleted, fmt.Sprintf("Deleted bucket %s", bucket))
	return r.release(ctx, obj)
}
