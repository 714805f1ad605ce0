package simulator

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Limits deployVirtualMachine enforces, at CloudStack's defaults.
const (
	userDataMaxPOST      = 1048576 // UserDataManagerImpl's MAX_HTTP_POST_LENGTH
	customDiskMinSizeGB  = 1       // custom.diskoffering.size.min
	customDiskMaxSizeGB  = 1024    // custom.diskoffering.size.max
	vmPasswordLength     = 6       // vm.password.length
	instanceNameSuffix   = "VM"    // instance.name
	customParameterLimit = 2147483647
)

func init() {
	register(command{name: "deployVirtualMachine", async: deployVirtualMachine})
	registerTaggable("UserVm", func(st *state, id string) (string, bool) {
		vm, ok := byID(st.VMs, id)
		if !ok || vm.Removed != nil {
			return "", false
		}
		return vm.AccountID, true
	})
}

// nicPlan is one NIC of a VM being deployed.
type nicPlan struct {
	net *Network
	ip  string // requested, then allocated
	mac string // requested; generated when empty
}

// deployVirtualMachine checks everything CloudStack checks in the command's
// create phase and allocates the VM, its NICs (addresses included) and
// volumes before answering, so those errors come back at once. The job
// then places and starts the VM; while it runs the VM is Starting.
func deployVirtualMachine(c *Call) (*asyncJob, error) {
	p := c.Params
	zone := c.st.zone(p.Get("zoneid"))
	offering, _ := byID(c.st.ServiceOfferings, p.Get("serviceofferingid"))
	if zone == nil || offering == nil {
		return nil, paramError("Unable to find zone or service offering")
	}
	if p.Get("volumeid") != "" || p.Get("snapshotid") != "" {
		return nil, &APIError{Code: codeUnsupported, CSCode: csUnavailableCmd,
			Text: "Deploying from a volume or snapshot is not implemented by the CloudStack simulator"}
	}
	if p.Get("templateid") == "" {
		return nil, serverParamError("Unable to execute API command deployvirtualmachine due to missing parameter templateid")
	}
	tmpl, err := c.templateForDeploy(zone.ID, p.Get("templateid"))
	if err != nil {
		return nil, err
	}
	plans, err := c.deployNetworks(zone)
	if err != nil {
		return nil, err
	}
	sgIDs, err := c.deploySecurityGroups(zone)
	if err != nil {
		return nil, err
	}
	keyNames := p.List("keypairs") // BaseDeployVMCmd.getSSHKeyPairNames: keypairs, then keypair
	if k := p.Get("keypair"); k != "" {
		keyNames = append(keyNames, k)
	}
	for _, name := range keyNames {
		if c.st.keyPair(c.Account.ID, name) == nil || countFold(keyNames, name) > 1 {
			return nil, paramError("Not all specified keypairs exist")
		}
	}
	groupIDs, err := c.deployAffinityGroups()
	if err != nil {
		return nil, err
	}
	details := deployDetails(p)
	cpu, speed, mem, err := computeOf(offering, details)
	if err != nil {
		return nil, err
	}
	rootBytes, err := rootDiskBytes(tmpl, details)
	if err != nil {
		return nil, err
	}
	dataOffering, dataBytes, err := c.deployDataDisk()
	if err != nil {
		return nil, err
	}
	userData, err := c.st.validateUserData(p.Get("userdata"))
	if err != nil {
		return nil, err
	}
	if err := c.checkUserDataService(plans[0].net, userData, keyNames, tmpl.passwordEnabled); err != nil {
		return nil, err
	}
	name := p.Get("name")
	if p.Has("name") {
		if !verifyHostName(name) {
			return nil, hostNameError()
		}
		if n := c.st.hostNameTaken(name, plans, ""); n != nil {
			return nil, duplicateHostName(name, n)
		}
	}
	if err := c.allocateGuestIPs(plans); err != nil {
		return nil, err
	}

	now := c.srv.now()
	id, internal := c.st.newID(kindVM)
	if name == "" {
		name = instanceNameSuffix + "-" + id // generateHostName: instance.name + "-" + uuid
	}
	startVM := p.Bool("startvm", true)
	vm := &VirtualMachine{ID: id, InternalID: internal, Name: name, DisplayName: firstNonEmpty(p.Get("displayname"), name),
		InstanceName: fmt.Sprintf("i-%d-%d-%s", c.Account.InternalID, internal, instanceNameSuffix), State: vmStopped,
		ZoneID: zone.ID, TemplateID: strings.ToLower(p.Get("templateid")), OSTypeID: tmpl.osTypeID,
		ServiceOfferingID: offering.ID, AccountID: c.Account.ID, UserID: c.User.ID, Hypervisor: tmpl.hypervisor,
		CPUNumber: cpu, CPUSpeed: speed, Memory: mem, PasswordEnabled: tmpl.passwordEnabled, KeyPairs: keyNames,
		SSHPublicKeys: c.st.publicKeysOf(c.Account.ID, keyNames), UserData: userData, Group: p.Get("group"),
		Details: details, AffinityGroupIDs: groupIDs, SecurityGroupIDs: sgIDs, Created: now}
	if startVM {
		vm.State = vmStarting
	}
	for i, plan := range plans {
		nicID, _ := c.st.newID(kindNIC)
		vm.NICs = append(vm.NICs, &NIC{ID: nicID, NetworkID: plan.net.ID, IPAddress: plan.ip,
			MACAddress: firstNonEmpty(plan.mac, c.st.nextMAC()), DeviceID: i, IsDefault: i == 0})
	}
	c.st.VMs = append(c.st.VMs, vm)
	root := c.st.newVolume(vm, volumeRoot, 0, rootBytes, now)
	root.ServiceOfferingID, root.TemplateID = offering.ID, vm.TemplateID
	if dataOffering != nil {
		c.st.newVolume(vm, volumeDataDisk, 1, dataBytes, now).DiskOfferingID = dataOffering.ID
	}
	c.changed()
	password := ""
	if tmpl.passwordEnabled {
		password = randomPassword(vmPasswordLength)
	}
	hostID := p.Get("hostid")
	return &asyncJob{instanceType: "VirtualMachine", instanceID: vm.ID, created: true,
		cmdClass: "org.apache.cloudstack.api.command.admin.vm.DeployVMCmdByAdmin",
		run: func() (any, error) {
			if startVM {
				if err := c.st.checkDestinationHost(vm, hostID); err != nil {
					return nil, err
				}
				if err := c.startOn(vm, hostID); err != nil {
					return nil, err
				}
			}
			v := c.vmView(vm)
			if password != "" {
				v["password"] = password
			}
			return map[string]any{"virtualmachine": v}, nil
		},
		fail: func(*APIError) { c.failDeploy(vm) },
	}, nil
}

