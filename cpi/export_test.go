package cpi

import "time"

// SetRegistryBackoff makes the registry's retries wait d, for tests of
// failing registry writes; the returned func restores the wait.
func SetRegistryBackoff(d time.Duration) (restore func()) {
	old := registryBackoff
	registryBackoff = d
	return func() { registryBackoff = old }
}
