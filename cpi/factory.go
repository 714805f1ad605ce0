// Package cpi holds the CPI methods, grouped by resource: stemcells, VMs,
// disks, snapshots, offerings and the formats info tells. Each turns a
// director request into calls on the CloudStack layer and answers in the
// CPI contract's terms.
// Each part holds only the CloudStack interfaces it calls, composed in its
// own small interface (stemcellCloud, vmCloud, …), so its type says what it
// depends on; tests give every part the one strict mock of cloudstack.API
// (cloudstackmock), which satisfies each small interface. The VM part
// reaches load-balancer rules (lbs), the catalog create_vm resolves its
// names in (catalog) and config drives (configDrives) through parts of
// their own, and the sweeps of what interrupted calls left are parts too
// (templateLeftovers, diskLeftovers, snapshotLeftovers).
package cpi

import (
	"encoding/json"
	"fmt"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
)

// Factory makes one CPI per request, as bosh-cpi-go asks.
type Factory struct {
	cfg    config.Config
	cloud  cloudstack.API
	logger boshlog.Logger
}

// NewFactory takes a validated config and a CloudStack layer. Anything that
// can fail is done before: bosh-cpi-go reports an error from New as
// NotImplemented, which would hide a config problem.
func NewFactory(cfg config.Config, cloud cloudstack.API, logger boshlog.Logger) Factory {
	return Factory{cfg: cfg, cloud: cloud, logger: logger}
}

// CallContext is what the director or bosh create-env sends beside the
// arguments.
type CallContext struct {
	DirectorUUID       string
	RequestID          string
	StemcellAPIVersion int
}

// CPI serves one request: bosh-cpi-go's dispatcher calls the methods of its
// parts, which it embeds.
type CPI struct {
	formats
	stemcells
	vms
	offerings
	disks
	snapshots
}

var _ apiv1.CPI = CPI{}

// callDeps is what every part knows of the call it serves: the config,
// the logger tagged with the request id, and the call context.
type callDeps struct {
	cfg    config.Config
	logger boshlog.Logger
	ctx    CallContext
}

// New implements apiv1.CPIFactory.
func (f Factory) New(ctx apiv1.CallContext) (apiv1.CPI, error) {
	call, err := readContext(ctx)
	if err != nil {
		return nil, err
	}
	return newCPI(callDeps{cfg: f.cfg, logger: f.logger, ctx: call}, f.cloud), nil
}

// newCPI hands each part the one CloudStack layer, seen through the
// interface the part declares.
func newCPI(r callDeps, cloud cloudstack.API) CPI {
	o := offerings{callDeps: r, cloud: cloud}
	return CPI{
		formats:   formats{cfg: r.cfg.Stemcell},
		stemcells: stemcells{callDeps: r, cloud: cloud, leftovers: templateLeftovers{callDeps: r, cloud: cloud}},
		vms: vms{callDeps: r, cloud: cloud, lbs: lbs{callDeps: r, cloud: cloud},
			catalog: catalog{callDeps: r, cloud: cloud, offerings: o}, drives: configDrives{callDeps: r, cloud: cloud}},
		offerings: o,
		disks:     disks{callDeps: r, cloud: cloud, offerings: o, leftovers: diskLeftovers{callDeps: r, cloud: cloud}},
		snapshots: snapshots{callDeps: r, cloud: cloud, leftovers: snapshotLeftovers{callDeps: r, cloud: cloud}},
	}
}

// readContext tolerates a request without context (an operator piping JSON
// by hand) but not a malformed one: a misread stemcell api_version would
// send agent settings the wrong way.
func readContext(ctx apiv1.CallContext) (CallContext, error) {
	if b, err := json.Marshal(ctx); err != nil || len(b) == 0 || string(b) == "null" {
		return CallContext{}, nil //nolint:nilerr // a context that does not even marshal is no context: tolerated, as above
	}
	// vm.stemcell.api_version is where apiv1.StemcellAPIVersion reads it;
	// read here with the rest, a wrong type is named in JSON words.
	var raw struct {
		DirectorUUID string `json:"director_uuid"`
		RequestID    string `json:"request_id"`
		VM           struct {
			Stemcell struct {
				APIVersion int `json:"api_version"`
			} `json:"stemcell"`
		} `json:"vm"`
	}
	if err := ctx.As(&raw); err != nil {
		return CallContext{}, fmt.Errorf("reading the call context: %w", jsonwords.Translate(err))
	}
	return CallContext{DirectorUUID: raw.DirectorUUID, RequestID: raw.RequestID, StemcellAPIVersion: raw.VM.Stemcell.APIVersion}, nil
}
