package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3Server is an S3 implementation in the test process: gofakes3 with its in-memory,
// versioned backend, over HTTP. gofakes3 checks no signature and has no bucket policies, so
// this wraps it: a request must be signed (AWS SigV4) with the server's access key (a wrong
// or rotated key is refused 403 AccessDenied, as Cellar does; the signature itself is not
// verified; an S3Server made with no key id takes any key), and `?policy` on a bucket stores, returns and deletes a JSON policy document
// (400 MalformedPolicy when it is not JSON, 404 NoSuchBucketPolicy when there is none).
type S3Server struct {
	*httptest.Server
	KeyID   string
	backend *s3mem.Backend

	mu       sync.Mutex
	policies map[string]string
	requests map[string]int // "METHOD ?query-key" -> n
}

// NewS3Server starts an S3Server accepting keyID ("": any key); the caller closes it.
func NewS3Server(keyID string) *S3Server {
	s := &S3Server{KeyID: keyID, backend: s3mem.New(), policies: map[string]string{}, requests: map[string]int{}}
	fake := gofakes3.New(s.backend).Server()
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+keyID) || (keyID != "" && !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+keyID+"/")) {
			s3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied")
			return
		}
		if _, ok := r.URL.Query()["policy"]; ok {
			s.policy(w, r)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	return s
}

func (s *S3Server) count(r *http.Request) {
	key := r.Method
	for q := range r.URL.Query() {
		key += " ?" + q
	}
	s.mu.Lock()
	s.requests[key]++
	s.mu.Unlock()
}

// Endpoint is host:port, as the operator's CellarEndpoint maps a Cellar host to.
func (s *S3Server) Endpoint() string {
	u, _ := url.Parse(s.URL)
	return u.Host
}

func s3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
}

func (s *S3Server) policy(w http.ResponseWriter, r *http.Request) {
	bucket := strings.Trim(r.URL.Path, "/")
	if ok, _ := s.backend.BucketExists(bucket); !ok {
		s3Error(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		b, _ := io.ReadAll(r.Body)
		if !json.Valid(b) {
			s3Error(w, http.StatusBadRequest, "MalformedPolicy", "Policies must be valid JSON")
			return
		}
		s.policies[bucket] = string(b)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		p, ok := s.policies[bucket]
		if !ok {
			s3Error(w, http.StatusNotFound, "NoSuchBucketPolicy", "The bucket policy does not exist")
			return
		}
		_, _ = io.WriteString(w, p)
	case http.MethodDelete:
		delete(s.policies, bucket)
		w.WriteHeader(http.StatusNoContent)
	default:
		s3Error(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "")
	}
}

// Policy is the bucket's policy document ("" none).
func (s *S3Server) Policy(bucket string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policies[bucket]
}

// Requests counts the requests by method and query keys ("PUT ?versioning", "DELETE").
func (s *S3Server) Requests(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[key]
}

// BucketExists says whether the bucket exists.
func (s *S3Server) BucketExists(bucket string) bool {
	ok, _ := s.backend.BucketExists(bucket)
	return ok
}

// CreateBucket makes a bucket as another tool would.
func (s *S3Server) CreateBucket(bucket string) error { return s.backend.CreateBucket(bucket) }

// Versioning is the bucket's versioning status ("Enabled", "Suspended" or "").
func (s *S3Server) Versioning(bucket string) string {
	v, err := s.backend.VersioningConfiguration(bucket)
	if err != nil {
		return ""
	}
	return string(v.Status)
}

// PutObject stores an object as an application would.
func (s *S3Server) PutObject(bucket, key, body string) error {
	_, err := s.backend.PutObject(bucket, key, map[string]string{}, bytes.NewReader([]byte(body)), int64(len(body)), nil)
	return err
}

// Objects counts the bucket's objects (latest versions).
func (s *S3Server) Objects(bucket string) int {
	l, err := s.backend.ListBucket(bucket, nil, gofakes3.ListBucketPage{})
	if err != nil {
		return -1
	}
	return len(l.Contents)
}
