package marks

import "slices"

// Address is what the rule of acquired addresses reads of a public IP.
type Address struct {
	IP string
	// VMID is the VM the address is static NAT to, or "".
	VMID string
	// NetworkID is the network the address is associated with: "" while
	// associateIpAddress's job has not associated it yet
	// (IpAddressManagerImpl.allocateIp marks it in the command's create
	// phase, associateIPToGuestNetwork in its job).
	NetworkID string
	// SourceNAT says it is its network's source NAT address: never the
	// CPI's.
	SourceNAT bool
	Tags      map[string]string
}

// AcquiredFor says the CPI acquired this address for the VM (its id, its
// display name and the networks of its NICs): it is static NAT to no
// other VM, and it carries AcquiredTag, or, while it has no tag at all, the
// VM is incomplete, its create_vm recorded the intent to acquire exactly
// this address before associateIpAddress, and the address is on one of
// the VM's networks or on none yet. That covers a crash between
// associateIpAddress and its createTags; an address the operator had
// allocated never gets the intent (create_vm records it only for an
// address that was free).
func (a Address) AcquiredFor(vmID, displayName string, networks []string) bool {
	switch mark, incomplete := ReadVM(displayName); {
	case a.VMID != "" && a.VMID != vmID:
		return false
	case a.Tags[AcquiredTag] == "true":
		return true
	case !incomplete || mark.VIP != a.IP || a.SourceNAT || len(a.Tags) > 0:
		return false
	}
	return a.NetworkID == "" || slices.Contains(networks, a.NetworkID)
}

// HadLBs says, of a VM's tags, whether its create_vm had load-balancer
// rules (LBTag).
func HadLBs(tags map[string]string) bool { return tags[LBTag] != "" }

// HadConfigDrive says, of a VM's tags, whether its create_vm made it an
// ISO of its agent's settings, a config drive or a CD-ROM (ConfigDriveTag),
// whether or not the ISO is still attached.
func HadConfigDrive(tags map[string]string) bool { return tags[ConfigDriveTag] == "true" }
