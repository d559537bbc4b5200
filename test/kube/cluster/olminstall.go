package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CatalogPackage is what a file-based catalog directory (catalog/) offers: one package, its
// default channel, and its newest bundle (CSV name and image).
type CatalogPackage struct {
	Package, Channel, CSV, BundleImage string
}

// ReadCatalog reads the package of the catalog directory dir (one package, as catalog/ holds).
func ReadCatalog(dir string) (CatalogPackage, error) {
	var out CatalogPackage
	files, err := filepath.Glob(filepath.Join(dir, "*", "index.yaml"))
	if err != nil || len(files) != 1 {
		return out, fmt.Errorf("%s: want one package (*/index.yaml), found %d (%v)", dir, len(files), err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return out, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		doc := map[string]any{}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return out, fmt.Errorf("decoding %s: %w", files[0], err)
		}
		s := func(k string) string { v, _ := doc[k].(string); return v }
		switch s("schema") {
		case "olm.package":
			out.Package, out.Channel = s("name"), s("defaultChannel")
		case "olm.bundle":
			out.CSV, out.BundleImage = s("name"), s("image") // the last one: the newest, as opm renders them
		}
	}
	if out.Package == "" || out.Channel == "" || out.CSV == "" || out.BundleImage == "" {
		return out, fmt.Errorf("%s names no package, default channel or bundle: %+v", files[0], out)
	}
	return out, nil
}

// CSVPhase is the phase of ClusterServiceVersion namespace/name ("" when it does not exist).
func CSVPhase(ctx context.Context, c client.Client, namespace, name string) string {
	csv := &unstructured.Unstructured{}
	csv.SetGroupVersionKind(CSVGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, csv); err != nil {
		return ""
	}
	phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase")
	return phase
}

// SubscribeAllNamespaces installs pkg through OLM as a user of OperatorHub does for all
// namespaces: a Subscription in the global operators namespace (its OperatorGroup selects every
// namespace), installed automatically; it waits until the CSV is Succeeded (within timeout).
func SubscribeAllNamespaces(ctx context.Context, o *OLM, catalogSource string, pkg CatalogPackage, timeout time.Duration) error {
	sub := NewSubscription(o.OperatorsNamespace, pkg.Package, pkg.Package, pkg.Channel, catalogSource, o.Namespace, "Automatic")
	if err := o.Client.Create(ctx, sub); err != nil {
		return fmt.Errorf("creating the Subscription: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return poll(ctx, time.Second, func() (bool, error) {
		return CSVPhase(ctx, o.Client, o.OperatorsNamespace, pkg.CSV) == "Succeeded", nil
	})
}
