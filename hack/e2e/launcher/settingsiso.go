package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"

	"github.com/bosh-cloudstack/cloudstack-cpi/configdrive"
)

// What bosh.io's OpenStack stemcell's agent.json (bosh-linux-stemcell-builder,
// stage bosh_openstack_agent_settings) has its ConfigDrive source look for:
// a disk labelled CONFIG-2, else config-2, holding configdrive.UserDataPath
// and configdrive.MetaDataPath.
const (
	userDataPath = configdrive.UserDataPath
	metaDataPath = configdrive.MetaDataPath
)

var driveLabels = []string{configdrive.Label, "config-2"}

// maxISO bounds what is read from the simulator: the CPI refuses settings
// above 1 MiB, which makes an ISO of about 1.1 MB.
const maxISO = 8 << 20

// errNoISO means the VM has no ISO attached (a VM of the CloudStack Xen
// stemcell, whose agent reads user data).
var errNoISO = errors.New("no ISO attached")

// fetchISO reads the ISO attached to the VM from the simulator's
// /metadata/<vm>/sim/iso, the CD-ROM the guest would see.
func (l *launcher) fetchISO(vmID string) ([]byte, error) {
	resp, err := l.http.Get(l.metadata + "/" + vmID + "/sim/iso")
	if err != nil {
		return nil, fmt.Errorf("reading the ISO of VM %s: %w", vmID, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, errNoISO
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("reading the ISO of VM %s: HTTP %d", vmID, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxISO+1))
	if err != nil {
		return nil, fmt.Errorf("reading the ISO of VM %s: %w", vmID, err)
	}
	if len(b) > maxISO {
		return nil, fmt.Errorf("the ISO of VM %s is larger than %d bytes", vmID, maxISO)
	}
	return b, nil
}

// disc is what a stemcell's agent reads from the VM's ISO: the files, by
// their path on the ISO, the one holding the settings JSON, where the
// launcher puts them in the agent's base directory, and the device path
// resolution that stemcell's agent.json sets.
type disc struct {
	Kind       string // "config drive" or "CD-ROM", for people
	Dir        string
	Files      map[string][]byte
	Settings   string
	Resolution string
}

// readDisc reads the ISO as the agent of the stemcell the CPI made it for
// would on the guest. A CONFIG-2 drive is bosh.io's OpenStack stemcell's
// (the ConfigDrive source finds it by label); any other ISO is read as
// bosh.io's vSphere stemcell's CD-ROM (its CDROM source mounts /dev/sr0
// whatever the label and reads configdrive.EnvFile). The settings must be
// a JSON object (and a config drive's meta data too). Errors name the file
// and what is wrong, never the content (it holds the mbus and blobstore
// credentials).
func readDisc(img []byte) (disc, error) {
	f, err := os.CreateTemp("", "settings-iso-*.iso")
	if err != nil {
		return disc{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(img); err != nil {
		return disc{}, err
	}
	iso, err := iso9660.Read(file.New(f, true), int64(len(img)), 0, 0)
	if err != nil {
		return disc{}, fmt.Errorf("not an ISO 9660 image: %w", err)
	}
	d := disc{Kind: "CD-ROM", Dir: "cdrom", Settings: configdrive.EnvFile, Resolution: "scsi"}
	names := []string{configdrive.EnvFile}
	label := strings.TrimRight(iso.Label(), "\x00 ")
	if slices.Contains(driveLabels, label) {
		d = disc{Kind: "config drive", Dir: "config-drive", Settings: userDataPath, Resolution: "virtio"}
		names = []string{userDataPath, metaDataPath}
	}
	d.Files = map[string][]byte{}
	for _, name := range names {
		b, err := readISOFile(iso, name)
		if err != nil {
			return d, fmt.Errorf("%w (the ISO's label is %q: the OpenStack stemcell's agent looks for %v, the vSphere "+
				"stemcell's reads %s whatever the label)", err, label, driveLabels, configdrive.EnvFile)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			return d, fmt.Errorf("%s on the %s (%d bytes) is not a JSON object", name, d.Kind, len(b))
		}
		d.Files[name] = b
	}
	return d, nil
}

func readISOFile(iso *iso9660.FileSystem, name string) ([]byte, error) {
	r, err := iso.OpenFile("/"+name, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("no %s on the ISO: %w", name, err)
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(r, maxISO)); err != nil {
		return nil, fmt.Errorf("reading %s on the ISO: %w", name, err)
	}
	return b.Bytes(), nil
}

// write puts the disc's files under base/Dir as they sit on the ISO,
// readable by the launcher's user only, and returns the settings' path.
func (d disc) write(base string) (string, error) {
	dir := filepath.Join(base, d.Dir)
	for name, b := range d.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, filepath.FromSlash(d.Settings)), nil
}
