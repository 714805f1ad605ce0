package doctor

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// settingUploadInterval is how often CloudStack's upload monitor asks the
// secondary storage VM about POSTed images (ImageStoreUploadMonitorImpl,
// whole seconds, 60 by default): an upload is ready only at the next poll
// after its bytes are in.
const settingUploadInterval = "upload.monitoring.interval"

// checkUploads sets the upload monitor's interval against the CPI's waits
// for uploaded images: stemcell.timeout for stemcells, and
// stemcell.config_drive_timeout for config drives, when they are uploaded.
func (r *run) checkUploads() {
	s := r.cfg.Stemcell
	waits := map[string]time.Duration{}
	if s.Publish == config.PublishUpload {
		waits["stemcell.timeout"] = s.Timeout.D()
	}
	if s.ConfigDriveOn() && s.ConfigDrivePublish == config.PublishUpload {
		waits["stemcell.config_drive_timeout"] = s.ConfigDriveTimeout.D()
	}
	if len(waits) == 0 {
		r.pass(CheckUploads, "not used: stemcells and config drives are downloaded by URL")
		return
	}
	value, err := r.cloud.Setting(settingUploadInterval)
	if cloudstack.IsPermissionDenied(err) {
		r.unchecked(CheckUploads, "only admins may read "+settingUploadInterval, "have an admin check that "+
			settingUploadInterval+" (60 s by default) is at most half of "+joinKeys(waits))
		return
	}
	seconds, perr := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || perr != nil {
		r.fail(CheckUploads, fmt.Sprintf("reading %s: %v", settingUploadInterval, firstErr(err, perr)),
			"check the setting by hand")
		return
	}
	interval := time.Duration(seconds) * time.Second
	result := fmt.Sprintf("%s is %s: an upload is ready up to that long after its bytes are in", settingUploadInterval, interval)
	for _, key := range []string{"stemcell.timeout", "stemcell.config_drive_timeout"} {
		if wait, ok := waits[key]; ok && wait < 2*interval {
			r.fail(CheckUploads, fmt.Sprintf("%s; %s is only %s", result, key, wait),
				fmt.Sprintf("raise %s to at least %s, or lower %s", key, 2*interval, settingUploadInterval))
			return
		}
	}
	r.pass(CheckUploads, result+"; "+joinKeys(waits)+" leave room")
}

func joinKeys(waits map[string]time.Duration) string {
	var keys []string
	for _, key := range []string{"stemcell.timeout", "stemcell.config_drive_timeout"} {
		if wait, ok := waits[key]; ok {
			keys = append(keys, fmt.Sprintf("%s (%s)", key, wait))
		}
	}
	return strings.Join(keys, " and ")
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
