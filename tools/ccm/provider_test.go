package ccm

import (
	"strings"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/simtest"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// The root admin's keys: listManagementServersMetrics, which the provider
// calls when it starts, is a root admin command.
const apiKey, secretKey = "ccm-root-admin-key", "ccm-root-admin-secret"

// release is a CloudStack release the provider runs against.
type release struct {
	// version is the release the simulator is started as;
	// listManagementServersMetrics' version begins with it and a dot.
	version schema.Version
	// cidrInPlace: the provider (checkLoadBalancerRule) changes a rule's
	// CIDR list with updateLoadBalancerRule cidrlist from 4.22, which added
	// the parameter to UpdateLoadBalancerRuleCmd, and deletes and recreates
	// the rule on older releases.
	cidrInPlace bool
	// acceptance runs the provider's own tests too. What they send
	// (listManagementServersMetrics, listLoadBalancerRules) is the same on
	// both releases, so they run on the newest alone; the older release
	// runs the lifecycle, whose CIDR update differs.
	acceptance bool
}

// releases are the CloudStack releases the provider is run against, as its
// own CI runs the latest two.
var releases = []release{
	{version: schema.V422, cidrInPlace: true, acceptance: true},
	{version: schema.V420, cidrInPlace: false},
}

// cloud is a simulator started as one release, with the root admin's
// client and the catalog both topologies use.
type cloud struct {
	release
	sim *simtest.Sim
	cs  *cloudstack.CloudStackClient
	catalog
}

// TestProvider runs, on each release, the provider's load-balancer
// lifecycle (and on the newest its own tests) on the development guide's
// isolated network (phase 1, the admin's account) and then on its VPC tier
// (phase 2, a project), as the guide's make test-e2e and test-e2e-vpc do.
func TestProvider(t *testing.T) {
	for _, r := range releases {
		t.Run(string(r.version), func(t *testing.T) {
			c := start(t, r)
			isolated := c.isolatedTopology(t)
			t.Run("isolated", func(t *testing.T) { c.phase(t, isolated) })
			vpc := c.vpcTopology(t)
			t.Run("vpc", func(t *testing.T) { c.phase(t, vpc) })
		})
	}
}

// phase runs the provider's tests, then the lifecycles, on one topology.
func (c *cloud) phase(t *testing.T, top topology) {
	if c.acceptance {
		t.Run("acceptance", func(t *testing.T) { runAcceptance(t, c.sim.URL, top.projectID) })
	}
	t.Run("lifecycle", func(t *testing.T) { c.lifecycle(t, top) })
	t.Run("requested address", func(t *testing.T) { c.requestedAddress(t, top) })
}

// start serves a simulator in this process, as the release r, with the
// Simulator hypervisor of the guide's zone (marvin's advanced.cfg), and
// checks it reports r as the provider reads it.
func start(t *testing.T, r release) *cloud {
	t.Helper()
	sim := simtest.Serve(t, simulator.Options{CloudStackVersion: r.version, AdminAPIKey: apiKey, AdminSecretKey: secretKey,
		Hypervisor: "Simulator"})
	cs := cloudstack.NewAsyncClient(sim.URL, apiKey, secretKey, false)
	m, err := cs.Management.ListManagementServersMetrics(cs.Management.NewListManagementServersMetricsParams())
	if err != nil || m.Count == 0 {
		t.Fatalf("listManagementServersMetrics: %v", err)
	}
	if v := m.ManagementServersMetrics[0].Version; !strings.HasPrefix(v, string(r.version)+".") {
		t.Fatalf("the simulator says it is CloudStack %s, not %s", v, r.version)
	}
	return &cloud{release: r, sim: sim, cs: cs, catalog: lookUpCatalog(t, cs)}
}
