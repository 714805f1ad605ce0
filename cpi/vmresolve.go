package cpi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// create_vm's first half: names in the request become CloudStack ids, and
// bad input is refused before anything is created.

// placement is the part that turns create_vm's names into CloudStack ids:
// the zone, the template, offerings, networks and the affinity group.
type placement struct {
	request
	cloud     placementCloud
	offerings offerings
}

// placementCloud is what resolving create_vm's names asks of CloudStack.
type placementCloud interface {
	cloudstack.ZoneCatalog
	cloudstack.ComputeCatalog
	cloudstack.DiskCatalog
	cloudstack.NetworkCatalog
	cloudstack.TemplateFinder
	cloudstack.AffinityGroups
}

// resolve turns names into CloudStack ids: zone, offering, networks, disk
// offering, affinity group; nothing is created but an affinity group.
func (v *vmCreation) resolve(networkRefs []string) error {
	c := v.vms.placement
	zones, err := c.cloud.FindZones([]string{firstOf(v.props.Zone, c.cfg.CloudStack.DefaultZone)})
	if err != nil {
		return vmCreationRefused(err)
	}
	v.spec.ZoneID = zones[0].ID
	if v.spec.TemplateID, err = c.templateIn(v.spec.TemplateID, v.spec.ZoneID); err != nil {
		return vmCreationRefused(err)
	}
	if err := v.resolveOffering(); err != nil {
		return err
	}
	nets, err := c.cloud.FindNetworks(v.spec.ZoneID, networkRefs)
	if err != nil {
		return vmCreationRefused(err)
	}
	seen := map[string]string{}
	for i := range v.plan.nics {
		n := &v.plan.nics[i]
		n.network = nets[networkRefs[i]]
		// BaseDeployVMCmd.getIpToNetworkMap keys the NICs by network: two
		// entries for one network would silently become one NIC.
		if other, dup := seen[n.network.ID]; dup {
			return vmCreationRefused(fmt.Errorf("networks %q and %q are both CloudStack network %s: CloudStack gives a VM "+
				"one NIC per network", other, n.name, n.network.Name))
		}
		seen[n.network.ID] = n.name
		ip := ""
		if !n.net.IsDynamic() {
			ip = n.net.IP()
			if err := checkInNetwork(ip, n.network); err != nil {
				return vmCreationRefused(fmt.Errorf("network %q: %w", n.name, err))
			}
		}
		v.spec.NICs = append(v.spec.NICs, cloudstack.NICRequest{NetworkID: n.network.ID, IP: ip, MAC: n.mac})
	}
	if err := v.resolveEphemeral(); err != nil {
		return err
	}
	v.spec.KeyPair = firstOf(v.props.KeyPair, c.cfg.CloudStack.DefaultKeyPair)
	v.spec.SecurityGroups = v.props.SecurityGroups
	return v.resolveAffinity()
}

func (v *vmCreation) resolveOffering() error {
	c := v.vms.placement
	if v.props.Custom() {
		o, err := v.customOffering()
		if err != nil {
			return err
		}
		v.spec.ServiceOfferingID = o.ID
		v.spec.RootDiskGB = gib(v.props.RootDiskSize)
		// Only what the offering leaves open is sent: CloudStack refuses
		// the rest, a cpuSpeed on a constrained offering included.
		if !o.CPUsFixed {
			v.spec.CPUs = v.props.CPU
		}
		if !o.MemoryFixed {
			v.spec.MemoryMB = v.props.RAM
		}
		if !o.SpeedFixed {
			v.spec.CPUSpeed = firstInt(v.props.CPUSpeed, c.cfg.CloudStack.DefaultCPUSpeed)
		}
		return nil
	}
	ref := firstOf(v.props.ComputeOffering, c.cfg.CloudStack.DefaultComputeOffering)
	if ref == "" {
		return vmCreationRefused(fmt.Errorf("VM cloud_properties need compute_offering, or cpu and ram (no cloudstack.default_compute_offering)"))
	}
	o, err := c.cloud.FindServiceOffering(ref)
	if err != nil {
		return vmCreationRefused(err)
	}
	if err := vmtype.CheckFixed(o, ref); err != nil {
		return vmCreationRefused(err)
	}
	v.spec.ServiceOfferingID = o.ID
	v.spec.RootDiskGB = gib(v.props.RootDiskSize)
	return nil
}

// customOffering is the customized offering cpu and ram run on: the one
// compute_offering names, if it takes them; else vmtype.PickCustom's
// choice among those CloudStack lists.
func (v *vmCreation) customOffering() (*cloudstack.ServiceOffering, error) {
	c := v.vms.placement
	cpu, ram, speed := v.props.CPU, v.props.RAM, v.props.CPUSpeed
	if ref := v.props.ComputeOffering; ref != "" {
		o, err := c.cloud.FindServiceOffering(ref)
		if err != nil {
			return nil, vmCreationRefused(err)
		}
		return o, vmCreationRefused(vmtype.CheckNamedCustom(o, ref, cpu, ram, speed))
	}
	offerings, err := c.cloud.ServiceOfferings()
	if err != nil {
		return nil, err
	}
	o, err := vmtype.PickCustom(offerings, cpu, ram, speed)
	return o, vmCreationRefused(err)
}

