package simulator

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Limits deployVirtualMachine enforces, at CloudStack's defaults.
const (
	userDataMaxLength    = 32768   // vm.userdata.max.length
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
	userData, err := validateUserData(p.Get("userdata"))
	if err != nil {
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
		InstanceName: fmt.Sprintf("i-%d-%d-%s", c.Account.InternalID, internal, instanceNameSuffix), State: "Stopped",
		ZoneID: zone.ID, TemplateID: strings.ToLower(p.Get("templateid")), OSTypeID: tmpl.osTypeID,
		ServiceOfferingID: offering.ID, AccountID: c.Account.ID, UserID: c.User.ID, Hypervisor: tmpl.hypervisor,
		CPUNumber: cpu, CPUSpeed: speed, Memory: mem, PasswordEnabled: tmpl.passwordEnabled, KeyPairs: keyNames,
		SSHPublicKeys: c.st.publicKeysOf(c.Account.ID, keyNames), UserData: userData, Group: p.Get("group"),
		Details: details, AffinityGroupIDs: groupIDs, SecurityGroupIDs: sgIDs, Created: now}
	if startVM {
		vm.State = "Starting"
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
	vm.State, vm.HostID, vm.NICs = "Error", "", nil
	for _, v := range c.st.volumesOf(vm.ID) {
		v.State = "Destroy"
	}
	c.changed()
}

func countFold(list []string, s string) int {
	n := 0
	for _, x := range list {
		if strings.EqualFold(x, s) {
			n++
		}
	}
	return n
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

// deployNetworks resolves networkids, iptonetworklist[i].networkid/ip/mac or
// the account's default isolated network, and the ipaddress/macaddress of
// the default (first) network.
func (c *Call) deployNetworks(zone *Zone) ([]*nicPlan, error) {
	p := c.Params
	ipMap, ids := p.Map("iptonetworklist"), p.List("networkids")
	var plans []*nicPlan
	switch {
	case len(ipMap) > 0:
		if len(ids) > 0 || p.Get("ipaddress") != "" || p.Get("ip6address") != "" {
			return nil, paramError("ipToNetworkMap can't be specified along with networkIds or ipAddress")
		}
		for _, m := range ipMap {
			net := c.st.network(m["networkid"])
			if net == nil || m["networkid"] == "" {
				return nil, paramError("Unable to translate and find entity with networkId: %s", m["networkid"])
			}
			mac, err := requestedMAC(m["mac"])
			if err != nil {
				return nil, err
			}
			plans = append(plans, &nicPlan{net: net, ip: m["ip"], mac: mac})
		}
	case len(ids) > 0:
		for _, id := range ids {
			plans = append(plans, &nicPlan{net: c.st.network(id)})
		}
	default:
		var usable []*Network
		for _, n := range c.st.isolatedNetworksOf(c.Account.ID, zone.ID) {
			if n.canUseForDeploy() {
				usable = append(usable, n)
			}
		}
		switch len(usable) {
		case 0:
			return nil, paramError("Unable to find a default network to start a vm for account %s; please specify networkIds", c.Account.Name)
		case 1:
			plans = append(plans, &nicPlan{net: usable[0]})
		default:
			return nil, paramError("More than 1 default Isolated networks are found for account %s; please specify networkIds", c.Account.Name)
		}
	}
	if len(ipMap) == 0 {
		mac, err := requestedMAC(p.Get("macaddress"))
		if err != nil {
			return nil, err
		}
		plans[0].ip, plans[0].mac = p.Get("ipaddress"), mac
	}
	for _, plan := range plans {
		if plan.net == nil {
			return nil, paramError("Unable to find network by id")
		}
		if plan.net.ZoneID != zone.ID {
			return nil, paramError("Network id=%s doesn't belong to zone %s", plan.net.ID, zone.ID)
		}
		if plan.ip != "" {
			if a, err := netip.ParseAddr(plan.ip); err != nil || !a.Is4() {
				return nil, paramError("Invalid specified IPv4 address %s", plan.ip)
			}
		}
		if plan.mac != "" && c.st.macInUse(plan.net.ID, plan.mac) {
			return nil, paramError("The requested Mac address is already taken! %s", plan.mac)
		}
	}
	return plans, nil
}

// requestedMAC checks and standardizes a requested MAC address.
func requestedMAC(mac string) (string, error) {
	if mac == "" {
		return "", nil
	}
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return "", paramError("Mac address is not valid: %s", mac)
	}
	if hw[0]&1 != 0 {
		return "", paramError("Mac address is not unicast: %s", mac)
	}
	return hw.String(), nil
}

func (st *state) macInUse(networkID, mac string) bool {
	for _, vm := range st.VMs {
		if vm.Removed != nil {
			continue
		}
		for _, n := range vm.NICs {
			if n.NetworkID == networkID && strings.EqualFold(n.MACAddress, mac) {
				return true
			}
		}
	}
	return false
}

// nextMAC hands out the next unused 02:00:xx:xx:xx:xx address.
func (st *state) nextMAC() string {
	for {
		st.Counters["mac"]++
		n := st.Counters["mac"]
		mac := fmt.Sprintf("02:00:%02x:%02x:%02x:%02x", byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		used := false
		for _, vm := range st.VMs {
			for _, nic := range vm.NICs {
				used = used || nic.MACAddress == mac
			}
		}
		if !used {
			return mac
		}
	}
}

// guestIPsInUse are the addresses of a network's NICs, VMs destroyed but
// not expunged included.
func (st *state) guestIPsInUse(networkID string) map[string]bool {
	used := map[string]bool{}
	for _, vm := range st.VMs {
		if vm.Removed != nil {
			continue
		}
		for _, n := range vm.NICs {
			if n.NetworkID == networkID && n.IPAddress != "" {
				used[n.IPAddress] = true
			}
		}
	}
	return used
}

// allocateGuestIPs gives each planned NIC its address. Like CloudStack's
// IpAddressManagerImpl.acquireGuestIpAddress, a requested address must be
// in the network's CIDR, not its network, broadcast or gateway address, and
// free; otherwise, and when the network is full, the deployment fails with
// InsufficientVirtualNetworkCapacityException (533). Unrequested addresses
// are picked at random among the free ones, as CloudStack does.
func (c *Call) allocateGuestIPs(plans []*nicPlan) error {
	taken := map[string]map[string]bool{}
	for _, plan := range plans {
		if taken[plan.net.ID] == nil {
			taken[plan.net.ID] = c.st.guestIPsInUse(plan.net.ID)
		}
		ip := acquireGuestIP(plan.net, plan.ip, taken[plan.net.ID])
		if ip == "" {
			return &APIError{Code: codeCapacity, CSCode: csServerAPIException,
				Text: "Unable to acquire Guest IP address for network " + networkString(plan.net)}
		}
		plan.ip = ip
		taken[plan.net.ID][ip] = true
	}
	return nil
}

func acquireGuestIP(n *Network, requested string, taken map[string]bool) string {
	prefix, err := netip.ParsePrefix(n.CIDR)
	if err != nil {
		return ""
	}
	prefix = prefix.Masked()
	broadcast := lastAddr(prefix)
	usable := func(a netip.Addr) bool {
		return prefix.Contains(a) && a != prefix.Addr() && a != broadcast && a.String() != n.Gateway && !taken[a.String()]
	}
	if requested != "" {
		a, err := netip.ParseAddr(requested)
		if err != nil || !usable(a) {
			return ""
		}
		return a.String()
	}
	var free []netip.Addr
	for a := prefix.Addr().Next(); a.IsValid() && a.Less(broadcast); a = a.Next() {
		if usable(a) {
			free = append(free, a)
		}
	}
	if len(free) == 0 {
		return ""
	}
	return free[mrand.IntN(len(free))].String()
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	host := 32 - p.Bits()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= uint32(1)<<host - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
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

// computeOf is the VM's CPU and memory: the offering's, or for a customized
// offering the details (UserVmManagerImpl.validateCustomParameters).
func computeOf(o *ServiceOffering, details map[string]string) (cpu, speed, mem int, err error) {
	if !o.Customized {
		return o.CPUNumber, o.CPUSpeed, o.Memory, nil
	}
	if len(details) == 0 {
		return 0, 0, 0, paramError("Need to specify custom parameter values cpu, cpu speed and memory when using custom offering")
	}
	if cpu = parseIntOr(details["cpuNumber"], -1); cpu < 1 {
		return 0, 0, 0, paramError("Invalid cpu cores value, specify a value between 1 and %d", customParameterLimit)
	}
	if speed = parseIntOr(details["cpuSpeed"], -1); speed <= 0 {
		return 0, 0, 0, paramError("Invalid cpu speed value, specify a value between 1 and %d", customParameterLimit)
	}
	if mem = parseIntOr(details["memory"], -1); mem < 32 {
		return 0, 0, 0, paramError("Invalid memory value, specify a value between 32 and %d", customParameterLimit)
	}
	return cpu, speed, mem, nil
}

// parseIntOr is NumbersUtil.parseInt.
func parseIntOr(s string, def int) int {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return def
	}
	return int(n)
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

// humanSize is NumbersUtil.toHumanReadableSize.
func humanSize(b int64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.2f TB", float64(b)/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.2f KB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", b)
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

// validateUserData is UserDataManagerImpl.validateUserData for a POST
// request (the simulator applies the POST limit to GET requests too): the
// base64 text, at most vm.userdata.max.length characters, is stored
// re-encoded with padding.
func validateUserData(ud string) (string, error) {
	if ud == "" {
		return "", nil
	}
	if strings.Contains(ud, "%") {
		decoded, err := url.QueryUnescape(ud)
		if err != nil {
			return "", paramError("Url decoding of userdata failed.")
		}
		ud = decoded
	}
	if !isBase64(ud) {
		return "", paramError("User data is not base64 encoded")
	}
	if len(ud) >= userDataMaxPOST {
		return "", paramError("User data is too long for an http POST request")
	}
	if len(ud) > userDataMaxLength {
		return "", paramError("User data has exceeded configurable max length : %d", userDataMaxLength)
	}
	decoded := decodeBase64Lenient(ud)
	if len(decoded) < 1 {
		return "", paramError("User data is too short")
	}
	return base64.StdEncoding.EncodeToString(decoded), nil
}

// isBase64 is commons-codec's Base64.isBase64(String): only characters of
// the standard or URL-safe alphabet, padding and whitespace.
func isBase64(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9',
			r == '+', r == '/', r == '-', r == '_', r == '=', r == ' ', r == '\t', r == '\r', r == '\n':
		default:
			return false
		}
	}
	return true
}

// decodeBase64Lenient decodes like commons-codec: both alphabets, padding
// and whitespace ignored, a trailing partial quantum dropped.
func decodeBase64Lenient(s string) []byte {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '-':
			return '+'
		case '_':
			return '/'
		case '=', ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	if len(s)%4 == 1 {
		s = s[:len(s)-1]
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// randomPassword is a password for a password-enabled template.
func randomPassword(n int) string {
	const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, n)
	for i := range b {
		k, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}
