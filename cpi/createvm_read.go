package cpi

// create_vm's first step: the VM type's cloud_properties read and
// checked, the networks split into NICs with the VM type's routes
// (createvm_networks.go), and every default of cpi.json applied once,
// right after (createvm_defaults.go), so that the plan and the deployment
// use each value as it is.

import (
	"strings"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// readVM reads create_vm's arguments and applies cpi.json's defaults.
func readVM(r callDeps, agentID, stemcellCID string, cp apiv1.VMCloudProps, networks apiv1.Networks,
	env apiv1.VMEnv) (vmWant, error) {
	props, err := vmtype.Read(cp)
	if err != nil {
		return vmWant{}, err
	}
	plan, refs, err := planNetworks(networks)
	if err == nil {
		err = plan.addRoutes(props.Routes)
	}
	if err != nil {
		return vmWant{}, err
	}
	w := withDefaults(r, props, env)
	w.agentID, w.networks, w.netRefs = agentID, plan, refs
	var cid string
	w.drive, cid = stemcellDrive(stemcellCID)
	w.template = strings.TrimPrefix(cid, lightPrefix)
	return w, nil
}
