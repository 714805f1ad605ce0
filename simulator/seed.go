package simulator

// Simulator plumbing: seeding only calls each family's seed, in marvin's
// deployDataCenter order; the CloudStack behaviour of each row is cited where
// the row is made (identity, template, network's VPC defaults, zonedeploy.go).

import (
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/identity"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/network"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/offering"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
)

// seedState builds a fresh management server: the root admin, the OS types
// and the builtin template CloudStack installs with, and unless empty the
// stock simulator zone (marvin's setup/dev/advanced.cfg, zonedeploy.go) and
// offerings.
func seedState(hypervisor string, empty bool, now time.Time) *model.State {
	st := model.NewState()
	st.ManagementServerID, _ = st.NewID(model.KindMgmtServer)
	identity.SeedAccounts(st, now)
	template.SeedOSTypes(st)
	template.SeedTemplates(st, hypervisor, now)
	network.SeedVPCDefaults(st, now)
	if !empty {
		seedZone(st, hypervisor, now)
		offering.SeedOfferings(st, now)
	}
	return st
}
