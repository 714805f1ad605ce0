package template

import (
	"net"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// Plumbing: the SSVM value only carries what the transfers need; the
// behaviour it runs is cited in templates_download.go, upload.go and
// upload_monitor.go (e.g. NfsSecondaryStorageResource.postUpload).

// SSVM is the secondary storage VM's side of the template family (what
// CloudStack's SSVM agent does for DownloadCommand, the POST upload servlet
// and CopyCommand): downloads, uploads and copies, which move bytes outside
// the state lock. The Options it is built from are the Server's.
type SSVM struct {
	*kernel.Engine
	AllowLoopbackURLs                             bool
	TemplateLatency                               time.Duration
	UploadMonitorInterval, UploadOperationTimeout time.Duration
	// SSVMSites are the networks the secondary storage VM routes to through
	// the management network: secstorage.allowed.internal.sites as it was at
	// start (templates_register.go).
	SSVMSites []*net.IPNet
}

// ssvmOf is the SSVM a call's template commands start work on.
func ssvmOf(c *kernel.Call) *SSVM { return c.Engine.Ext.(*SSVM) }
