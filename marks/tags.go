package marks

// The tags that make a resource recognisably the CPI's, so that a later
// call can find and remove what an interrupted one left (a crash, a lost
// answer, a job that never finished).
const (
	// DirectorTag holds the uuid of the director whose CPI created the
	// resource (the request context's director_uuid).
	DirectorTag = "bosh-director-uuid"
	// AgentTag holds the agent_id of the VM a resource was created for.
	AgentTag = "bosh-agent-id"
	// IncompleteTag marks a resource whose creating call has not finished;
	// success removes it, so a resource that still has it is a leftover.
	IncompleteTag = "bosh-cpi-incomplete"
	// VIPIntentTag names the vip an incomplete VM's create_vm is about to
	// acquire, recorded before associateIpAddress: an address that intent
	// names and that has no AcquiredTag yet is the CPI's, not the
	// operator's (a crash between associateIpAddress and its createTags).
	VIPIntentTag = "bosh-cpi-vip"
	// AcquiredTag marks a public IP the CPI acquired, so delete_vm releases
	// only those and never an operator's reserved address.
	AcquiredTag = "bosh-cpi-acquired"
	// LBTag marks a VM whose create_vm had load-balancer rules (lbs):
	// only such a VM can be behind a rule the CPI created, so delete_vm
	// looks for rules only then.
	LBTag = "bosh-cpi-lbs"
	// LBCreatedTag is the tag a CPI-created load-balancer rule gets after
	// creation, for the operator (the rule's description is the mark).
	LBCreatedTag = "bosh-cpi-created"
	// ConfigDriveTag, in a template's mark, says its VMs read their
	// settings from a per-VM config drive ISO (an OpenStack KVM stemcell)
	// rather than from user data; on a VM, that its create_vm made it such
	// an ISO.
	ConfigDriveTag = "bosh-config-drive"
)