// failDeploy is updateVmStateForFailedVmCreation: the VM goes to Error and
// its volumes are destroyed. CloudStack releases the NICs (addresses and
// host name) when the expunge thread removes the VM; the simulator releases
// them at once.
func (c *Call) failDeploy(vm *VirtualMachine) {
	vm.State, vm.HostID, vm.NICs, vm.UpdateTime = vmError, "", nil, c.srv.now()
	for _, v := range c.st.volumesOf(vm.ID) {
		v.State = volumeDestroy
	}
	c.changed()
}

// hostNameLabel is the character set of NetUtils.verifyDomainNameLabel.
var hostNameLabel = regexp.MustCompile(`^[a-z0-9-]+$`)

// verifyHostName is NetUtils.verifyDomainNameLabel(name, true): 1 to 63
// letters (either case), digits and hyphens, not starting or ending with a
// hyphen, not starting with a digit.
func verifyHostName(name string) bool {
	return len(name) >= 1 && len(name) <= 63 && hostNameLabel.MatchString(strings.ToLower(name)) &&
		!strings.HasPrefix(name, "-") && !strings.HasSuffix(name, "-") && !(name[0] >= '0' && name[0] <= '9')
}

func hostNameError() *APIError {
	return paramError(`Invalid name. Vm name can contain ASCII letters 'a' through 'z', the digits '0' through '9', ` +
		`and the hyphen ('-'), must be between 1 and 63 characters long, and can't start or end with "-" and can't start with digit`)
}

