package chart_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// ociRegistry is an in-memory registry speaking the part of the OCI distribution API that
// `helm push` and `helm pull` (oras-go) use: blob uploads (POST then PUT ?digest=), blob and
// manifest HEAD/GET, manifest PUT by tag, tag listing. It checks every uploaded blob against its
// digest, so a push it accepts is one a real registry would store. Served with httptest (plain
// HTTP: helm's --plain-http).
type ociRegistry struct {
	mu        sync.Mutex
	blobs     map[string][]byte            // digest -> content
	manifests map[string]map[string]string // repository -> tag or digest -> manifest digest
	types     map[string]string            // manifest digest -> media type
	uploads   int
}

func newOCIRegistry() *ociRegistry {
	return &ociRegistry{blobs: map[string][]byte{}, manifests: map[string]map[string]string{}, types: map[string]string{}}
}

var (
	blobPath     = regexp.MustCompile(`^/v2/(.+)/blobs/(sha256:[0-9a-f]{64})$`)
	uploadsPath  = regexp.MustCompile(`^/v2/(.+)/blobs/uploads/$`)
	uploadPath   = regexp.MustCompile(`^/v2/(.+)/blobs/uploads/([0-9]+)$`)
	manifestPath = regexp.MustCompile(`^/v2/(.+)/manifests/([^/]+)$`)
	tagsPath     = regexp.MustCompile(`^/v2/(.+)/tags/list$`)
)

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (r *ociRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	p := req.URL.Path
	switch {
	case p == "/v2/" || p == "/v2":
		w.WriteHeader(http.StatusOK)
	case uploadsPath.MatchString(p) && req.Method == http.MethodPost:
		m := uploadsPath.FindStringSubmatch(p)
		r.uploads++
		w.Header().Set("Location", fmt.Sprintf("/v2/%s/blobs/uploads/%d", m[1], r.uploads))
		w.WriteHeader(http.StatusAccepted)
	case uploadPath.MatchString(p) && req.Method == http.MethodPut:
		m := uploadPath.FindStringSubmatch(p)
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		want := req.URL.Query().Get("digest")
		if got := digestOf(body); got != want {
			http.Error(w, "digest mismatch: "+got+" != "+want, http.StatusBadRequest)
			return
		}
		r.blobs[want] = body
		w.Header().Set("Location", fmt.Sprintf("/v2/%s/blobs/%s", m[1], want))
		w.Header().Set("Docker-Content-Digest", want)
		w.WriteHeader(http.StatusCreated)
	case blobPath.MatchString(p) && (req.Method == http.MethodGet || req.Method == http.MethodHead):
		d := blobPath.FindStringSubmatch(p)[2]
		b, ok := r.blobs[d]
		if !ok {
			http.Error(w, "blob unknown", http.StatusNotFound)
			return
		}
		r.writeContent(w, req, b, "application/octet-stream", d)
	case manifestPath.MatchString(p) && req.Method == http.MethodPut:
		m := manifestPath.FindStringSubmatch(p)
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var manifest struct {
			Config struct{ Digest string }   `json:"config"`
			Layers []struct{ Digest string } `json:"layers"`
		}
		if err := json.Unmarshal(body, &manifest); err != nil {
			http.Error(w, "manifest invalid: "+err.Error(), http.StatusBadRequest)
			return
		}
		refs := []string{manifest.Config.Digest}
		for _, l := range manifest.Layers {
			refs = append(refs, l.Digest)
		}
		for _, d := range refs {
			if _, ok := r.blobs[d]; !ok {
				http.Error(w, "manifest blob unknown: "+d, http.StatusBadRequest)
				return
			}
		}
		d := digestOf(body)
		r.blobs[d] = body
		r.types[d] = req.Header.Get("Content-Type")
		if r.manifests[m[1]] == nil {
			r.manifests[m[1]] = map[string]string{}
		}
		r.manifests[m[1]][m[2]] = d
		r.manifests[m[1]][d] = d
		w.Header().Set("Location", fmt.Sprintf("/v2/%s/manifests/%s", m[1], d))
		w.Header().Set("Docker-Content-Digest", d)
		w.WriteHeader(http.StatusCreated)
	case manifestPath.MatchString(p) && (req.Method == http.MethodGet || req.Method == http.MethodHead):
		m := manifestPath.FindStringSubmatch(p)
		d, ok := r.manifests[m[1]][m[2]]
		if !ok {
			http.Error(w, "manifest unknown", http.StatusNotFound)
			return
		}
		r.writeContent(w, req, r.blobs[d], r.types[d], d)
	case tagsPath.MatchString(p) && req.Method == http.MethodGet:
		m := tagsPath.FindStringSubmatch(p)
		tags := []string{}
		for ref := range r.manifests[m[1]] {
			if !strings.HasPrefix(ref, "sha256:") {
				tags = append(tags, ref)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"name": m[1], "tags": tags})
	default:
		http.Error(w, "unsupported: "+req.Method+" "+p, http.StatusNotFound)
	}
}

func (r *ociRegistry) writeContent(w http.ResponseWriter, req *http.Request, b []byte, mediaType, digest string) {
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("Docker-Content-Digest", digest)
	w.WriteHeader(http.StatusOK)
	if req.Method == http.MethodGet {
		_, _ = w.Write(b)
	}
}

// manifest returns the manifest stored for repository:tag, decoded, and its media type.
func (r *ociRegistry) manifest(repository, tag string) (map[string]any, string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.manifests[repository][tag]
	if !ok {
		return nil, "", false
	}
	var m map[string]any
	if err := json.Unmarshal(r.blobs[d], &m); err != nil {
		return nil, "", false
	}
	return m, r.types[d], true
}

// blob returns a stored blob.
func (r *ociRegistry) blob(digest string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.blobs[digest]
	return b, ok
}
