package kernel

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// verifySignature is ApiServer.verifyRequest for requests signed with API
// keys. Every failure is the same 401 (ApiServlet.processRequestInContext),
// so a client cannot tell a wrong key from a wrong signature, an expired
// request or a command that does not exist. Not modelled (defaults kept):
// enforce.post.requests.and.timestamps, api.key.access
// (verifyApiKeyAccessAllowed), key pair permissions and validity dates.
func (s *Engine) verifySignature(raw rawParams, api *schema.API, now time.Time) (*model.User, *APIError) {
	fail := unauthorized(BadCredentials)
	if api == nil {
		return nil, fail
	}
	var signature, apiKey, version, expires string
	var parts []string
	for _, name := range raw.sortedNames() {
		value := raw[name]
		switch strings.ToLower(name) {
		case "signature":
			signature = value
			continue
		case "apikey":
			apiKey = value
		case "signatureversion":
			version = value
		case "expires":
			expires = value
		}
		parts = append(parts, name+"="+javaURLEncode(value))
	}
	if signature == "" || apiKey == "" {
		return nil, fail
	}
	// Only version 3 makes expires binding; legacy signatures never expire.
	if version == "3" {
		t, ok := parseTZDate(expires)
		if !ok || t.Before(now) {
			return nil, fail
		}
	}
	user := s.State.UserByAPIKey(apiKey)
	if user == nil || !userActive(s.State, user) {
		return nil, fail
	}
	// verifyRequest asks commandAvailable before it checks the signature, so
	// a request with a valid key but a wrong signature counts against the
	// API limit too.
	if err := s.commandAvailable(user, api.Name, now); err != nil {
		return nil, err
	}
	if user.SecretKey == "" {
		return nil, fail
	}
	if !validSignature(strings.Join(parts, "&"), user.SecretKey, signature) {
		return nil, fail
	}
	return user, nil
}

// validSignature compares in constant time, like ConstantTimeComparator.
func validSignature(unsigned, secret, signature string) bool {
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write([]byte(strings.ToLower(unsigned)))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return subtle.ConstantTimeCompare([]byte(want), []byte(signature)) == 1
}

// javaURLEncode is java.net.URLEncoder.encode(value, "UTF-8") followed by
// CloudStack's replaceAll("\\+", "%20"): letters, digits and . - * _ stay,
// everything else becomes %XX of its UTF-8 bytes. Note that '~' is encoded,
// unlike Go's and Python's escaping.
func javaURLEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// tzLayouts are the formats DateUtil.parseTZDateString accepts for expires:
// ISO offsets (Z, +00:00), "+0000" offsets, a legacy literal 'Z' followed by
// an offset, each with optional fractional seconds (Go accepts a fraction
// after the seconds even when the layout has none).
var tzLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05-0700",
	"2006-01-02T15:04:05Z07",
	"2006-01-02T15:04:05Z-0700",
}