// hostNameTaken finds the first planned network where another VM that is not
// expunged (Destroyed ones included) has a NIC and the host name (compared
// exactly, as listDistinctHostNames' result is).
func (st *state) hostNameTaken(name string, plans []*nicPlan, except string) *Network {
	for _, plan := range plans {
		for _, vm := range st.VMs {
			if vm.Removed == nil && vm.ID != except && vm.Name == name && vm.nicOn(plan.net.ID) != nil {
				return plan.net
			}
		}
	}
	return nil
}

func duplicateHostName(name string, n *Network) *APIError {
	return paramError("The vm with hostName %s already exists in the network domain: %s; network=%s", name, n.NetworkDomain, n.Name)
}

// deploySecurityGroups resolves securitygroupids/securitygroupnames; only a
// zone with security groups (a basic zone here) takes them.
func (c *Call) deploySecurityGroups(zone *Zone) ([]string, error) {
	p := c.Params
	ids, names := p.List("securitygroupids"), p.List("securitygroupnames")
	if len(ids) > 0 && len(names) > 0 {
		return nil, paramError("securitygroupids parameter is mutually exclusive with securitygroupnames parameter")
	}
	if len(names) > 0 {
		c.ensureDefaultSecurityGroup()
		for _, name := range names {
			g := c.st.securityGroupByName(c.Account.ID, name)
			if g == nil {
				return nil, paramError("Unable to find group by name %s", name)
			}
			ids = append(ids, g.ID)
		}
	}
	if len(ids) > 0 && zone.NetworkType != "Basic" {
		return nil, paramError("Can't create vm with security groups; security group feature is not enabled per zone")
	}
	for i := range ids {
		ids[i] = strings.ToLower(ids[i])
	}
	return ids, nil
}

// deployAffinityGroups resolves affinitygroupids/affinitygroupnames.
func (c *Call) deployAffinityGroups() ([]string, error) {
	p := c.Params
	ids, names := p.List("affinitygroupids"), p.List("affinitygroupnames")
	if len(ids) > 0 && len(names) > 0 {
		return nil, paramError("affinitygroupids parameter is mutually exclusive with affinitygroupnames parameter")
	}
	var out []string
	for _, id := range ids {
		g, ok := byID(c.st.AffinityGroups, id)
		if !ok {
			return nil, paramError("Unable to find affinity group by id %s", id)
		}
		out = append(out, g.ID)
	}
	for _, name := range names {
		g := c.st.affinityGroupByName(c.Account.ID, name)
		if g == nil {
			return nil, paramError("Unable to find affinity group by name %s", name)
		}
		out = append(out, g.ID)
	}
	return out, nil
}

// deployDetails is BaseDeployVMCmd.getDetails: details[i].* merged, plus
// rootdisksize unless a detail already gives it.
func deployDetails(p Params) map[string]string {
	details := map[string]string{}
	for _, m := range p.Map("details") {
		for k, v := range m {
			details[k] = v
		}
	}
	if p.Has("rootdisksize") {
		if _, ok := details["rootdisksize"]; !ok {
			details["rootdisksize"] = p.Get("rootdisksize")
		}
	}
	if len(details) == 0 {
		return nil
	}
	return details
}

