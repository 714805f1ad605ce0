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

// errNoDrive means the VM has no config drive attached (a VM of a
// XenServer stemcell, whose agent reads user data).
var errNoDrive = errors.New("no config drive attached")

// fetchConfigDrive reads the ISO attached to the VM from the simulator's
// /metadata/<vm>/sim/iso, the CD-ROM a KVM guest would see.
func (l *launcher) fetchConfigDrive(vmID string) ([]byte, error) {
	resp, err := l.http.Get(l.metadata + "/" + vmID + "/sim/iso")
	if err != nil {
		return nil, fmt.Errorf("reading the ISO of VM %s: %w", vmID, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, errNoDrive
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

// driveFiles are the two files the agent's ConfigDrive source reads.
type driveFiles struct {
	UserData, MetaData []byte
}

// readConfigDrive reads the files as the agent's ConfigDrive source would
// on the guest: only from a drive with one of the stemcell's labels, the
// user data as the settings JSON, the meta data required to be JSON.
// Errors name the file and what is wrong, never the content (it holds
// the mbus and blobstore credentials).
func readConfigDrive(img []byte) (driveFiles, error) {
	var out driveFiles
	f, err := os.CreateTemp("", "config-drive-*.iso")
	if err != nil {
		return out, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(img); err != nil {
		return out, err
	}
	iso, err := iso9660.Read(file.New(f, true), int64(len(img)), 0, 0)
	if err != nil {
		return out, fmt.Errorf("not an ISO 9660 image: %w", err)
	}
	label := strings.TrimRight(iso.Label(), "\x00 ")
	if !contains(driveLabels, label) {
		return out, fmt.Errorf("the drive's label is %q: the stemcell's agent looks for %v", label, driveLabels)
	}
	if out.UserData, err = readISOFile(iso, userDataPath); err != nil {
		return out, err
	}
	if out.MetaData, err = readISOFile(iso, metaDataPath); err != nil {
		return out, err
	}
	for name, b := range map[string][]byte{userDataPath: out.UserData, metaDataPath: out.MetaData} {
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			return out, fmt.Errorf("%s (%d bytes) is not a JSON object", name, len(b))
		}
	}
	return out, nil
}

func readISOFile(iso *iso9660.FileSystem, name string) ([]byte, error) {
	r, err := iso.OpenFile("/"+name, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("no %s on the drive: %w", name, err)
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(r, maxISO)); err != nil {
		return nil, fmt.Errorf("reading %s on the drive: %w", name, err)
	}
	return b.Bytes(), nil
}

// writeDrive puts the drive's files under dir as they sit on the drive,
// readable by the launcher's user only, and returns the user data's path.
func writeDrive(dir string, files driveFiles) (string, error) {
	for name, b := range map[string][]byte{userDataPath: files.UserData, metaDataPath: files.MetaData} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, filepath.FromSlash(userDataPath)), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
