package hybrid

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/clever-operator/clever-operator/api/v1"
	"github.com/clever-operator/clever-operator/api/v1alpha1"
	"github.com/clever-operator/clever-operator/api/v1beta1"
	"github.com/clever-operator/clever-operator/internal/kinds"
)

// helmOwned are the status fields the Helm reconciler writes: it rebuilds status as
// {conditions, deployedRelease}, which would erase every other field.
var helmOwned = []string{"conditions", "deployedRelease"}

// engineOwned are the status fields the engine writes: every field of the add-on kinds'
// status types (api/) but Helm's own. Derived from the types, so a field added to a kind's
// status is kept from the Helm side's writes without anything else to change.
var engineOwned = statusFields(kinds.Kinds, helmOwned)

// statusFields lists the JSON names of the status fields of ks's Go types, without except.
func statusFields(ks []kinds.Kind, except []string) []string {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1.AddToScheme, v1alpha1.AddToScheme, v1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	set := map[string]bool{}
	for _, k := range ks {
		obj, err := scheme.New(k.GVK)
		if err != nil {
			panic(fmt.Sprintf("kind %s has no Go type in api/: %v", k.GVK, err))
		}
		f, ok := reflect.TypeOf(obj).Elem().FieldByName("Status")
		if !ok {
			panic(fmt.Sprintf("kind %s has no Status field", k.GVK))
		}
		jsonFields(f.Type, set)
	}
	var out []string
	for name := range set {
		if !slices.Contains(except, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// jsonFields adds the JSON names of struct t's fields to set, inline structs flattened.
func jsonFields(t reflect.Type, set map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case name == "" && (f.Anonymous || strings.Contains(opts, "inline")):
			jsonFields(f.Type, set)
		case name != "":
			set[name] = true
		}
	}
}
