package main

import (
	"fmt"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"github.com/cloudfoundry/bosh-cpi-go/rpc"

	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
)

// updateDiskMethod is the CPI method the pinned bosh-cpi-go does not know:
// its action factory answers it NotImplemented ("Unknown method").
const updateDiskMethod = "update_disk"

// withUpdateDisk serves update_disk ahead of bosh-cpi-go's own actions, in
// the dispatcher's envelope: the dispatcher decodes the arguments (disk CID,
// new size in MiB, cloud_properties) as for its own methods and answers
// result, error and log as it does for them, typing errors by their Type.
func withUpdateDisk(actions rpc.ActionFactory, factory apiv1.CPIFactory) rpc.ActionFactory {
	return updateDiskActions{ActionFactory: actions, factory: factory}
}

type updateDiskActions struct {
	rpc.ActionFactory
	factory apiv1.CPIFactory
}

// Create implements rpc.ActionFactory. As for every method, a request
// api_version the dispatcher does not serve (above 2) and a context the
// factory cannot read are NotImplemented.
func (a updateDiskActions) Create(method string, apiVersion int, ctx apiv1.CallContext) (interface{}, error) {
	if method != updateDiskMethod || apiVersion > 2 {
		return a.ActionFactory.Create(method, apiVersion, ctx)
	}
	impl, err := a.factory.New(ctx)
	if err != nil {
		return nil, err
	}
	updater, ok := impl.(cpi.DiskUpdater)
	if !ok {
		return nil, fmt.Errorf("the CPI has no %s", updateDiskMethod)
	}
	return func(cid apiv1.DiskCID, newMiB int, props apiv1.CloudPropsImpl) (apiv1.DiskCID, error) {
		return updater.UpdateDisk(cid, newMiB, props)
	}, nil
}