func parseTZDate(s string) (time.Time, bool) {
	for _, layout := range tzLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// roleSet is a set of the non-root default roles.
type roleSet uint8

const (
	rsResourceAdmin roleSet = 1 << iota
	rsDomainAdmin
	rsUser
	rsNone    roleSet = 0
	rsTenants         = rsResourceAdmin | rsDomainAdmin | rsUser
)

// In reports whether role r is one of the set s.
func In(r model.RoleType, s roleSet) bool {
	switch r {
	case model.RoleAdmin:
		return true
	case model.RoleResourceAdmin:
		return s&rsResourceAdmin != 0
	case model.RoleDomainAdmin:
		return s&rsDomainAdmin != 0
	case model.RoleUser:
		return s&rsUser != 0
	}
	return false
}

// RolePermissions says which non-root default roles may call each command
// the simulator implements: the union of the roles whose rows of
// create-default-role-api-mappings.sql allow it (role ids 2, 3, 4) and the
// types its Cmd class's @APICommand authorizes. The comment names the Cmd
// class (under api/src/main/java/org/apache/cloudstack/api/command/) and
// where the answer comes from: "sql" rows, "annotation", or "none" when the
// class's @APICommand has no authorized and no default role has a row.
var RolePermissions = map[string]roleSet{
	// Accounts, users, keys.
	"listDomains":      rsResourceAdmin | rsDomainAdmin, // admin.domain.ListDomainsCmd: sql 2, 3
	"listAccounts":     rsTenants,                       // user.account.ListAccountsCmd: sql 2, 3, 4
	"createAccount":    rsResourceAdmin | rsDomainAdmin, // admin.account.CreateAccountCmd: sql 2, 3 (no authorized)
	"listUsers":        rsTenants,                       // admin.user.ListUsersCmd: sql 2, 3, 4
	"getUser":          rsNone,                          // admin.user.GetUserCmd: none
	"getUserKeys":      rsTenants,                       // admin.user.GetUserKeysCmd: annotation {User, Admin, DomainAdmin, ResourceAdmin}
	"registerUserKeys": rsTenants,                       // admin.user.RegisterCmd: sql 2, 3, 4
	// Projects (ProjectManagerImpl.createProject, addAccountToProject; QueryManagerImpl.listProjects).
	"createProject":       rsTenants, // user.project.CreateProjectCmd: sql 2, 3, 4
	"listProjects":        rsTenants, // user.project.ListProjectsCmd: sql 2, 3, 4
	"addAccountToProject": rsTenants, // user.account.AddAccountToProjectCmd: sql 2, 3, 4
	// Discovery, jobs, capabilities.
	"listApis":            rsTenants, // ApiDiscovery's ListApisCmd: sql 2, 3, 4
	"listCapabilities":    rsTenants, // user.config.ListCapabilitiesCmd: sql 2, 3, 4
	"queryAsyncJobResult": rsTenants, // user.job.QueryAsyncJobResultCmd: sql 2, 3, 4
	"listAsyncJobs":       rsTenants, // user.job.ListAsyncJobsCmd: sql 2, 3, 4
	"listHypervisors":     rsTenants, // user.config.ListHypervisorsCmd: sql 2, 3, 4
	// Metrics (4.17, after the 4.9 mapping file).
	"listManagementServersMetrics": rsNone, // metrics ListMgmtsMetricsCmd: annotation {Admin}
	// Settings.
	"listConfigurations":  rsNone, // admin.config.ListCfgsByCmd: none (see the fidelity table on later upgrades)
	"updateConfiguration": rsNone, // admin.config.UpdateCfgCmd: none
	// Zones and infrastructure.
	"listZones":                 rsTenants,       // user.zone.ListZonesCmd: sql 2, 3, 4
	"createZone":                rsNone,          // admin.zone.CreateZoneCmd: none
	"updateZone":                rsNone,          // admin.zone.UpdateZoneCmd: none
	"createPod":                 rsNone,          // admin.pod.CreatePodCmd: none
	"listPods":                  rsResourceAdmin, // admin.pod.ListPodsByCmd: sql 2
	"addCluster":                rsNone,          // admin.cluster.AddClusterCmd: none
	"listClusters":              rsResourceAdmin, // admin.cluster.ListClustersCmd: sql 2
	"addHost":                   rsResourceAdmin, // admin.host.AddHostCmd: sql 2
	"listHosts":                 rsResourceAdmin, // admin.host.ListHostsCmd: sql 2
	"prepareHostForMaintenance": rsNone,          // admin.host.PrepareForMaintenanceCmd: none
	"cancelHostMaintenance":     rsNone,          // admin.host.CancelMaintenanceCmd: none
	"createStoragePool":         rsNone,          // admin.storage.CreateStoragePoolCmd: none
	"listStoragePools":          rsResourceAdmin, // admin.storage.ListStoragePoolsCmd: sql 2
	"addImageStore":             rsNone,          // admin.storage.AddImageStoreCmd: none
	"listImageStores":           rsNone,          // admin.storage.ListImageStoresCmd: none
	// Physical networks and providers.
	"createPhysicalNetwork":                rsNone,                          // admin.network.CreatePhysicalNetworkCmd: none
	"updatePhysicalNetwork":                rsNone,                          // admin.network.UpdatePhysicalNetworkCmd: none
	"listPhysicalNetworks":                 rsNone,                          // admin.network.ListPhysicalNetworksCmd: none
	"addTrafficType":                       rsNone,                          // admin.usage.AddTrafficTypeCmd: none
	"listTrafficTypes":                     rsNone,                          // admin.usage.ListTrafficTypesCmd: none
	"listNetworkServiceProviders":          rsNone,                          // admin.network.ListNetworkServiceProvidersCmd: none
	"updateNetworkServiceProvider":         rsNone,                          // admin.network.UpdateNetworkServiceProviderCmd: none
	"listVirtualRouterElements":            rsResourceAdmin | rsDomainAdmin, // admin.router.ListVirtualRouterElementsCmd: sql 2, 3
	"configureVirtualRouterElement":        rsResourceAdmin | rsDomainAdmin, // admin.router.ConfigureVirtualRouterElementCmd: sql 2, 3
	"listInternalLoadBalancerElements":     rsResourceAdmin | rsDomainAdmin, // admin.internallb.ListInternalLoadBalancerElementsCmd: sql 2, 3
	"configureInternalLoadBalancerElement": rsResourceAdmin | rsDomainAdmin, // admin.internallb.ConfigureInternalLoadBalancerElementCmd: sql 2, 3
	"createVlanIpRange":                    rsNone,                          // admin.vlan.CreateVlanIpRangeCmd: none
	"listVlanIpRanges":                     rsNone,                          // admin.vlan.ListVlanIpRangesCmd: none
	// Offerings.
	"createNetworkOffering": rsNone,                          // admin.network.CreateNetworkOfferingCmd: none
	"updateNetworkOffering": rsNone,                          // admin.network.UpdateNetworkOfferingCmd: none
	"listNetworkOfferings":  rsTenants,                       // user.network.ListNetworkOfferingsCmd: sql 2, 3, 4
	"createServiceOffering": rsResourceAdmin | rsDomainAdmin, // admin.offering.CreateServiceOfferingCmd: sql 2, 3
	"deleteServiceOffering": rsResourceAdmin | rsDomainAdmin, // admin.offering.DeleteServiceOfferingCmd: sql 2, 3
	"listServiceOfferings":  rsTenants,                       // user.offering.ListServiceOfferingsCmd: sql 2, 3, 4
	"createDiskOffering":    rsResourceAdmin | rsDomainAdmin, // admin.offering.CreateDiskOfferingCmd: sql 2, 3
	"deleteDiskOffering":    rsResourceAdmin | rsDomainAdmin, // admin.offering.DeleteDiskOfferingCmd: sql 2, 3
	"listDiskOfferings":     rsTenants,                       // user.offering.ListDiskOfferingsCmd: sql 2, 3, 4
	"listOsTypes":           rsTenants,                       // user.guest.ListGuestOsCmd: sql 2, 3, 4
	"listOsCategories":      rsTenants,                       // user.guest.ListGuestOsCategoriesCmd: sql 2, 3, 4
	// Templates.
	"listTemplates":              rsTenants, // user.template.ListTemplatesCmd: sql 2, 3, 4
	"registerTemplate":           rsTenants, // user.template.RegisterTemplateCmd: sql 2, 3, 4
	"deleteTemplate":             rsTenants, // user.template.DeleteTemplateCmd: sql 2, 3, 4
	"copyTemplate":               rsTenants, // user.template.CopyTemplateCmd: sql 2, 3, 4
	"getUploadParamsForTemplate": rsTenants, // user.template.GetUploadParamsForTemplateCmd: sql 2, 3, 4
	"updateTemplate":             rsTenants, // user.template.UpdateTemplateCmd: sql 2, 3, 4
	// ISOs.
	"getUploadParamsForIso": rsTenants, // user.iso.GetUploadParamsForIsoCmd: annotation (Admin, ResourceAdmin, DomainAdmin, User)
	"registerIso":           rsTenants, // user.iso.RegisterIsoCmd: as registerTemplate (its sql rows not read)
	"listIsos":              rsTenants, // user.iso.ListIsosCmd: sql 4 (2, 3 not read)
	"deleteIso":             rsTenants, // user.iso.DeleteIsoCmd: sql 2, 4
	"attachIso":             rsTenants, // user.iso.AttachIsoCmd: sql 2, 4
	"detachIso":             rsTenants, // user.iso.DetachIsoCmd: sql 4 (2, 3 not read)
	"updateIso":             rsTenants, // user.iso.UpdateIsoCmd: sql 3 (2, 4 not read; as updateTemplate)
	// Virtual machines.
	"deployVirtualMachine":      rsTenants, // user.vm.DeployVMCmd: sql 2, 3, 4
	"listVirtualMachines":       rsTenants, // user.vm.ListVMsCmd: sql 2, 3, 4
	"startVirtualMachine":       rsTenants, // user.vm.StartVMCmd: sql 2, 3, 4
	"stopVirtualMachine":        rsTenants, // user.vm.StopVMCmd: sql 2, 3, 4
	"rebootVirtualMachine":      rsTenants, // user.vm.RebootVMCmd: sql 2, 3, 4
	"destroyVirtualMachine":     rsTenants, // user.vm.DestroyVMCmd: sql 2, 3, 4
	"expungeVirtualMachine":     rsTenants, // admin.vm.ExpungeVMCmd: sql 2, 3, 4 (UserVmManagerImpl still checks allow.user.expunge.recover.vm)
	"recoverVirtualMachine":     rsTenants, // admin.vm.RecoverVMCmd: sql 2, 3, 4 (same setting)
	"updateVirtualMachine":      rsTenants, // user.vm.UpdateVMCmd: sql 2, 3, 4
	"getVirtualMachineUserData": rsTenants, // admin.vm.GetVMUserDataCmd: sql 2, 3, 4
	// Volumes and snapshots.
	"listVolumes":    rsTenants, // user.volume.ListVolumesCmd: sql 2, 3, 4
	"createVolume":   rsTenants, // user.volume.CreateVolumeCmd: sql 2, 3, 4
	"attachVolume":   rsTenants, // user.volume.AttachVolumeCmd: sql 2, 3, 4
	"detachVolume":   rsTenants, // user.volume.DetachVolumeCmd: sql 2, 3, 4
	"deleteVolume":   rsTenants, // user.volume.DeleteVolumeCmd: sql 2, 3, 4
	"resizeVolume":   rsTenants, // user.volume.ResizeVolumeCmd: sql 2, 3, 4
	"createSnapshot": rsTenants, // user.snapshot.CreateSnapshotCmd: sql 2, 3, 4
	"deleteSnapshot": rsTenants, // user.snapshot.DeleteSnapshotCmd: sql 2, 3, 4
	"listSnapshots":  rsTenants, // user.snapshot.ListSnapshotsCmd: sql 2, 3, 4

	// user.volume.ChangeOfferingForVolumeCmd (4.17): no 4.9 row; authorized = {Admin, ResourceAdmin,
	// DomainAdmin, User} in the revision with shrinkok (the earlier one had none). Departure: whether
	// 4.22's upgrade scripts add rules for it to the default roles was not read.
	"changeOfferingForVolume": rsTenants,

	// Tags, key pairs, groups.
	"createTags":             rsTenants, // user.tag.CreateTagsCmd: sql 2, 3, 4
	"deleteTags":             rsTenants, // user.tag.DeleteTagsCmd: sql 2, 3, 4
	"listTags":               rsTenants, // user.tag.ListTagsCmd: sql 2, 3, 4
	"createSSHKeyPair":       rsTenants, // user.ssh.CreateSSHKeyPairCmd: sql 2, 3, 4
	"registerSSHKeyPair":     rsTenants, // user.ssh.RegisterSSHKeyPairCmd: sql 2, 3, 4
	"listSSHKeyPairs":        rsTenants, // user.ssh.ListSSHKeyPairsCmd: sql 2, 3, 4
	"deleteSSHKeyPair":       rsTenants, // user.ssh.DeleteSSHKeyPairCmd: sql 2, 3, 4
	"listAffinityGroupTypes": rsTenants, // user.affinitygroup.ListAffinityGroupTypesCmd: sql 2, 3, 4
	"createAffinityGroup":    rsTenants, // user.affinitygroup.CreateAffinityGroupCmd: sql 2, 3, 4
	"listAffinityGroups":     rsTenants, // user.affinitygroup.ListAffinityGroupsCmd: sql 2, 3, 4
	"deleteAffinityGroup":    rsTenants, // user.affinitygroup.DeleteAffinityGroupCmd: sql 2, 3, 4
	"createSecurityGroup":    rsTenants, // user.securitygroup.CreateSecurityGroupCmd: sql 2, 3, 4
	"listSecurityGroups":     rsTenants, // user.securitygroup.ListSecurityGroupsCmd: sql 2, 3, 4
	// Networks, addresses, rules.
	"createNetwork":                 rsTenants, // user.network.CreateNetworkCmd: sql 2, 3, 4
	"listNetworks":                  rsTenants, // user.network.ListNetworksCmd: sql 2, 3, 4
	"associateIpAddress":            rsTenants, // user.address.AssociateIPAddrCmd: sql 2, 3, 4
	"disassociateIpAddress":         rsTenants, // user.address.DisassociateIPAddrCmd: sql 2, 3, 4
	"listPublicIpAddresses":         rsTenants, // user.address.ListPublicIpAddressesCmd: sql 2, 3, 4
	"enableStaticNat":               rsTenants, // user.nat.EnableStaticNatCmd: sql 2, 3, 4
	"disableStaticNat":              rsTenants, // user.nat.DisableStaticNatCmd: sql 2, 3, 4
	"createIpForwardingRule":        rsTenants, // user.nat.CreateIpForwardingRuleCmd: sql 2, 3, 4
	"deleteIpForwardingRule":        rsTenants, // user.nat.DeleteIpForwardingRuleCmd: sql 2, 3, 4
	"listIpForwardingRules":         rsTenants, // user.nat.ListIpForwardingRulesCmd: sql 2, 3, 4
	"createFirewallRule":            rsTenants, // user.firewall.CreateFirewallRuleCmd: sql 2, 3, 4
	"deleteFirewallRule":            rsTenants, // user.firewall.DeleteFirewallRuleCmd: sql 2, 3, 4
	"listFirewallRules":             rsTenants, // user.firewall.ListFirewallRulesCmd: sql 2, 3, 4
	"createLoadBalancerRule":        rsTenants, // user.loadbalancer.CreateLoadBalancerRuleCmd: sql 2, 3, 4
	"deleteLoadBalancerRule":        rsTenants, // user.loadbalancer.DeleteLoadBalancerRuleCmd: sql 2, 3, 4
	"updateLoadBalancerRule":        rsTenants, // user.loadbalancer.UpdateLoadBalancerRuleCmd: sql 2, 3, 4
	"listLoadBalancerRules":         rsTenants, // user.loadbalancer.ListLoadBalancerRulesCmd: sql 2, 3, 4
	"assignToLoadBalancerRule":      rsTenants, // user.loadbalancer.AssignToLoadBalancerRuleCmd: sql 2, 3, 4
	"removeFromLoadBalancerRule":    rsTenants, // user.loadbalancer.RemoveFromLoadBalancerRuleCmd: sql 2, 3, 4
	"listLoadBalancerRuleInstances": rsTenants, // user.loadbalancer.ListLoadBalancerRuleInstancesCmd: sql 2, 3, 4
	// VPCs and network ACLs: rows not read here; every tenant role, as for
	// createNetwork (the user.vpc and user.network commands).
	"listVPCOfferings":      rsTenants, // user.vpc.ListVPCOfferingsCmd
	"createVPC":             rsTenants, // user.vpc.CreateVPCCmd
	"listVPCs":              rsTenants, // user.vpc.ListVPCsCmd
	"deleteVPC":             rsTenants, // user.vpc.DeleteVPCCmd
	"createNetworkACLList":  rsTenants, // user.network.CreateNetworkACLListCmd
	"listNetworkACLLists":   rsTenants, // user.network.ListNetworkACLListsCmd
	"deleteNetworkACLList":  rsTenants, // user.network.DeleteNetworkACLListCmd
	"replaceNetworkACLList": rsTenants, // user.network.ReplaceNetworkACLListCmd
	"createNetworkACL":      rsTenants, // user.network.CreateNetworkACLCmd
	"listNetworkACLs":       rsTenants, // user.network.ListNetworkACLsCmd
	"deleteNetworkACL":      rsTenants, // user.network.DeleteNetworkACLCmd
}

// commandAvailable is ApiServer.checkCommandAvailable: each API checker in
// the order its module loads (module names in order, as the children of
// the "api" module are kept by name in DefaultModuleDefinition and
// ModuleLoadingComparator sorts them: acl-dynamic-role-based before
// rate-limit), so a command the role refuses is not counted against the API
// limit. Each checker's refusal is answered by ApiServer.commandAvailable.
func (s *Engine) commandAvailable(u *model.User, command string, at time.Time) *APIError {
	if err := roleAllowsCommand(s.State, u, command); err != nil {
		return err
	}
	return s.Throttle.checkAccess(s.State.Account(u.AccountID), at)
}

// roleAllowsCommand is DynamicRoleBasedAPIAccessChecker.checkAccess as
// ApiServer.commandAvailable reports it: the checker's
// UnavailableCommandException becomes a 432 ServerApiException
// (UNSUPPORTED_ACTION_ERROR, answered as "errorresponse",
// getSerializedApiError). A command the simulator does not implement passes,
// so that its answer names the gap.
func roleAllowsCommand(st *model.State, u *model.User, command string) *APIError {
	a := st.Account(u.AccountID)
	if _, implemented := Registered[command]; !implemented || RoleAllows(a, command) {
		return nil
	}
	name := ""
	if a != nil {
		name = a.Name
	}
	return &APIError{Code: CodeUnsupported, CSCode: CsServerAPIException, responseName: "errorresponse",
		Text: fmt.Sprintf("The API [%s] does not exist or is not available for the account %s.", command, name)}
}

// RoleAllows is checkApiPermissionByRole over rolePermissions: a command
// without a row is the root admin's only.
func RoleAllows(a *model.Account, command string) bool {
	return a != nil && In(a.Role(), RolePermissions[command])
}

// userActive is ApiServer.verifyRequest's (and verifyUser's) check that both
// the user and its account are enabled before any request is accepted.
func userActive(st *model.State, u *model.User) bool {
	a := st.Account(u.AccountID)
	return u.State == model.AccountEnabled && a != nil && a.State == model.AccountEnabled
}