func (v *vmCreation) resolveEphemeral() error {
	c := v.vms.placement
	ref := firstOf(v.props.EphemeralDiskOffering, c.cfg.CloudStack.DefaultEphemeralDiskOffering)
	if v.props.EphemeralDiskSize == 0 && v.props.EphemeralDiskOffering == "" {
		return nil
	}
	var o *cloudstack.DiskOffering
	var err error
	if ref == "" {
		// calculate_vm_cloud_properties and the earlier CPIs' disk give a
		// size alone: the customized offering serves.
		o, err = c.offerings.customDiskOffering("ephemeral disk with no ephemeral_disk_offering and no " +
			"cloudstack.default_ephemeral_disk_offering")
		if err != nil {
			err = fmt.Errorf("an ephemeral disk with no ephemeral_disk_offering and no "+
				"cloudstack.default_ephemeral_disk_offering goes on a customized disk offering: %w", err)
		}
	} else {
		o, err = c.cloud.FindDiskOffering(ref)
	}
	if err != nil {
		return vmCreationRefused(err)
	}
	v.spec.DataDiskOfferingID = o.ID
	if o.Customized {
		if v.props.EphemeralDiskSize == 0 {
			return vmCreationRefused(fmt.Errorf("disk offering %q is customized: ephemeral_disk_size (or disk) is needed", ref))
		}
		v.spec.DataDiskGB = gib(v.props.EphemeralDiskSize)
	}
	v.withEphemeralDisk = true
	return nil
}

func (v *vmCreation) resolveAffinity() error {
	c := v.vms.placement
	name := v.props.AffinityGroup
	if name == "" && c.cfg.CloudStack.AutoAntiAffinity {
		if group := instanceGroup(v.env); group != "" {
			name = fmt.Sprintf("%s-%s", c.ctx.DirectorUUID, group)
		}
	}
	if name == "" {
		return nil
	}
	// The Go CPI's generateAffinityGroup: a VM type may name its group's type.
	kind := firstOf(v.props.AffinityGroupType, c.cfg.CloudStack.AffinityGroupType)
	id, err := c.cloud.FindOrCreateAffinityGroup(truncate(name, 63), kind)
	if err != nil {
		return err
	}
	v.spec.AffinityGroupIDs = []string{id}
	return nil
}

// templateIn is the template a stemcell CID stands for in a zone: the CID
// itself, or, for the earlier CPIs' CIDs (cpitemplate-…, the template's
// name), the template named so there.
func (c placement) templateIn(ref, zoneID string) (string, error) {
	if cloudstack.IsID(ref) {
		return ref, nil
	}
	t, err := c.cloud.FindTemplateByName(ref, zoneID)
	if err != nil {
		return "", err
	}
	if t == nil {
		return "", fmt.Errorf("stemcell %s: no template of that name in zone %s", ref, zoneID)
	}
	return t.ID, nil
}

// checkInNetwork refuses a static IP outside the CloudStack network before
// deploy: CloudStack answers that with a capacity error, which the director
// would retry in vain.
func checkInNetwork(ip string, n cloudstack.Network) error {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return fmt.Errorf("%q is not an IP address", ip)
	}
	if n.CIDR == "" {
		return nil
	}
	prefix, err := netip.ParsePrefix(n.CIDR)
	if err != nil {
		return nil //nolint:nilerr // a CIDR CloudStack reports that does not parse leaves nothing to check the IP against
	}
	if !prefix.Contains(addr) {
		return fmt.Errorf("IP %s is outside CloudStack network %s (%s)", ip, n.Name, n.CIDR)
	}
	if ip == n.Gateway {
		return fmt.Errorf("IP %s is the gateway of CloudStack network %s", ip, n.Name)
	}
	return nil
}

func instanceGroup(env apiv1.VMEnv) string {
	var e struct {
		Bosh struct {
			Group string `json:"group"`
		} `json:"bosh"`
	}
	if raw, err := env.MarshalJSON(); err == nil {
		_ = json.Unmarshal(raw, &e)
	}
	return e.Bosh.Group
}

// gib rounds MiB up to whole GiB, as CloudStack sizes disks.
func gib(mib int) int {
	return (mib + 1023) / 1024
}

// vmCreationRefused types a create_vm failure of its input (cloud properties,
// networks, offerings): VMCreationFailed, which the director must not retry.
func vmCreationRefused(err error) error {
	if err == nil {
		return nil
	}
	var typed *Error
	if errors.As(err, &typed) {
		return err
	}
	return &Error{kind: "VMCreationFailed", retry: false, err: err}
}
