package cpi

// create_vm's second step: what to deploy, from what was read and the
// call's catalog (zones, templates, offerings, networks). It only reads
// CloudStack, and refuses here all that the input gets wrong and the
// catalog shows, so that nothing is made for a VM that cannot be.

import (
	"fmt"
	"net/netip"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// catalog is the part that turns create_vm's names into CloudStack ids:
// the zone, the template, offerings, networks and the affinity group.
type catalog struct {
	callDeps
	cloud     catalogCloud
	offerings offerings
}

// catalogCloud is what planning create_vm asks of CloudStack.
type catalogCloud interface {
	cloudstack.ZoneCatalog
	cloudstack.ComputeCatalog
	cloudstack.DiskCatalog
	cloudstack.NetworkCatalog
	cloudstack.TemplateFinder
	cloudstack.AffinityGroups
}

// deployPlan is what create_vm deploys: what was read, each NIC of its
// network plan with its CloudStack network, and the deploy's spec but for
// what the deployment adds (the name, marks, settings, affinity group).
type deployPlan struct {
	vmWant
	spec cloudstack.DeploySpec
}

// plan resolves the zone, template, offerings and networks in that order,
// each refusal as soon as its answer is known.
func (c catalog) plan(w vmWant) (deployPlan, error) {
	p := deployPlan{vmWant: w}
	zones, err := c.cloud.FindZones([]string{w.zone})
	if err != nil {
		return p, vmCreationRefused(err)
	}
	p.spec.ZoneID = zones[0].ID
	if p.spec.TemplateID, err = c.templateIn(w.template, p.spec.ZoneID); err != nil {
		return p, vmCreationRefused(err)
	}
	if err := c.planOffering(&p); err != nil {
		return p, err
	}
	if err := c.planNICs(&p); err != nil {
		return p, err
	}
	if err := c.planEphemeral(&p); err != nil {
		return p, err
	}
	p.spec.KeyPair = w.keyPair
	p.spec.SecurityGroups = w.props.SecurityGroups
	return p, nil
}

// planNICs gives each NIC its CloudStack network and refuses a static IP
// the network cannot give.
func (c catalog) planNICs(p *deployPlan) error {
	nets, err := c.cloud.FindNetworks(p.spec.ZoneID, p.netRefs)
	if err != nil {
		return vmCreationRefused(err)
	}
	seen := map[string]string{}
	for i := range p.networks.nics {
		n := &p.networks.nics[i]
		n.network = nets[p.netRefs[i]]
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
		p.spec.NICs = append(p.spec.NICs, cloudstack.NICRequest{NetworkID: n.network.ID, IP: ip, MAC: n.mac})
	}
	return nil
}

func (c catalog) planOffering(p *deployPlan) error {
	props := p.props
	p.spec.RootDiskGB = gib(props.RootDiskSize)
	if props.Custom() {
		o, err := c.customOffering(props)
		if err != nil {
			return err
		}
		p.spec.ServiceOfferingID = o.ID
		// Only what the offering leaves open is sent: CloudStack refuses
		// the rest, a cpuSpeed on a constrained offering included.
		if !o.CPUsFixed {
			p.spec.CPUs = props.CPU
		}
		if !o.MemoryFixed {
			p.spec.MemoryMB = props.RAM
		}
		if !o.SpeedFixed {
			p.spec.CPUSpeed = p.cpuSpeed
		}
		return nil
	}
	ref := p.computeOffering
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
	p.spec.ServiceOfferingID = o.ID
	return nil
}

// customOffering is the customized offering cpu and ram run on: the one
// compute_offering names, if it takes them; else vmtype.PickCustom's
// choice among those CloudStack lists.
func (c catalog) customOffering(props vmtype.Props) (*cloudstack.ServiceOffering, error) {
	cpu, ram, speed := props.CPU, props.RAM, props.CPUSpeed
	if ref := props.ComputeOffering; ref != "" {
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

func (c catalog) planEphemeral(p *deployPlan) error {
	if !p.ephemeral {
		return nil
	}
	ref := p.ephemeralOffering
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
	p.spec.DataDiskOfferingID = o.ID
	if o.Customized {
		if p.props.EphemeralDiskSize == 0 {
			return vmCreationRefused(fmt.Errorf("disk offering %q is customized: ephemeral_disk_size (or disk) is needed", ref))
		}
		p.spec.DataDiskGB = gib(p.props.EphemeralDiskSize)
	}
	return nil
}

// templateIn is the template a stemcell CID stands for in a zone: the CID
// itself, or, for the earlier CPIs' CIDs (cpitemplate-…, the template's
// name), the template named so there.
func (c catalog) templateIn(ref, zoneID string) (string, error) {
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

// gib rounds MiB up to whole GiB, as CloudStack sizes disks.
func gib(mib int) int {
	return (mib + 1023) / 1024
}
