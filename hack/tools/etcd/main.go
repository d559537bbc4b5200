// Command etcd is built from the Go module proxy for envtest; see the Makefile target envtest-bins.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
