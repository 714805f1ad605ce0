package marks

import (
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// How long a creating call can still run after it made what it marks: past
// that, its mark names a call that has ended, whatever happened to it.

// TemplateLifetime bounds how long a create_stemcell can run after it
// created its template (an incomplete mark's Until): the stemcell timeout,
// then deleting what failed (a job), then margin for the requests around
// them.
func TemplateLifetime(cfg config.Config) time.Duration {
	return cfg.Stemcell.Timeout.D() + cfg.CloudStack.JobTimeout.D() + 15*time.Minute
}

// ISOLifetime bounds how long a create_vm can run after it created its
// config drive ISO: the wait for the ISO, the jobs of the deploy, attach,
// start and a cleanup, and margin for the requests around them.
func ISOLifetime(cfg config.Config) time.Duration {
	return cfg.Stemcell.ConfigDriveTimeout.D() + 4*cfg.CloudStack.JobTimeout.D() + 15*time.Minute
}

// CreateDiskLifetime bounds how long a create_disk call can still be
// running after it made its volume: its job's timeout and a few requests
// (a request's timeout covers its retries), plus a second for CloudStack's
// times, which it gives in whole seconds.
func CreateDiskLifetime(cfg config.CloudStack) time.Duration {
	return cfg.JobTimeout.D() + 5*cfg.RequestTimeout.D() + time.Second
}
