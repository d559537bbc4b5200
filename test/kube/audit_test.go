package kube

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAuditEventsSince(t *testing.T) {
	h := &Harness{AuditLogPath: filepath.Join(t.TempDir(), "audit.log")}
	if ev, off, err := h.AuditEventsSince(0); err != nil || len(ev) != 0 || off != 0 {
		t.Fatalf("no log yet: %v, %d, %v", ev, off, err)
	}
	lines := `{"verb":"update","user":{"username":"clever-operator"},"objectRef":{"resource":"redis","subresource":"status","apiGroup":"api.clever-cloud.com","namespace":"b","name":"r"},"responseStatus":{"code":200}}
{"verb":"get","user":{"username":"clever-operator"},"objectRef":{"resource":"redis"},"responseStatus":{"code":200}}
{"verb":"create","user":{"username":"harness-admin"},"objectRef":{"resource":"redis"},"responseStatus":{"code":201}}
{"verb":"create","user":{"username":"clever-operator"},"objectRef":{"resource":"secrets","name":"s"},"responseStatus":{"code":201}}
{"verb":"patch","user":{"username":"clever-operator"},"objec`
	if err := os.WriteFile(h.AuditLogPath, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	ev, off, err := h.AuditEventsSince(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 2 || ev[0].ObjectRef.Subresource != "status" || ev[1].ObjectRef.Name != "s" {
		t.Fatalf("want the operator's two writes, got %+v", ev)
	}
	// The partial last line is read once complete.
	f, err := os.OpenFile(h.AuditLogPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`tRef":{"resource":"redis","name":"r"},"responseStatus":{"code":409}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ev, off2, err := h.AuditEventsSince(off)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 1 || ev[0].Verb != "patch" || ev[0].ResponseStatus.Code != 409 {
		t.Fatalf("want the completed patch, got %+v", ev)
	}
	if end, _ := h.AuditOffset(); end != off2 {
		t.Fatalf("offset %d after reading, file size %d", off2, end)
	}
}
