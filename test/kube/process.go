package kube

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clever-operator/clever-operator/test/kube/proc"
)

// MaxLogLevel is the zap level the operators run at: everything (the operator caps itself at
// internal/logging.MaxVerbosity), so a leak scan sees every line the operator can write.
const MaxLogLevel = 10

// OperatorOptions configures one operator process.
type OperatorOptions struct {
	// Name names the log file (<WorkDir>/<Name>.log); default "operator".
	Name string
	// Cred is the index of the credential set (Harness.Creds) the operator uses.
	Cred int
	// Args are extra flags (e.g. --resync-period=30s, --leader-elect).
	Args []string
	// Binary defaults to Harness.Binary.
	Binary string
	// Env, when not nil, is the operator's whole Clever Cloud configuration as environment
	// variables (e.g. CLEVER_TOKEN, CLEVER_SECRET and an endpoint ending in /v2, as Clever
	// Cloud's documentation shows), instead of the CLEVER_OPERATOR_API_* variables naming
	// Harness.Creds[Cred]. Either way no other CLEVER_* variable of the caller's environment
	// reaches the operator.
	Env []string
	// Cgroup, when set, is the memory cgroup the process runs in (a memory limit as a pod
	// has one); its executable is dropped from the page cache before each start, so that its
	// pages are charged to the group as a container's are.
	Cgroup *proc.MemoryCgroup
}

// Operator is an operator process that can be started, killed and restarted many times. Every
// start appends to the same log file (stdout and stderr), after a marker line.
type Operator struct {
	h       *Harness
	o       OperatorOptions
	LogPath string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	err    error
	starts int
}

// NewOperator prepares (does not start) an operator process against the harness.
func (h *Harness) NewOperator(o OperatorOptions) *Operator {
	if o.Name == "" {
		o.Name = "operator"
	}
	if o.Binary == "" {
		o.Binary = h.Binary
	}
	return &Operator{h: h, o: o, LogPath: filepath.Join(h.WorkDir, o.Name+".log")}
}

// WithoutClever drops the CLEVER_* variables (the operator's configuration and the aliases
// Clever Cloud's own tools read) from an environment.
func WithoutClever(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CLEVER_") {
			out = append(out, kv)
		}
	}
	return out
}

// SetEnv replaces the configuration environment of the next start (see OperatorOptions.Env).
func (op *Operator) SetEnv(env ...string) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.o.Env = env
}

// Args returns the command line of the next start.
func (op *Operator) Args() []string {
	args := []string{
		"--kubeconfig=" + op.h.OperatorKubeconfig,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=0",
		"--zap-log-level=" + strconv.Itoa(MaxLogLevel),
	}
	return append(args, op.o.Args...)
}

// SetCgroup sets the memory cgroup of the next start (nil: none).
func (op *Operator) SetCgroup(g *proc.MemoryCgroup) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.o.Cgroup = g
}

// SetArgs replaces the extra flags for the next start.
func (op *Operator) SetArgs(args ...string) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.o.Args = args
}