// computeOf is the VM's CPU, speed and memory: a fixed offering's own, or
// for a dynamic one what validateCustomParameters accepts from the details,
// filled in as ServiceOfferingDaoImpl.getComputeOffering does.
func computeOf(o *ServiceOffering, details map[string]string) (cpu, speed, mem int, err error) {
	if !o.dynamic() {
		return *o.CPUNumber, *o.CPUSpeed, *o.Memory, nil
	}
	if err := validateCustomParameters(o, details); err != nil {
		return 0, 0, 0, err
	}
	pick := func(fixed *int, key string) int {
		if fixed != nil {
			return *fixed
		}
		return parseIntOr(details[key], -1)
	}
	return pick(o.CPUNumber, "cpuNumber"), pick(o.CPUSpeed, "cpuSpeed"), pick(o.Memory, "memory"), nil
}

// validateCustomParameters is UserVmManagerImpl.validateCustomParameters: what
// the offering leaves open must come in the details, within the offering's
// limits (vm.serviceoffering.cpu.cores.max and ram.size.max at their default,
// no limit); what it fixes may not be overridden.
func validateCustomParameters(o *ServiceOffering, details map[string]string) error {
	if len(details) == 0 {
		return paramError("Need to specify custom parameter values cpu, cpu speed and memory when using custom offering")
	}
	inRange := func(key, label string, lo, hi int) error {
		if n := parseIntOr(details[key], -1); n < lo || n > hi {
			return paramError("Invalid %s value, specify a value between %d and %d", label, lo, hi)
		}
		return nil
	}
	for _, v := range []struct {
		fixed       *int
		key, label  string
		lo, hi, cap int
	}{
		{o.CPUNumber, "cpuNumber", "cpu cores", o.limit("mincpunumber", 1), o.limit("maxcpunumber", customParameterLimit), offeringMaxCPUCores},
		// isCustomCpuSpeedSupported is false once the offering has a speed.
		{o.CPUSpeed, "cpuSpeed", "cpu speed", 1, customParameterLimit, 0},
		{o.Memory, "memory", "memory", o.limit("minmemory", 32), o.limit("maxmemory", customParameterLimit), offeringMaxRAMSize},
	} {
		_, given := details[v.key]
		switch {
		case v.fixed == nil:
			if err := inRange(v.key, v.label, v.lo, min(v.hi, maxOr(v.cap))); err != nil {
				return err
			}
		case given:
			return paramError("The %s of this offering id:%s is not customizable. This is predefined in the template.", v.label, o.ID)
		}
	}
	return nil
}

// rootDiskBytes is the ROOT volume's size: the template's, or the
// rootdisksize override in GB, which may not be smaller.
func rootDiskBytes(tmpl deployTemplate, details map[string]string) (int64, error) {
	raw, ok := details["rootdisksize"]
	if !ok {
		return tmpl.sizeBytes, nil
	}
	gb, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil || gb <= 0 {
		return 0, paramError("Root disk size should be a positive number.")
	}
	if gb<<30 < tmpl.sizeBytes {
		return 0, paramError("Unsupported: rootdisksize override (%d GB) is smaller than template size %s", gb, humanSize(tmpl.sizeBytes))
	}
	return gb << 30, nil
}

// deployDataDisk is the DATADISK diskofferingid (and, for a customized
// offering, size in GB) asks for.
func (c *Call) deployDataDisk() (*DiskOffering, int64, error) {
	p := c.Params
	if p.Get("diskofferingid") == "" {
		return nil, 0, nil
	}
	o, ok := byID(c.st.DiskOfferings, p.Get("diskofferingid"))
	if !ok {
		return nil, 0, paramError("Unable to find disk offering by id %s", p.Get("diskofferingid"))
	}
	if !o.Customized {
		return o, o.DiskSize << 30, nil
	}
	if !p.Has("size") {
		return nil, 0, paramError("This disk offering requires a custom size specified")
	}
	size := p.Int("size", 0)
	if size < customDiskMinSizeGB || size > customDiskMaxSizeGB {
		return nil, 0, paramError("VM Creation failed. Volume size: %dGB is out of allowed range. Max: %d Min:%d",
			size, customDiskMaxSizeGB, customDiskMinSizeGB)
	}
	return o, size << 30, nil
}
