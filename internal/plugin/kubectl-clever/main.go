// Command kubectl-clever is clever-operator's kubectl plugin (internal/plugin, docs/plugin.md).
// make plugin builds it to bin/kubectl-clever. It is a binary of its own: it links neither the
// operator (internal/operator, the Helm side) nor is it linked into the operator's binary.
package main

import (
	"os"

	"github.com/clever-operator/clever-operator/internal/plugin"
)

func main() {
	os.Exit(plugin.Main(os.Args[1:]))
}
