package dispatch

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"github.com/cloudfoundry/bosh-cpi-go/rpc"
)

// methodArguments names the arguments of every method the CPI serves, in
// order, as the CPI API v2 reference names them: the methods of
// bosh-cpi-go's apiv1.ActionFactory.Create, and update_disk, served ahead of
// it (updatedisk.go, interceptUpdateDisk). TestEveryMethodIsServed holds this table to the
// dispatcher.
var methodArguments = map[string][]string{
	"info":                          nil,
	"create_stemcell":               {"image_path", "cloud_properties"},
	"delete_stemcell":               {"stemcell_cid"},
	"create_vm":                     {"agent_id", "stemcell_cid", "cloud_properties", "networks", "disk_cids", "environment"},
	"delete_vm":                     {"vm_cid"},
	"calculate_vm_cloud_properties": {"desired_instance_size"},
	"set_vm_metadata":               {"vm_cid", "metadata"},
	"has_vm":                        {"vm_cid"},
	"reboot_vm":                     {"vm_cid"},
	"get_disks":                     {"vm_cid"},
	"create_disk":                   {"size", "cloud_properties", "vm_locality"},
	"delete_disk":                   {"disk_cid"},
	"attach_disk":                   {"vm_cid", "disk_cid"},
	"detach_disk":                   {"vm_cid", "disk_cid"},
	"has_disk":                      {"disk_cid"},
	"resize_disk":                   {"disk_cid", "new_size"},
	"update_disk":                   {"disk_cid", "new_size", "cloud_properties"},
	"set_disk_metadata":             {"disk_cid", "metadata"},
	"snapshot_disk":                 {"disk_cid", "metadata"},
	"delete_snapshot":               {"snapshot_cid"},
}

// Methods are the methods the CPI serves, sorted (help lists them).
func Methods() []string {
	names := make([]string, 0, len(methodArguments))
	for m := range methodArguments {
		names = append(names, m)
	}
	slices.Sort(names)
	return names
}

// servedActions answers a method the CPI does not serve with the list of
// those it does (bosh-cpi-go names only the unknown one), and hands the
// caller each action with its method's name, for argumentCaller to name
// the argument at fault.
type servedActions struct {
	rpc.ActionFactory
}

// namedAction is an action of bosh-cpi-go's (a func) and its method.
type namedAction struct {
	method string
	run    interface{}
}

// Create implements rpc.ActionFactory. A request api_version above 2 is
// refused by the factory below, as it was before this check.
func (a servedActions) Create(method string, apiVersion int, ctx apiv1.CallContext) (interface{}, error) {
	if _, served := methodArguments[method]; !served && apiVersion <= 2 {
		return nil, fmt.Errorf("unknown method '%s'; the CloudStack CPI serves %s", method, strings.Join(Methods(), ", "))
	}
	action, err := a.ActionFactory.Create(method, apiVersion, ctx)
	if err != nil {
		return nil, err
	}
	return namedAction{method: method, run: action}, nil
}
