package ccm

import (
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/simtest"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
)

// The root admin's keys: listManagementServersMetrics, which the provider
// calls when it starts, is a root admin command.
const apiKey, secretKey = "ccm-root-admin-key", "ccm-root-admin-secret"

// release is a CloudStack release the provider runs against.
type release struct {
	// name is the release; listManagementServersMetrics' version begins
	// with it and a dot.
	name string
	// cidrInPlace: the provider (checkLoadBalancerRule) changes a rule's
	// CIDR list with updateLoadBalancerRule cidrlist from 4.22, which added
	// the parameter to UpdateLoadBalancerRuleCmd, and deletes and recreates
	// the rule on older releases.
	cidrInPlace bool
}

// releases are the CloudStack releases the provider is run against: the
// simulator is 4.22 until it can be started as another release, whose row
// then goes here (the provider's own CI runs the latest two).
var releases = []release{
	{name: "4.22", cidrInPlace: true},
}

// cloud is a simulator started as one release, with the root admin's
// client and the catalog both topologies use.
type cloud struct {
	release
	sim *simtest.Sim
	cs  *cloudstack.CloudStackClient
	catalog
}

// TestProvider runs, on each release, the provider's acceptance tests and
// its load-balancer lifecycle on the development guide's isolated network
// (phase 1, the admin's account) and then on its VPC tier (phase 2, a
// project), as the guide's make test-e2e and test-e2e-vpc do.
func TestProvider(t *testing.T) {
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) {
			c := start(t, r)
			isolated := c.isolatedTopology(t)
			t.Run("isolated", func(t *testing.T) { c.phase(t, isolated) })
			vpc := c.vpcTopology(t)
			t.Run("vpc", func(t *testing.T) { c.phase(t, vpc) })
		})
	}
}

// phase runs the acceptance tests, then the lifecycles, on one topology.
func (c *cloud) phase(t *testing.T, top topology) {
	t.Run("acceptance", func(t *testing.T) { runAcceptance(t, c.sim.URL, top.projectID) })
	t.Run("lifecycle", func(t *testing.T) { c.lifecycle(t, top) })
	t.Run("requested address", func(t *testing.T) { c.requestedAddress(t, top) })
}

// start serves a simulator in this process, as the release r, with the
// Simulator hypervisor of the guide's zone (marvin's advanced.cfg), and
// checks it reports r as the provider reads it.
func start(t *testing.T, r release) *cloud {
	t.Helper()
	sim := simtest.Serve(t, simulator.Options{AdminAPIKey: apiKey, AdminSecretKey: secretKey, Hypervisor: "Simulator"})
	cs := cloudstack.NewAsyncClient(sim.URL, apiKey, secretKey, false)
	m, err := cs.Management.ListManagementServersMetrics(cs.Management.NewListManagementServersMetricsParams())
	if err != nil || m.Count == 0 {
		t.Fatalf("listManagementServersMetrics: %v", err)
	}
	if v := m.ManagementServersMetrics[0].Version; !strings.HasPrefix(v, r.name+".") {
		t.Fatalf("the simulator says it is CloudStack %s, not %s", v, r.name)
	}
	return &cloud{release: r, sim: sim, cs: cs, catalog: lookUpCatalog(t, cs)}
}
