// Package configdrive writes the per-VM config drive that bosh.io's
// OpenStack stemcells read their agent settings from, so that they boot
// unmodified on CloudStack KVM zones.
//
// The stemcell's agent.json (bosh-linux-stemcell-builder, stage
// bosh_openstack_agent_settings) has a ConfigDrive settings source on
// /dev/disk/by-label/CONFIG-2, then config-2, reading UserDataPath
// "ec2/latest/user-data" as the settings JSON and MetaDataPath
// "ec2/latest/meta-data.json" for the public key. bosh-agent mounts the
// device and reads the files by their Rock Ridge names. CloudStack's own
// config drive (ConfigDriveBuilder) has neither path, so the CPI writes
// this image itself: ISO 9660, Rock Ridge, volume label CONFIG-2 (tried
// first, and never equal to CloudStack's "config-2").
//
// The settings carry the mbus and blobstore credentials: no error of this
// package holds any of their content, and every temporary file is removed
// on every path, failures included.
package configdrive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

const (
	// Label is the ISO's volume identifier, the name udev gives the
	// device under /dev/disk/by-label.
	Label = "CONFIG-2"
	// UserDataPath is where the agent reads its settings JSON.
	UserDataPath = "ec2/latest/user-data"
	// MetaDataPath is where the agent's ConfigDrive source reads the
	// instance's public key.
	MetaDataPath = "ec2/latest/meta-data.json"

	// MaxSettingsSize bounds the settings JSON. Neither side of the
	// transfer bounds it usefully: CloudStack takes ISOs of up to
	// max.template.iso.size, 50 GB by default (Config.MaxTemplateAndIsoSize,
	// set as the upload's maxUploadSize by
	// HypervisorTemplateAdapter.postUploadAllocation and checked in whole
	// GB by NfsSecondaryStorageResource.createUploadEntity), and the agent
	// reads the file whole (diskUtil.GetFilesContents, fs.ReadFile). The
	// bound is the largest user data CloudStack lets reach any VM, the
	// 1048576 the description of vm.userdata.max.length gives as its
	// maximum (UserDataManager.VM_USERDATA_MAX_LENGTH); settings are a few
	// KB, tens with certificates, so anything larger is a mistake.
	MaxSettingsSize = 1 << 20
)

// ErrBadInput is wrapped by every refusal of the input.
var ErrBadInput = errors.New("config drive")

// MetaData is what meta-data.json carries. bosh-agent's ConfigDrive source
// reads it as infrastructure.MetadataContentsType: "public-keys", of which
// only "0"'s "openssh-key" is used, and "instance-id", and fails when the
// file is missing. On the OpenStack stemcell that source is never asked
// for the key (its File source, listed first, answers "no key"), so the
// file is written for the source's contract, not for today's stemcells.
type MetaData struct {
	InstanceID string
	// PublicKey is an OpenSSH public key for vcap; empty for none.
	PublicKey string
}

// metaDataJSON is meta-data.json, with the keys of
// infrastructure.MetadataContentsType.
type metaDataJSON struct {
	InstanceID string                       `json:"instance-id"`
	PublicKeys map[string]map[string]string `json:"public-keys,omitempty"`
}

// JSON is the content of meta-data.json: the public keys only when a key
// is given, which the agent reads as "no key".
func (m MetaData) JSON() ([]byte, error) {
	doc := metaDataJSON{InstanceID: m.InstanceID}
	if m.PublicKey != "" {
		doc.PublicKeys = map[string]map[string]string{"0": {"openssh-key": m.PublicKey}}
	}
	return json.Marshal(doc)
}

// check refuses what the agent could not use, naming only sizes.
func check(settings []byte, md MetaData) error {
	if err := checkSettings(settings); err != nil {
		return err
	}
	if md.InstanceID == "" {
		return fmt.Errorf("%w: no instance id for %s", ErrBadInput, MetaDataPath)
	}
	return nil
}

// checkSettings refuses settings the agent could not read, naming only
// their size.
func checkSettings(settings []byte) error {
	switch {
	case len(settings) == 0:
		return fmt.Errorf("%w: the agent settings are empty", ErrBadInput)
	case len(settings) > MaxSettingsSize:
		return fmt.Errorf("%w: the agent settings are %d bytes, more than the %d bytes (1 MiB) a config drive takes",
			ErrBadInput, len(settings), MaxSettingsSize)
	case !isJSONObject(settings):
		// The agent unmarshals the file into settings.Settings; say no more
		// than that, since a parser's message quotes the content.
		return fmt.Errorf("%w: the agent settings (%d bytes) are not a JSON object", ErrBadInput, len(settings))
	}
	return nil
}

func isJSONObject(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(b)
}

// Image is a config drive ISO built in a private temporary directory.
// Close removes it.
type Image struct {
	dir  string
	path string
	size int64
}

// Path is the ISO file, for a server that hands it out by name.
func (i *Image) Path() string { return i.path }

// Size is the ISO's length in bytes, the secondary storage it takes.
func (i *Image) Size() int64 { return i.size }

// WriteTo streams the ISO to w.
func (i *Image) WriteTo(w io.Writer) (int64, error) {
	f, err := os.Open(i.path)
	if err != nil {
		return 0, fmt.Errorf("opening the config drive image: %w", err)
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	if err != nil {
		return n, fmt.Errorf("writing the config drive image: %w", err)
	}
	return n, nil
}

// Close removes the image and its directory.
func (i *Image) Close() error { return os.RemoveAll(i.dir) }

// Write builds the ISO in tmpDir, streams it to w and removes it.
func Write(w io.Writer, tmpDir string, settings []byte, md MetaData) (n int64, err error) {
	img, err := Build(tmpDir, settings, md)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := img.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("removing the config drive image: %w", cerr)
		}
	}()
	return img.WriteTo(w)
}

// Build writes the ISO into a new directory under tmpDir ("" for the
// system's), readable by this user only. On error nothing is left behind.
func Build(tmpDir string, settings []byte, md MetaData) (*Image, error) {
	if err := check(settings, md); err != nil {
		return nil, err
	}
	meta, err := md.JSON()
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", MetaDataPath, err)
	}
	return build(tmpDir, "config-2.iso", Label, map[string][]byte{UserDataPath: settings, MetaDataPath: meta})
}

// build writes files into an ISO named name in a new private directory
// under tmpDir; on error nothing is left behind.
func build(tmpDir, name, label string, files map[string][]byte) (img *Image, err error) {
	dir, err := os.MkdirTemp(tmpDir, "configdrive-")
	if err != nil {
		return nil, fmt.Errorf("creating the config drive's temporary directory: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	isoPath := filepath.Join(dir, name)
	size, err := writeISO(isoPath, filepath.Join(dir, "workspace"), label, files)
	if err != nil {
		return nil, err
	}
	return &Image{dir: dir, path: isoPath, size: size}, nil
}
