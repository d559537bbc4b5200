package cellarbucket

import (
	"context"
	"errors"
	"net/http"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 is what a bucket needs of Cellar's S3 API (minioS3 implements it with minio-go).
type S3 interface {
	// BucketExists: false for a bucket that does not exist; an error with code AccessDenied
	// for one another Cellar user owns.
	BucketExists(ctx context.Context, bucket string) (bool, error)
	MakeBucket(ctx context.Context, bucket string) error
	RemoveBucket(ctx context.Context, bucket string) error
	// Versioning is "Enabled", "Suspended" or "" (never enabled).
	Versioning(ctx context.Context, bucket string) (string, error)
	SetVersioning(ctx context.Context, bucket string, enabled bool) error
	// SetPolicy applies a policy document; "" deletes the bucket's policy.
	SetPolicy(ctx context.Context, bucket, policy string) error
	// HasObjects says whether the bucket holds any object or object version.
	HasObjects(ctx context.Context, bucket string) (bool, error)
	// Empty deletes every object and object version of the bucket.
	Empty(ctx context.Context, bucket string) error
}

// Keys are a Cellar add-on's S3 endpoint host and keys (CELLAR_ADDON_HOST, _KEY_ID,
// _KEY_SECRET).
type Keys struct{ Host, KeyID, KeySecret string }

// NewMinio returns the S3 client of keys at endpoint (host[:port]), over TLS when secure.
// Path-style requests (https://host/bucket), which Cellar and every S3 implementation take.
func NewMinio(keys Keys, endpoint string, secure bool, transport http.RoundTripper) (S3, error) {
	c, err := minio.New(endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(keys.KeyID, keys.KeySecret, ""),
		Secure:       secure,
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
		Transport:    transport,
	})
	if err != nil {
		return nil, err
	}
	return &minioS3{c: c}, nil
}

type minioS3 struct{ c *minio.Client }

func (m *minioS3) BucketExists(ctx context.Context, bucket string) (bool, error) {
	return m.c.BucketExists(ctx, bucket)
}

func (m *minioS3) MakeBucket(ctx context.Context, bucket string) error {
	err := m.c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{})
	if ErrorCode(err) == "BucketAlreadyOwnedByYou" {
		return nil
	}
	return err
}

func (m *minioS3) RemoveBucket(ctx context.Context, bucket string) error {
	err := m.c.RemoveBucket(ctx, bucket)
	if ErrorCode(err) == "NoSuchBucket" {
		return nil
	}
	return err
}

func (m *minioS3) Versioning(ctx context.Context, bucket string) (string, error) {
	v, err := m.c.GetBucketVersioning(ctx, bucket)
	if err != nil {
		return "", err
	}
	return v.Status, nil
}

func (m *minioS3) SetVersioning(ctx context.Context, bucket string, enabled bool) error {
	if enabled {
		return m.c.EnableVersioning(ctx, bucket)
	}
	return m.c.SuspendVersioning(ctx, bucket)
}

func (m *minioS3) SetPolicy(ctx context.Context, bucket, policy string) error {
	return m.c.SetBucketPolicy(ctx, bucket, policy)
}

func (m *minioS3) HasObjects(ctx context.Context, bucket string) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for o := range m.c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true, WithVersions: true, MaxKeys: 1}) {
		if o.Err != nil {
			return false, o.Err
		}
		return true, nil
	}
	return false, nil
}

func (m *minioS3) Empty(ctx context.Context, bucket string) error {
	objects := m.c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true, WithVersions: true})
	for e := range m.c.RemoveObjects(ctx, bucket, objects, minio.RemoveObjectsOptions{}) {
		if e.Err != nil {
			return e.Err
		}
	}
	return nil
}

// ErrorCode is the S3 error code of err ("" when it is not an S3 error answer).
func ErrorCode(err error) string { return s3Error(err).Code }

// ErrorStatus is the HTTP status of an S3 error answer (0 otherwise).
func ErrorStatus(err error) int { return s3Error(err).StatusCode }

func s3Error(err error) minio.ErrorResponse {
	var r minio.ErrorResponse
	errors.As(err, &r)
	return r
}
