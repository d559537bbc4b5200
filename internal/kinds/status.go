package kinds

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clever-operator/clever-operator/api/shared"
)

// Status is the status of every add-on kind: the union of their status types in api/ (a test
// of internal/statusmerge fails when they diverge). The engine decodes it once per pass
// (StatusOf), reads and changes it typed, and encodes it once when it writes (Encode); this
// file is the only one of the engine that reads or writes status by path.
//
// Conditions and DeployedRelease are not decoded (internal/status reads and writes the
// conditions; the Helm side owns deployedRelease): Encode never touches them.
type Status struct {
	shared.CommonStatus   `json:",inline"`
	shared.OperatorStatus `json:",inline"`

	Backups       *shared.BackupsStatus           `json:"backups,omitempty"`
	NetworkGroups []shared.NetworkGroupMembership `json:"networkGroups,omitempty"`
	URL           string                          `json:"url,omitempty"`
	AdminURL      string                          `json:"admin_url,omitempty"`
}

// NotEncoded are the status fields Status holds but Encode leaves alone.
var NotEncoded = []string{"conditions", "deployedRelease"}

// StatusOf decodes u's status (the zero Status when it has none or it does not decode).
func StatusOf(u *unstructured.Unstructured) Status {
	var st Status
	if raw, ok := u.Object["status"].(map[string]any); ok {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st)
	}
	st.Conditions, st.DeployedRelease = nil, nil
	return st
}

// Encode writes st's fields into u's status: a field st has is set, one it lacks removed. A
// field whose value does not change keeps its stored representation (so a pass that changed
// nothing writes nothing); the fields of NotEncoded, and any the type does not know, stay.
func (st *Status) Encode(u *unstructured.Unstructured) {
	next, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
	if err != nil {
		return
	}
	prev := StatusOf(u)
	cur, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&prev)
	if err != nil {
		return
	}
	for _, f := range StatusFields {
		if slices.Contains(NotEncoded, f) || equality.Semantic.DeepEqual(next[f], cur[f]) {
			continue
		}
		if v, ok := next[f]; ok {
			_ = unstructured.SetNestedField(u.Object, v, "status", f)
		} else {
			unstructured.RemoveNestedField(u.Object, "status", f)
		}
	}
}

// Change applies change to u's status (decoded, then encoded): for tests and one-off edits.
func Change(u *unstructured.Unstructured, change func(*Status)) {
	Update([]func(*Status){change})(u)
}

// Update returns one change of an unstructured resource that applies changes to its status
// (decoded once, encoded once); nil when there are none.
func Update(changes []func(*Status)) func(*unstructured.Unstructured) {
	if len(changes) == 0 {
		return nil
	}
	return func(u *unstructured.Unstructured) {
		st := StatusOf(u)
		for _, c := range changes {
			c(&st)
		}
		st.Encode(u)
	}
}

// NetworkGroupID is a NetworkGroup resource's status.id (the group at Clever Cloud).
func NetworkGroupID(ng *unstructured.Unstructured) string {
	id, _, _ := unstructured.NestedString(ng.Object, "status", "id")
	return id
}

// Creds is the credentials' status (the zero value when absent).
func (st *Status) Creds() shared.CredentialsStatus {
	if st.Credentials == nil {
		return shared.CredentialsStatus{}
	}
	return *st.Credentials
}

// EnsureCreds is the credentials' status to change, made when absent.
func (st *Status) EnsureCreds() *shared.CredentialsStatus {
	if st.Credentials == nil {
		st.Credentials = &shared.CredentialsStatus{}
	}
	return st.Credentials
}

// SetURL sets a URL field by its JSON name (a kind's URLStatus).
func (st *Status) SetURL(field, v string) {
	switch field {
	case shared.URLField:
		st.URL = v
	case shared.AdminURLField:
		st.AdminURL = v
	}
}

// StatusFields are the JSON names of Status's fields, inline structs flattened.
var StatusFields = JSONFields(reflect.TypeFor[Status]())

// JSONFields are the JSON names of struct t's fields, inline structs flattened, sorted.
func JSONFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case name == "" && (f.Anonymous || strings.Contains(opts, "inline")):
			out = append(out, JSONFields(f.Type)...)
		case name != "":
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
