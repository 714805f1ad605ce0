package marks_test

import (
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// TestLifetimesFollowTheTimeouts: a mark outlives the longest its call can
// run, as the configured timeouts bound it.
func TestLifetimesFollowTheTimeouts(t *testing.T) {
	var cfg config.Config
	cfg.CloudStack.JobTimeout = config.Duration(2 * time.Minute)
	cfg.CloudStack.RequestTimeout = config.Duration(10 * time.Second)
	cfg.Stemcell.Timeout = config.Duration(time.Hour)
	cfg.Stemcell.ConfigDriveTimeout = config.Duration(5 * time.Minute)
	for _, c := range []struct {
		what      string
		got, want time.Duration
	}{
		{"template", marks.TemplateLifetime(cfg), time.Hour + 2*time.Minute + 15*time.Minute},
		{"config drive ISO", marks.ISOLifetime(cfg), 5*time.Minute + 8*time.Minute + 15*time.Minute},
		{"create_disk", marks.CreateDiskLifetime(cfg.CloudStack), 2*time.Minute + 50*time.Second + time.Second},
	} {
		if c.got != c.want {
			t.Errorf("%s: lifetime %s, want %s", c.what, c.got, c.want)
		}
	}
}

// TestVMTagsSayWhatCreateVMMade: the tags create_vm gives a VM say
// whether it had load-balancer rules and a settings ISO.
func TestVMTagsSayWhatCreateVMMade(t *testing.T) {
	tags := map[string]string{marks.LBTag: "true", marks.ConfigDriveTag: "true"}
	if !marks.HadLBs(tags) || !marks.HadConfigDrive(tags) || marks.HadLBs(nil) || marks.HadConfigDrive(nil) {
		t.Errorf("HadLBs/HadConfigDrive misread %v", tags)
	}
}
