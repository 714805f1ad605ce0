package kernel

import (
	"fmt"
	"slices"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// The command table stands in for ApiServer.start, which fills
// s_apiNameCmdClassMap once from every PluggableService.getCommands list; a
// request is then looked up in it by name (ApiServer.handleRequest).

// Call is one API request that passed authentication and schema validation.
// Handlers run with the server's state lock held, so they read and change
// c.st freely; a handler that changes state calls c.changed so the state is
// saved before the answer leaves.
type Call struct {
	Command string      // canonical command name, e.g. "listZones"
	API     *schema.API // the command's entry in the schema of the release served
	Params  Params
	User    *model.User
	Account *model.Account

	Host   string // Host header of the request, for URLs pointing back at the simulator
	Engine *Engine
	State  *model.State
	// Arrived is when the request came: the API limit counts it then, as
	// ApiRateLimitServiceImpl.checkAccess (hasApiRateLimitBeenExceeded) runs
	// on the request's own thread before its command (engine.go).
	Arrived time.Time
}

// Changed marks the state dirty: it is persisted when the request finishes.
func (c *Call) Changed() { c.Engine.Dirty = true }

// syncFunc answers a synchronous command with the object that goes under
// "<command>response" (for lists, see lister).
type syncFunc func(c *Call) (any, error)

// asyncFunc checks an asynchronous command's input synchronously - an error
// is answered at once, as CloudStack does for parameter errors - and returns
// the job to queue.
type asyncFunc func(c *Call) (*AsyncJob, error)

// Command is a registered command implementation. Exactly one of sync and
// async is set, matching the command's isasync in the schema.
type Command struct {
	Name   string
	IDKind string // entity kind the command's "id"/"ids" parameters name
	Sync   syncFunc
	Async  asyncFunc
	// ResponseName replaces "<command>response" as the answer's key, for the
	// commands whose getCommandName says otherwise.
	ResponseName string
}

// Registered maps canonical command names to their implementation, as
// ApiServer's s_apiNameCmdClassMap maps a command name to its class.
// The simulator's registration fills it from each family's Commands().
var Registered = map[string]Command{}

// Register adds command implementations. It panics on programming errors
// (unknown command, sync/async mismatch, duplicates) so they surface in the
// first test run.
func Register(groups ...[]Command) {
	for _, cmd := range slices.Concat(groups...) {
		api, ok := schema.Lookup(cmd.Name)
		switch {
		case !ok || api.Name != cmd.Name:
			panic(fmt.Sprintf("simulator: %q is not a CloudStack %s command", cmd.Name, schema.Newest))
		case api.IsAsync != (cmd.Async != nil) || (cmd.Sync == nil) == (cmd.Async == nil):
			panic(fmt.Sprintf("simulator: %s: isasync=%v does not match its handler", cmd.Name, api.IsAsync))
		}
		if _, dup := Registered[cmd.Name]; dup {
			panic(fmt.Sprintf("simulator: %s registered twice", cmd.Name))
		}
		Registered[cmd.Name] = cmd
	}
}

// ParamKinds maps UUID parameter names to the entity kind they refer to, for
// every kind the simulator stores. Parameters not listed here (or naming
// kinds no family stores yet) are only checked for UUID syntax. The families'
// kinds are here too, so no family needs to add to it.
var ParamKinds = map[string]string{
	"domainid":            model.KindDomain,
	"accountid":           model.KindAccount,
	"userid":              model.KindUser,
	"roleid":              model.KindRole,
	"zoneid":              model.KindZone,
	"podid":               model.KindPod,
	"clusterid":           model.KindCluster,
	"hostid":              model.KindHost,
	"physicalnetworkid":   model.KindPhysicalNetwork,
	"networkid":           model.KindNetwork,
	"networkofferingid":   model.KindNetworkOffering,
	"serviceofferingid":   model.KindServiceOffering,
	"diskofferingid":      model.KindDiskOffering,
	"oscategoryid":        model.KindOSCategory,
	"ostypeid":            model.KindOSType,
	"virtualmachineid":    model.KindVM,
	"jobid":               model.KindJob,
	"nspid":               model.KindProvider,
	"publicipid":          model.KindPublicIP,
	"snapshotid":          model.KindSnapshot,
	"storageid":           model.KindStoragePool,
	"templateid":          model.KindTemplate,
	"sourcezoneid":        model.KindZone,
	"destzoneid":          model.KindZone,
	"volumeid":            model.KindVolume,
	"affinitygroupid":     model.KindAffinityGroup,
	"securitygroupid":     model.KindSecurityGroup,
	"ipaddressid":         model.KindPublicIP,
	"associatednetworkid": model.KindNetwork,
	"managementserverid":  model.KindMgmtServer, // ManagementServerResponse UUIDs
	"projectid":           model.KindProject,    // ProjectResponse UUIDs (ParamProcessWorker.translateUuidToInternalId)
	"vpcid":               model.KindVPC,
	"vpcofferingid":       model.KindVPCOffering,
	"aclid":               model.KindNetworkACLList,
}
