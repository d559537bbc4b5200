package cluster

import (
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// StartSuite, called from a BeforeSuite, starts a whole cluster (Start, with its audit log and
// its progress on GinkgoWriter; the suite is skipped when `make cluster-bins` has not built its
// binaries) and returns it with an admin client; it stops when the suite ends. The suite's own
// controller-runtime clients log to GinkgoWriter.
func StartSuite() (*Cluster, client.Client) {
	GinkgoHelper()
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	start := time.Now()
	c, err := Start(Options{AuditLog: true, Log: func(s string) { GinkgoWriter.Println(s) }})
	if errors.Is(err, ErrBinariesMissing) {
		Skip(err.Error())
	}
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(c.Stop()).To(Succeed()) })
	GinkgoWriter.Printf("cluster up in %s, logs in %s\n", time.Since(start).Round(time.Millisecond), c.WorkDir)
	k8s, err := client.New(c.Config, client.Options{})
	Expect(err).NotTo(HaveOccurred())
	return c, k8s
}
