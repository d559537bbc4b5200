// Package plugin is kubectl-clever, the kubectl plugin of clever-operator (docs/plugin.md):
//
//	kubectl clever import   write manifests bound to an organisation's existing add-ons
//	kubectl clever status   one table over every kind: Ready, reason, add-on, plan, ...
//	kubectl clever trace    a resource's conditions, events and Clever Cloud calls
//
// Its command is internal/plugin/kubectl-clever (make plugin builds bin/kubectl-clever), a
// binary apart from the operator's: it shares the operator's configuration loading, kind table
// and API client, not the operator itself.
package plugin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Name is the binary's name, as kubectl finds plugins (kubectl clever → kubectl-clever).
const Name = "kubectl-clever"

// Env is what a command runs with: the process's by default (Main), a test's otherwise.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	// Getenv looks environment variables up (import's credentials); nil: os.Getenv.
	Getenv func(string) string
	// RESTConfig, when set, is used instead of the kubeconfig (tests).
	RESTConfig *rest.Config
	// Now is the clock of ages; nil: time.Now.
	Now func() time.Time
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Env) getenv(k string) string {
	if e.Getenv != nil {
		return e.Getenv(k)
	}
	return os.Getenv(k)
}

// Main runs the plugin with the process's arguments and streams and returns the exit code:
// 0, or 1 after one readable line on stderr.
func Main(args []string) int {
	env := &Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin}
	if err := Run(context.Background(), args, env); err != nil {
		fmt.Fprintln(os.Stderr, Name+": "+strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	return 0
}

const usage = `kubectl clever: clever-operator's kubectl plugin

Commands:
  import [ID|NAME...]  write manifests bound to an organisation's existing add-ons (0 creates)
  status               one table over every clever-operator kind: Ready, reason, add-on, plan,
                       last backup, credentials age
  trace NAME           a resource's conditions, events and the Clever Cloud calls made for it

Run "kubectl clever COMMAND -h" for a command's flags. docs/plugin.md has examples.
`

// Run runs one command.
func Run(ctx context.Context, args []string, env *Env) error {
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return errors.New("no command given (import, status or trace)")
	}
	var err error
	switch args[0] {
	case "import":
		err = runImport(ctx, args[1:], env)
	case "status":
		err = runStatus(ctx, args[1:], env)
	case "trace":
		err = runTrace(ctx, args[1:], env)
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q (import, status or trace)", args[0])
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// newFlags is a command's flag set: a parse error is returned (one line); -h prints help and
// the flags to stdout.
func newFlags(name string, env *Env) *flag.FlagSet {
	fs := flag.NewFlagSet("kubectl clever "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses flags and positional arguments in any order (kubectl style: `trace NAME -n ns`).
func parse(fs *flag.FlagSet, args []string, help string, env *Env) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(env.Stdout, help)
				fs.SetOutput(env.Stdout)
				fs.PrintDefaults()
			}
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// kubeFlags are the cluster connection flags of status and trace.
type kubeFlags struct {
	kubeconfig, context, namespace string
}

func (k *kubeFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&k.context, "context", "", "kubeconfig context (default: the current one)")
	fs.StringVar(&k.namespace, "namespace", "", "namespace (default: the context's)")
	fs.StringVar(&k.namespace, "n", "", "shorthand for --namespace")
}

// config returns the REST config and the namespace (the flag, else the context's, else
// "default").
func (k *kubeFlags) config(env *Env) (*rest.Config, string, error) {
	if env.RESTConfig != nil {
		ns := k.namespace
		if ns == "" {
			ns = "default"
		}
		return env.RESTConfig, ns, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("no Kubernetes configuration: %w", err)
	}
	ns := k.namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	return cfg, ns, nil
}

// age formats a duration as kubectl does (45s, 12m, 5h, 3d).
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}
