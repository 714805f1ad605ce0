package cpi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/configdrive"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
	"github.com/bosh-cloudstack/cloudstack-cpi/webdav"
)

// configDrives is the part behind the per-VM config drive ISO of
// bosh.io's OpenStack KVM stemcells: their agent reads its settings from a
// CONFIG-2 drive, not from CloudStack's user data. The ISO is named after
// the VM (its host name) and carries the CPI's mark in its display text,
// incomplete until the VM has started with it, so that what an interrupted
// create_vm left is found by the next one's sweep and by delete_vm.
type configDrives struct {
	callDeps
	cloud configDriveCloud
	// settle is set by create_vm's cleanup only: how long a delete
	// CloudStack refuses while it settles the ISO's upload is tried again,
	// after which an ISO still there is an error, for create_vm answers
	// ok_to_retry only when nothing is left. The sweep and delete_vm leave
	// such an ISO to the next sweep at once.
	settle time.Duration
}

// madeDrive is what create made: the ISO's id once CloudStack answered,
// asked once the creating call was sent (its answer may be lost with the
// ISO made), and stop, which ends serving the image.
type madeDrive struct {
	id    string
	asked bool
	stop  func()
}

// configDriveCloud is what the config drive part asks of CloudStack.
type configDriveCloud interface {
	cloudstack.ISOs
	cloudstack.Uploader
}

// isoText is the ISO's display text before its mark: what the ISO is to
// the VM's agent, for an operator reading listIsos.
func isoText(vmName string, kind settingsDrive) string {
	what := "config drive"
	if kind == cdromDrive {
		what = "CD-ROM env"
	}
	return "BOSH agent settings (" + what + ") of VM " + vmName
}

// isoMark is this director's mark on the ISO of agentID's VM.
func (c configDrives) isoMark(agentID string, incomplete bool) marks.Template {
	m := marks.Template{Director: c.ctx.DirectorUUID, Agent: agentID}
	if incomplete {
		m.Incomplete, m.Owner, m.Until = true, marks.ThisProcess(), time.Now().Add(marks.ISOLifetime(c.cfg))
	}
	return m
}

// create builds the ISO of the settings and has CloudStack take it, by
// upload or from this process's WebDAV server; what was made comes back
// also with an error, so that the caller removes it. Neither the settings
// nor the image is ever logged.
func (c configDrives) create(vmName, agentID string, settings agentSettings, zoneID string,
	kind settingsDrive) (madeDrive, error) {
	raw, err := json.Marshal(settings)
	if err != nil {
		return madeDrive{}, err
	}
	img, err := buildDrive(kind, raw, vmName)
	if err != nil {
		if errors.Is(err, configdrive.ErrBadInput) {
			return madeDrive{}, vmCreationRefused(fmt.Errorf("VM %s: %w", vmName, err))
		}
		return madeDrive{}, err
	}
	spec := cloudstack.ISOSpec{Name: vmName, DisplayText: c.isoMark(agentID, true).Apply(isoText(vmName, kind)), ZoneID: zoneID}
	c.logger.Info("vm", "VM %s: config drive ISO of %d bytes, by %s", vmName, img.Size(), c.cfg.Stemcell.ConfigDrivePublish)
	if c.cfg.Stemcell.ConfigDrivePublish == config.PublishWebDAV {
		return c.register(spec, img)
	}
	c.logger.Info("vm", "VM %s: its config drive ISO is usable once CloudStack's upload monitor sees the upload "+
		"(every upload.monitoring.interval, 60 s by default); with webdav.listen set, CloudStack downloads it from "+
		"this CPI instead (registerIso), which is ready in seconds", vmName)
	defer c.discard(img)
	id, err := c.upload(spec, img)
	return madeDrive{id: id, asked: true, stop: func() {}}, err
}

// buildDrive writes the image the stemcell's agent reads: a CONFIG-2
// config drive, or the vSphere stemcell's CD-ROM with env.
func buildDrive(kind settingsDrive, settings []byte, vmName string) (*configdrive.Image, error) {
	if kind == cdromDrive {
		return configdrive.BuildEnv(os.TempDir(), settings)
	}
	return configdrive.Build(os.TempDir(), settings, configdrive.MetaData{InstanceID: vmName})
}

