package configdrive

// The CD-ROM that bosh.io's vSphere stemcells read their settings from.
// Their agent.json (bosh-linux-stemcell-builder, stage
// bosh_vsphere_agent_settings) lists a CDROM settings source with FileName
// "env" (newer builds try VsphereGuestInfo first, which fails on a VM
// without guestinfo, and go on to the CD-ROM). bosh-agent's cdrom package
// waits for udev, mounts /dev/sr0 with no type or label check, reads env
// as the settings JSON, unmounts and ejects the disc. The vSphere CPI
// writes the image with genisoimage, the file env at its root and no
// volume label (agent_env.rb); so does this.

// EnvFile is the file on the CD-ROM that holds the settings JSON.
const EnvFile = "env"

// noLabel is the volume identifier of an ISO without a label: ECMA-119
// pads the field with spaces, which blkid reads as no label. go-diskfs
// writes its own default, ISOIMAGE, for an empty identifier.
const noLabel = " "

// BuildEnv writes the vSphere stemcell's settings CD-ROM into a new
// directory under tmpDir ("" for the system's), readable by this user
// only. The settings are checked as for the config drive; on error nothing
// is left behind.
func BuildEnv(tmpDir string, settings []byte) (*Image, error) {
	if err := checkSettings(settings); err != nil {
		return nil, err
	}
	return build(tmpDir, "env.iso", noLabel, map[string][]byte{EnvFile: settings})
}
