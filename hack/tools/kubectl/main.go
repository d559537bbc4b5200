// Command kubectl is built from the Go module proxy for the whole-cluster suites, which run
// `make deploy` as written with it (KUBECTL); see the Makefile target cluster-bins.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