// upload creates the ISO and POSTs its bytes: the same streamed POST as a
// stemcell's, the file part named *.iso as the SSVM checks
// (NfsSecondaryStorageResource.postUpload).
func (c configDrives) upload(spec cloudstack.ISOSpec, img *configdrive.Image) (string, error) {
	up, err := c.cloud.ISOUploadParams(spec)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Stemcell.ConfigDriveTimeout.D())
	defer cancel()
	target := stemcell.UploadTarget{URL: up.PostURL, Signature: up.Signature, Metadata: up.Metadata, Expires: up.Expires}
	file := &stemcell.Image{Path: img.Path(), Size: img.Size(), Extension: ".iso"}
	err = stemcell.Upload(ctx, c.cloud.UploadClient(), target, file, spec.Name, stemcell.Progress{})
	if err != nil {
		return up.TemplateID, fmt.Errorf("uploading the config drive ISO %s of VM %s: %w", up.TemplateID, spec.Name, err)
	}
	return up.TemplateID, nil
}

// register serves the ISO on webdav.listen and has CloudStack's secondary
// storage VM download it (registerIso); the returned stop ends serving and
// removes the image once CloudStack has it or gave up.
func (c configDrives) register(spec cloudstack.ISOSpec, img *configdrive.Image) (madeDrive, error) {
	srv, err := webdav.Listen(c.cfg.WebDAV.Listen, c.cfg.WebDAV.PublicURL)
	if err != nil {
		c.discard(img)
		return madeDrive{}, err
	}
	stop := func() {
		if err := srv.Close(0); err != nil {
			c.logger.Warn("vm", "stopping the WebDAV server on %s: %v", srv.Addr(), err)
		}
		c.discard(img)
	}
	url, err := srv.Publish(img.Path(), spec.Name+".iso")
	if err != nil {
		stop()
		return madeDrive{}, err
	}
	id, err := c.cloud.RegisterISO(spec, url)
	if err != nil {
		stop()
		return madeDrive{asked: true}, err
	}
	return madeDrive{id: id, asked: true, stop: stop}, nil
}

// discard removes the image's temporary files, which hold the settings.
func (c configDrives) discard(img *configdrive.Image) {
	if err := img.Close(); err != nil {
		c.logger.Error("vm", "removing the config drive image's temporary files: %v", err)
	}
}

// ready waits for CloudStack to have the ISO: a start with an ISO that has
// no ready copy fails (TemplateManagerImpl.prepareIsoForVmProfile).
func (c configDrives) ready(id string) error {
	if err := c.cloud.WaitISO(id, c.cfg.Stemcell.ConfigDriveTimeout.D()); err != nil {
		return fmt.Errorf("the config drive ISO %s: %w", id, err)
	}
	return nil
}

// complete clears the ISO's incomplete mark once its VM has started.
func (c configDrives) complete(id, vmName, agentID string, kind settingsDrive) error {
	return c.cloud.SetISODisplayText(id, c.isoMark(agentID, false).Apply(isoText(vmName, kind)))
}

// remove deletes an ISO; gone already is done. One whose upload CloudStack
// has not settled yet (NotUploaded or UploadInProgress, until its upload
// monitor's next poll or its timeout) cannot be deleted now: it is tried
// again for patience, then it keeps its incomplete mark, and the next
// create_vm's sweep removes it, so it is reported as left (true) rather
// than as a failure.
func (c configDrives) remove(id string, patience time.Duration) (bool, error) {
	err := whileSettling(patience, cloudstack.IsISOBusy, func() error { return c.cloud.DeleteISO(id) },
		func(wait time.Duration) {
			c.logger.Info("vm", "config drive ISO %s: CloudStack is settling its upload; deleting it again in %s", id, wait)
		})
	switch {
	case err == nil || cloudstack.IsNoSuchEntity(err):
		return false, nil
	case cloudstack.IsISOBusy(err):
		c.logger.Warn("vm", "config drive ISO %s cannot be deleted while CloudStack settles its upload (%s): "+
			"the next create_vm removes it", id, err)
		return true, nil
	case cloudstack.IsISOInUse(err):
		// Its VM is Destroyed and this account may not expunge it.
		c.logger.Warn("vm", "config drive ISO %s stays until CloudStack expunges the VM it is attached to (%s)", id, err)
		return true, nil
	}
	return false, fmt.Errorf("deleting config drive ISO %s: %w", id, err)
}