// Start starts the process (an error if it is running).
func (op *Operator) Start() error {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.cmd != nil && !op.exitedLocked() {
		return errors.New("operator " + op.o.Name + " is already running")
	}
	if op.o.Cred >= len(op.h.Creds) {
		return fmt.Errorf("operator %s: no credential set %d", op.o.Name, op.o.Cred)
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if op.starts == 0 {
		flags |= os.O_TRUNC // a new Operator starts a new log; restarts append to it
	}
	logf, err := os.OpenFile(op.LogPath, flags, 0o600)
	if err != nil {
		return err
	}
	op.starts++
	fmt.Fprintf(logf, "=== harness: start %d of %s at %s ===\n", op.starts, op.o.Name, time.Now().Format(time.RFC3339Nano))
	c := op.h.Creds[op.o.Cred]
	argv := append([]string{op.o.Binary}, op.Args()...)
	if op.o.Cgroup != nil {
		if err := proc.DropFromPageCache(op.o.Binary); err != nil {
			logf.Close()
			return fmt.Errorf("dropping %s from the page cache: %w", op.o.Binary, err)
		}
		argv = op.o.Cgroup.Wrap(argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = op.h.Root
	// The claim key stays across restarts, as the operator's claim key Secret does in a
	// cluster: what an operator signed, the next one verifies.
	cmd.Env = append(WithoutClever(os.Environ()), "KUBECONFIG="+op.h.OperatorKubeconfig, "CLEVER_OPERATOR_CLAIM_KEY="+claimKey)
	if op.o.Env != nil {
		cmd.Env = append(cmd.Env, op.o.Env...)
	} else {
		cmd.Env = append(cmd.Env,
			"CLEVER_OPERATOR_API_ENDPOINT="+op.h.Endpoint,
			"CLEVER_OPERATOR_API_CONSUMER_KEY="+c.ConsumerKey,
			"CLEVER_OPERATOR_API_CONSUMER_SECRET="+c.ConsumerSecret,
			"CLEVER_OPERATOR_API_TOKEN="+c.Token,
			"CLEVER_OPERATOR_API_SECRET="+c.Secret,
		)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if op.o.Cgroup != nil {
		// Through a pipe, as a container's output goes to its runtime: written to the file
		// by this process, the log's page cache is not charged to the operator's group.
		w := struct{ io.Writer }{logf}
		cmd.Stdout, cmd.Stderr = w, w
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("starting %s: %w", op.o.Binary, err)
	}
	done := make(chan struct{})
	op.cmd, op.done, op.err = cmd, done, nil
	go func() {
		err := cmd.Wait()
		logf.Close()
		op.mu.Lock()
		op.err = err
		op.mu.Unlock()
		close(done)
	}()
	return nil
}

func (op *Operator) exitedLocked() bool {
	select {
	case <-op.done:
		return true
	default:
		return false
	}
}

// Running says whether the process is alive.
func (op *Operator) Running() bool {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.cmd != nil && !op.exitedLocked()
}

// Starts returns how many times the process was started.
func (op *Operator) Starts() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.starts
}

// Done is closed when the current process exits (nil before the first start).
func (op *Operator) Done() <-chan struct{} {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.done
}

// ExitErr is the current process's exit error once it exited.
func (op *Operator) ExitErr() error {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.err
}

// PID returns the process id (0 if never started).
func (op *Operator) PID() int {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.cmd == nil || op.cmd.Process == nil {
		return 0
	}
	return op.cmd.Process.Pid
}

// Kill sends SIGKILL and waits for the process to be gone.
func (op *Operator) Kill() error { return op.signal(syscall.SIGKILL, 10*time.Second) }

// Stop sends SIGTERM, and SIGKILL after timeout.
func (op *Operator) Stop(timeout time.Duration) error {
	if err := op.signal(syscall.SIGTERM, timeout); err != nil {
		return op.Kill()
	}
	return nil
}

// Restart kills the process if running and starts it again.
func (op *Operator) Restart() error {
	if err := op.Kill(); err != nil {
		return err
	}
	return op.Start()
}

func (op *Operator) signal(sig syscall.Signal, wait time.Duration) error {
	op.mu.Lock()
	cmd, done := op.cmd, op.done
	op.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
		return nil
	case <-time.After(wait):
		return fmt.Errorf("operator %s did not exit within %s of %s", op.o.Name, wait, sig)
	}
}

// CPUTime returns the user+system CPU time the current process has used so far.
func (op *Operator) CPUTime() (time.Duration, error) {
	pid := op.PID()
	if pid == 0 {
		return 0, errors.New("operator not started")
	}
	return proc.ProcessCPUTime(pid)
}

// MajorFaults returns the major page faults of the current process so far (pages it waited
// for the kernel to read from a file, such as its executable's after reclaim).
func (op *Operator) MajorFaults() (int64, error) {
	pid := op.PID()
	if pid == 0 {
		return 0, errors.New("operator not started")
	}
	return proc.ProcessMajorFaults(pid)
}

// Memory returns the current (VmRSS) and peak (VmHWM) resident set size of the current
// process, in bytes.
func (op *Operator) Memory() (rss, peak int64, err error) {
	pid := op.PID()
	if pid == 0 {
		return 0, 0, errors.New("operator not started")
	}
	return proc.ProcessMemory(pid)
}

// MemoryDetail reads the current process's MemoryDetail.
func (op *Operator) MemoryDetail() (proc.MemoryDetail, error) {
	pid := op.PID()
	if pid == 0 {
		return proc.MemoryDetail{}, errors.New("operator not started")
	}
	return proc.ProcessMemoryDetail(pid)
}

// claimKey is the claim key of every operator this process starts (one per test process, as
// one claim key Secret per cluster).
var claimKey = func() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}()
