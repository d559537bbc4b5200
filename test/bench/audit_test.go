package main

import (
	"testing"
	"time"

	"github.com/clever-operator/clever-operator/test/kube"
)

func event(verb, group, resource, sub, ns, name string, code int) kube.AuditEvent {
	var e kube.AuditEvent
	e.Verb = verb
	e.ObjectRef.APIGroup, e.ObjectRef.Resource, e.ObjectRef.Subresource = group, resource, sub
	e.ObjectRef.Namespace, e.ObjectRef.Name = ns, name
	e.ResponseStatus.Code = code
	return e
}

func TestWriteKind(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    kube.AuditEvent
		want string
	}{
		{"status subresource of a resource", event("update", "api.clever-cloud.com", "redis", "status", "b", "r", 200), wStatus},
		{"the resource itself (finalizers)", event("patch", "api.clever-cloud.com", "postgresqls", "", "b", "p", 200), wResource},
		{"a Helm release Secret", event("create", "", "secrets", "", "b", "sh.helm.release.v1.p.v1", 201), wHelm},
		{"a published Secret", event("update", "", "secrets", "", "b", "p-secrets", 200), wSecret},
		{"a core Event", event("create", "", "events", "", "b", "p.1234", 201), wEvent},
		{"an events.k8s.io Event", event("patch", "events.k8s.io", "events", "", "b", "p.1234", 200), wEvent},
		{"a ConfigMap", event("create", "", "configmaps", "", "b", "p-config", 201), wConfig},
		{"a lease", event("update", "coordination.k8s.io", "leases", "", "b", "l", 200), wOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := writeKind(tc.e); got != tc.want {
				t.Errorf("writeKind = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	events := []kube.AuditEvent{
		event("update", "api.clever-cloud.com", "redis", "status", "b", "r1", 200),
		event("update", "api.clever-cloud.com", "redis", "status", "b", "r1", 409),
		event("update", "api.clever-cloud.com", "redis", "status", "b", "r1", 200),
		event("update", "api.clever-cloud.com", "redis", "status", "b", "r2", 200),
		event("patch", "api.clever-cloud.com", "redis", "", "b", "r2", 200),
		event("create", "", "secrets", "", "b", "sh.helm.release.v1.r2.v1", 201),
	}
	p := summarize(events, 2, 10*time.Second)
	// The refused update (409) wrote nothing: counted apart.
	if p.Writes != 5 || p.Failed != 1 || p.PerResource != 2.5 || p.FailedPerResource != 0.5 {
		t.Errorf("writes %d, refused %d, per resource %.2f + %.2f; want 5, 1, 2.5 + 0.5", p.Writes, p.Failed, p.PerResource, p.FailedPerResource)
	}
	if p.ByKind[wStatus] != 3 || p.PerResourceByKind[wStatus] != 1.5 || p.StatusMaxPerResource != 2 {
		t.Errorf("status %d (%.2f per resource, max %d); want 3 (1.5, max 2)", p.ByKind[wStatus], p.PerResourceByKind[wStatus], p.StatusMaxPerResource)
	}
	if p.ByResource["update <add-on>/status"] != 3 || p.ByResource["patch <add-on>"] != 1 || p.ByResource["create secrets"] != 1 || p.FailedByResource["update <add-on>/status 409"] != 1 {
		t.Errorf("by resource: %v, refused: %v", p.ByResource, p.FailedByResource)
	}
	three := summarize(append(events, event("update", "api.clever-cloud.com", "redis", "status", "b", "r1", 200)), 2, time.Second)
	if three.StatusMaxPerResource != 3 || len(three.StatusOverTwo) != 1 || three.StatusOverTwo["redis b/r1"] != 3 || p.StatusOverTwo != nil {
		t.Errorf("over two: %v (max %d); before the third write: %v", three.StatusOverTwo, three.StatusMaxPerResource, p.StatusOverTwo)
	}
	if z := summarize(nil, 15, time.Second); z.Writes != 0 || z.PerResource != 0 || z.StatusMaxPerResource != 0 {
		t.Errorf("no event: %+v", z)
	}
}

// Every spec change has its own phase in results.json.
func TestSpecCasesPhases(t *testing.T) {
	var a A1
	seen := map[*AuditPhase]string{}
	for _, c := range specCases {
		p := a.specPhase(c.name)
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s share a phase", c.name, other)
		}
		seen[p] = c.name
	}
	if a.specPhase("spec.secret.labels") != &a.SpecChange {
		t.Error("spec.secret.labels is not A1.SpecChange (JSON specChange)")
	}
}
