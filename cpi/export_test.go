package cpi

import "time"

// SetRegistryBackoff makes the registry's retries wait d, for tests of
// failing registry writes; the returned func restores the wait.
func SetRegistryBackoff(d time.Duration) (restore func()) {
	old := registryBackoff
	registryBackoff = d
	return func() { registryBackoff = old }
}

// SetUploadPatience bounds the cleanups' wait for CloudStack to settle an
// upload at d, for tests of an upload that does not settle in time; the
// returned func restores the bound.
func SetUploadPatience(d time.Duration) (restore func()) {
	old := uploadSettlePatience
	uploadSettlePatience = d
	return func() { uploadSettlePatience = old }
}
