package dispatch

import (
	"fmt"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	"github.com/cloudfoundry/bosh-cpi-go/rpc"

	"github.com/bosh-cloudstack/cloudstack-cpi/cpi"
)

// updateDiskMethod is the CPI method the pinned bosh-cpi-go does not know:
// its apiv1.ActionFactory.Create switches over the other methods of CPI API
// v2 and answers any other name "Unknown method", which the dispatcher
// types NotImplemented.
const updateDiskMethod = "update_disk"

// interceptUpdateDisk puts update_disk in front of bosh-cpi-go's action
// factory. Every method passes through it: update_disk is built here, any
// other method (and update_disk at an api_version above 2) goes on to the
// factory untouched. update_disk's action is a func like the factory's, so
// the dispatcher decodes its arguments (disk CID, new size in MiB,
// cloud_properties) and answers its result, error and log as for its own
// methods, typing errors by their Type. When bosh-cpi-go learns update_disk,
// this interceptor goes.
func interceptUpdateDisk(actions rpc.ActionFactory, factory apiv1.CPIFactory) rpc.ActionFactory {
	return updateDiskInterceptor{ActionFactory: actions, factory: factory}
}

type updateDiskInterceptor struct {
	rpc.ActionFactory
	factory apiv1.CPIFactory
}

// Create implements rpc.ActionFactory. As for every method, a request
// api_version the dispatcher does not serve (above 2) and a context the
// factory cannot read are NotImplemented.
func (a updateDiskInterceptor) Create(method string, apiVersion int, ctx apiv1.CallContext) (interface{}, error) {
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