// isosLeftError names the config drive ISOs create_vm's cleanup could not
// delete: they keep their incomplete mark for the next create_vm's sweep.
type isosLeftError struct{ ids []string }

func (e *isosLeftError) Error() string {
	return fmt.Sprintf("config drive ISO %s is left in CloudStack, marked incomplete: CloudStack refused to delete it "+
		"(an upload it has not settled, which it abandons after upload.operation.timeout, 60 minutes by default, or a "+
		"VM not yet expunged holds it); the next create_vm deletes it once CloudStack allows", strings.Join(e.ids, ", "))
}

// removeAll removes the ISOs; what CloudStack keeps is an isosLeftError
// when c.settle is set (create_vm's cleanup), else only logged.
func (c configDrives) removeAll(ids []string, patience time.Duration) error {
	var left []string
	for _, id := range ids {
		kept, err := c.remove(id, patience)
		if err != nil {
			return err
		}
		if kept {
			left = append(left, id)
		}
	}
	if len(left) > 0 && c.settle > 0 {
		return &isosLeftError{ids: left}
	}
	return nil
}

// named is this director's ISOs named after the VM: an interrupted or
// unanswered creation leaves one nobody has the id of.
func (c configDrives) named(vmName string) ([]string, error) {
	named, err := c.cloud.OwnISOs(vmName)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, iso := range named {
		if m, ok := iso.Mark(); ok && m.Director == c.ctx.DirectorUUID && !slices.Contains(ids, iso.ID) {
			ids = append(ids, iso.ID)
		}
	}
	return ids, nil
}

// ofVM deletes the ISOs of a VM being removed: the one attached, and any
// named after it (an interrupted create_vm may not have attached it yet).
// The VM is Destroyed or expunged by then, or its ISO was detached; its
// ISO's upload is settled unless create_vm's cleanup removes the VM, which
// waits for it (c.settle).
func (c configDrives) ofVM(vm *cloudstack.VM) error {
	ids, err := c.named(vm.Name)
	if err != nil {
		return err
	}
	if vm.ISOID != "" && !slices.Contains(ids, vm.ISOID) {
		ids = append(ids, vm.ISOID)
	}
	return c.removeAll(ids, c.settle)
}

// sweep deletes this director's ISOs left marked incomplete by create_vm
// calls that no longer run, or by an earlier attempt for the same agent.
// It never fails the call: what it cannot remove now, a later call does.
func (c configDrives) sweep(agentID string) {
	all, err := c.cloud.OwnISOs("")
	if err != nil {
		c.logger.Warn("vm", "looking for config drive ISOs that interrupted create_vm calls left: %s", err)
		return
	}
	now := time.Now()
	var removed []string
	for _, iso := range all {
		m, ok := iso.Mark()
		if !ok || !m.Incomplete || m.Director != c.ctx.DirectorUUID || (m.Agent != agentID && m.Running(now)) {
			continue
		}
		left, err := c.remove(iso.ID, 0)
		if err != nil {
			c.logger.Warn("vm", "config drive ISO %s, left by an interrupted create_vm: %s", iso.ID, err)
			continue
		}
		if !left {
			removed = append(removed, iso.ID)
		}
	}
	if len(removed) > 0 {
		c.logger.Info("vm", "removed %d config drive ISO(s) that interrupted create_vm calls left: %s", len(removed),
			strings.Join(removed, ", "))
	}
}
