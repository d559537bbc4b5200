package kube

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// OperatorUser is the Kubernetes user the harness's operators authenticate as (their own
// client certificate, group system:masters); the drivers use another one.
const OperatorUser = "clever-operator"

// auditPolicy records, at level Metadata (no bodies: no Secret value reaches the log), every
// write request of OperatorUser, once (when the response is complete); nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + OperatorUser + `"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// configureAudit writes the audit policy and passes it, with the log path, to kube-apiserver.
func (h *Harness) configureAudit() error {
	policy := filepath.Join(h.WorkDir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return err
	}
	h.AuditLogPath = filepath.Join(h.WorkDir, "audit.log")
	if err := os.Remove(h.AuditLogPath); err != nil && !os.IsNotExist(err) {
		return err
	}
	h.env.ControlPlane.GetAPIServer().Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", h.AuditLogPath).
		Set("audit-log-format", "json").
		Set("audit-log-mode", "blocking").
		Set("audit-log-maxsize", "0")
	return nil
}

// AuditOffset is the current size of the audit log: events written after it are read with
// AuditEventsSince.
func (h *Harness) AuditOffset() (int64, error) {
	if h.AuditLogPath == "" {
		return 0, fmt.Errorf("the harness was started without HarnessOptions.AuditLog")
	}
	return AuditLogSize(h.AuditLogPath)
}

// AuditEventsSince returns the OperatorUser's write events logged from offset on (complete
// lines only) and the offset after the last one.
func (h *Harness) AuditEventsSince(offset int64) ([]AuditEvent, int64, error) {
	return ReadAuditLog(h.AuditLogPath, offset, func(e *AuditEvent) bool {
		return e.User.Username == OperatorUser && e.IsWrite()
	})
}

// AuditLogSize is the size of the JSON-lines audit log at path (0 before its first line).
func AuditLogSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// ReadAuditLog decodes the JSON-lines audit log at path from offset on, into events of type E
// (the fields a caller reads), keeping those keep accepts (nil: all). Only complete lines are
// read: a partial last line is read by the next call, from the offset returned.
func ReadAuditLog[E any](path string, offset int64, keep func(*E) bool) ([]E, int64, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, offset, nil
	}
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, err
	}
	var out []E
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			return out, offset, nil
		}
		if err != nil {
			return out, offset, err
		}
		offset += int64(len(line))
		var e E
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return out, offset, fmt.Errorf("audit log: %w", err)
		}
		if keep == nil || keep(&e) {
			out = append(out, e)
		}
	}
}

// AuditEvent is the part of an audit.k8s.io/v1 Event that the suites and the bench read from
// an audit log (the harness's or the whole cluster's).
type AuditEvent struct {
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string   `json:"username"`
		Groups   []string `json:"groups"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		APIVersion  string `json:"apiVersion"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code    int    `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	Annotations map[string]string `json:"annotations"`
}

// Forbidden reports a request refused by authorization (403), e.g. an RBAC denial.
func (e *AuditEvent) Forbidden() bool { return e.ResponseStatus.Code == http.StatusForbidden }

// IsWrite reports a create, update, patch, delete or deletecollection.
func (e *AuditEvent) IsWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}
