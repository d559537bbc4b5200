// Command kube-scheduler is built from the Go module proxy for the whole-cluster test helper
// (test/kube/cluster/cluster.go); see the Makefile target cluster-bins.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
