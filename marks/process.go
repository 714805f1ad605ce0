package marks

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ThisProcess names the running CPI process in an incomplete mark
// ("<pid>@<host>"): a later call on the same host can tell whether it still
// runs.
func ThisProcess() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s", os.Getpid(), host)
}

// ProcessGone says the process ThisProcess named is certainly gone: it was
// on this host, and kill(pid, 0) finds no such process. Another host's
// process, or an unreadable name, is never taken for gone.
func ProcessGone(owner string) bool {
	pid, ok := localPID(owner)
	return ok && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// ProcessAlive says the process ThisProcess named is on this host and
// still runs (a reused pid reads as alive: what it spares waits). Another
// host's process, or an unreadable name, is never taken for alive.
func ProcessAlive(owner string) bool {
	pid, ok := localPID(owner)
	return ok && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// localPID is the pid of a process ThisProcess named on this host.
func localPID(owner string) (int, bool) {
	pidText, host, ok := strings.Cut(owner, "@")
	self, _ := os.Hostname()
	pid, err := strconv.Atoi(pidText)
	return pid, ok && err == nil && pid > 0 && host == self
}

// AttemptToken makes each create_stemcell's template name its own, so that
// after a lost answer the call finds exactly what it created.
func AttemptToken() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail on Linux
	return hex.EncodeToString(b)
}
