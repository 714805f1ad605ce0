package simulator

// Entity kinds of the VM family and of what a VM deploy touches.
const (
	kindVolume        = "volume"
	kindSSHKeyPair    = "sshkeypair"
	kindAffinityGroup = "affinitygroup"
	kindSecurityGroup = "securitygroup"
	kindPublicIP      = "ipaddress"
	kindResourceTag   = "resourcetag"
)

// csInsufficientServerCap is InsufficientServerCapacityException's
// cserrorcode.
const csInsufficientServerCap = 4335

// vmTables are the state tables of the VM family (volumes, tags, SSH key
// pairs, affinity and security groups, public IP addresses). The state
// embeds them, so their JSON fields sit next to the other tables.
type vmTables struct {
	Volumes        []*Volume        `json:"volumes,omitempty"`
	ResourceTags   []*ResourceTag   `json:"resourcetags,omitempty"`
	SSHKeyPairs    []*SSHKeyPair    `json:"sshkeypairs,omitempty"`
	AffinityGroups []*AffinityGroup `json:"affinitygroups,omitempty"`
	SecurityGroups []*SecurityGroup `json:"securitygroups,omitempty"`
	PublicIPs      []*PublicIP      `json:"publicips,omitempty"`
	Snapshots      []*Snapshot      `json:"snapshots,omitempty"` // volume snapshots (snapshots.go)
}

func init() {
	for name, kind := range map[string]string{
		"volumeid":            kindVolume,
		"affinitygroupid":     kindAffinityGroup,
		"securitygroupid":     kindSecurityGroup,
		"ipaddressid":         kindPublicIP,
		"associatednetworkid": kindNetwork,
	} {
		paramKinds[name] = kind
	}
}

// addOwner adds the account and domain fields every owned entity's response
// carries.
func (c *Call) addOwner(v map[string]any, accountID string) {
	a := c.st.account(accountID)
	if a == nil {
		return
	}
	v["account"] = a.Name
	if d := c.st.domain(a.DomainID); d != nil {
		v["domainid"], v["domain"], v["domainpath"] = d.ID, d.Name, d.displayPath()
	}
}
