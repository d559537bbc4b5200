package operator

import (
	"crypto/tls"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// MetricsConfig says how /metrics is served.
type MetricsConfig struct {
	// BindAddress of the endpoint; "0" disables it.
	BindAddress string
	// Secure serves HTTPS and lets in only requests whose bearer token the API server
	// authenticates (TokenReview) and authorizes for GET /metrics (SubjectAccessReview), as
	// kubebuilder scaffolds. False serves plain HTTP to anyone (for tests and local runs).
	Secure bool
	// CertPath is a directory holding CertName and KeyName (e.g. a cert-manager Secret
	// mounted there); empty: a self-signed certificate generated in memory at start-up.
	CertPath, CertName, KeyName string
	// EnableHTTP2 keeps HTTP/2 on; off by default (HTTP/2 Rapid Reset, CVE-2023-44487).
	EnableHTTP2 bool
}

// MetricsServerOptions turns c into controller-runtime's metrics server options.
func MetricsServerOptions(c MetricsConfig) metricsserver.Options {
	o := metricsserver.Options{BindAddress: c.BindAddress, SecureServing: c.Secure}
	if !c.EnableHTTP2 {
		o.TLSOpts = append(o.TLSOpts, func(cfg *tls.Config) { cfg.NextProtos = []string{"http/1.1"} })
	}
	if c.Secure {
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
		if c.CertPath != "" {
			o.CertDir = filepath.Clean(c.CertPath)
			o.CertName, o.KeyName = c.CertName, c.KeyName
		}
	}
	return o
}
