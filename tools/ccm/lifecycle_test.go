package ccm

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	provider "github.com/apache/cloudstack-kubernetes-provider"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
)

const clusterName = "ccm-e2e"

// sourceCIDRs is the CIDR list the lifecycle moves to: the source-cidrs
// annotation sets the rules' CIDR list, loadBalancerSourceRanges the
// firewall rules'.
var sourceCIDRs = []string{"10.0.0.0/8", "192.168.1.0/24"}

// loadBalancer is the provider as the cloud controller manager builds it:
// by its registered name from a cloud-config, scoped to projectID if any.
// No Kubernetes client is given, so it patches no annotations.
func (c *cloud) loadBalancer(t *testing.T, projectID string) cloudprovider.LoadBalancer {
	t.Helper()
	cfg := fmt.Sprintf("[Global]\napi-url = %s\napi-key = %s\nsecret-key = %s\n", c.sim.URL, apiKey, secretKey)
	if projectID != "" {
		cfg += "project-id = " + projectID + "\n"
	}
	p, err := cloudprovider.GetCloudProvider(provider.ProviderName, strings.NewReader(cfg))
	if err != nil || p == nil {
		t.Fatalf("the provider %s: %v", provider.ProviderName, err)
	}
	lb, ok := p.LoadBalancer()
	if !ok {
		t.Fatal("the provider has no load balancer")
	}
	return lb
}

// service is a LoadBalancer Service of two TCP ports, 80 and 8080: the
// ports a VPC's virtual router balances (the guide's troubleshooting).
func service(name, uid string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityNone,
			Ports: []corev1.ServicePort{
				{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080},
				{Name: "http-alt", Protocol: corev1.ProtocolTCP, Port: 8080, NodePort: 30081},
			}},
	}
}

func nodeList(names ...string) []*corev1.Node {
	out := make([]*corev1.Node, len(names))
	for i, n := range names {
		out[i] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
	}
	return out
}

// lifecycle creates a load balancer for two nodes, moves it to another
// pair, changes its algorithm and its CIDRs, and deletes it, checking
// CloudStack after each step; at the end CloudStack is as it was before.
func (c *cloud) lifecycle(t *testing.T, top topology) {
	lb := c.loadBalancer(t, top.projectID)
	svc := service("web", "6f1e2d3c-4b5a-4978-8a1b-2c3d4e5f6a7b")
	ctx := context.Background()
	before := c.snapshot(t, top)
	c.clearRequests(t)
	if _, exists, err := lb.GetLoadBalancer(ctx, clusterName, svc); err != nil || exists {
		t.Fatalf("GetLoadBalancer before EnsureLoadBalancer = %v, %v", exists, err)
	}

	st, err := lb.EnsureLoadBalancer(ctx, clusterName, svc, nodeList(worker, worker2))
	if err != nil {
		t.Fatalf("EnsureLoadBalancer for %s and %s: %v", worker, worker2, err)
	}
	want := balancer{name: lb.GetLoadBalancerName(ctx, clusterName, svc), ip: ingressIP(t, st),
		algorithm: "roundrobin", cidrs: []string{"0.0.0.0/0"}, members: []string{worker, worker2}}
	created := c.expectBalancer(t, top, want)
	c.expectAddress(t, top, want.ip)

	if err := lb.UpdateLoadBalancer(ctx, clusterName, svc, nodeList(worker, controlPlane)); err != nil {
		t.Fatalf("UpdateLoadBalancer to %s and %s: %v", worker, controlPlane, err)
	}
	want.members = []string{controlPlane, worker}
	sameRules(t, "UpdateLoadBalancer", created, c.expectBalancer(t, top, want))

	svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	c.ensure(t, lb, svc, worker, controlPlane)
	want.algorithm = "source"
	sameRules(t, "a new algorithm", created, c.expectBalancer(t, top, want))
	c.expectUnchanged(t, lb, svc, top, want, false)

	svc.Annotations = map[string]string{provider.ServiceAnnotationLoadBalancerSourceCidrs: strings.Join(sourceCIDRs, ",")}
	svc.Spec.LoadBalancerSourceRanges = sourceCIDRs
	c.ensure(t, lb, svc, worker, controlPlane)
	want.cidrs = sourceCIDRs
	if ids := c.expectBalancer(t, top, want); c.cidrInPlace {
		sameRules(t, "new CIDRs", created, ids)
	} else if fmt.Sprint(ids) == fmt.Sprint(created) {
		t.Errorf("the rules %v were not recreated for new CIDRs on CloudStack %s", ids, c.version)
	}

	c.expectUnchanged(t, lb, svc, top, want, c.cidrInPlace)

	c.checkpoint(t)
	c.deleteAndCompare(t, lb, svc, top, before)
}

// expectUnchanged runs EnsureLoadBalancer again without a change and checks
// it changed nothing. With redundantUpdates the provider is known to send
// one updateLoadBalancerRule a rule with the values it already has: the
// client's doing. CloudStack keeps a rule's CIDR list as it was last written,
// space separated by createPublicLoadBalancerRule (generateCidrString),
// comma separated by updateLoadBalancerRule (StringUtils.join(cidrList,
// ",")), both in LoadBalancingRulesManagerImpl, and answers it as kept
// (ApiLoadBalancerFirewallResponseServiceImpl.createLoadBalancerResponse:
// setCidrList(loadBalancer.getCidrList())); the provider's
// checkLoadBalancerRule splits it at spaces only, so after its own in-place
// update of two or more CIDRs it sees one CIDR and updates again, on every
// sync. The update changes nothing: the same CIDR list written again is no
// change to CloudStack (cidrListChanged compares the strings).
func (c *cloud) expectUnchanged(t *testing.T, lb cloudprovider.LoadBalancer, svc *corev1.Service, top topology, want balancer, redundantUpdates bool) {
	t.Helper()
	ids := c.expectBalancer(t, top, want)
	c.checkpoint(t)
	c.ensure(t, lb, svc, worker, controlPlane)
	redundant := c.expectNoChange(t, want)
	if !redundantUpdates && redundant > 0 || redundantUpdates && redundant != len(servicePorts) {
		t.Errorf("EnsureLoadBalancer without a change sent %d updateLoadBalancerRule with the rules' own values, want %d",
			redundant, map[bool]int{true: len(servicePorts)}[redundantUpdates])
	}
	sameRules(t, "EnsureLoadBalancer without a change", ids, c.expectBalancer(t, top, want))
}

// requestedAddress is a Service asking for an address the operator
// associated beforehand (spec.loadBalancerIP): the provider balances on it
// and, on delete, leaves it associated, as it did not associate it.
func (c *cloud) requestedAddress(t *testing.T, top topology) {
	ip := c.associate(t, top)
	t.Cleanup(func() { c.disassociate(t, ip) })
	lb := c.loadBalancer(t, top.projectID)
	svc := service("requested", "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
	svc.Spec.LoadBalancerIP = ip.address
	ctx := context.Background()
	before := c.snapshot(t, top)
	c.clearRequests(t)
	st, err := lb.EnsureLoadBalancer(ctx, clusterName, svc, nodeList(worker, worker2))
	if err != nil {
		t.Fatalf("EnsureLoadBalancer on %s: %v", ip.address, err)
	}
	if got := ingressIP(t, st); got != ip.address {
		t.Fatalf("EnsureLoadBalancer balances on %s, not the requested %s", got, ip.address)
	}
	want := balancer{name: lb.GetLoadBalancerName(ctx, clusterName, svc), ip: ip.address,
		algorithm: "roundrobin", cidrs: []string{"0.0.0.0/0"}, members: []string{worker, worker2}}
	c.expectBalancer(t, top, want)
	c.expectAddress(t, top, ip.address)
	c.deleteAndCompare(t, lb, svc, top, before)
}

// ensure is EnsureLoadBalancer on the named nodes, which must succeed.
func (c *cloud) ensure(t *testing.T, lb cloudprovider.LoadBalancer, svc *corev1.Service, nodes ...string) {
	t.Helper()
	if _, err := lb.EnsureLoadBalancer(context.Background(), clusterName, svc, nodeList(nodes...)); err != nil {
		t.Fatalf("EnsureLoadBalancer (affinity %s, annotations %v): %v", svc.Spec.SessionAffinity, svc.Annotations, err)
	}
}

// deleteAndCompare deletes the load balancer and checks CloudStack holds
// exactly what it held before (no rule, firewall rule, ACL item or address
// left) and answered every request since the last checkpoint without an
// error.
func (c *cloud) deleteAndCompare(t *testing.T, lb cloudprovider.LoadBalancer, svc *corev1.Service, top topology, before state) {
	t.Helper()
	ctx := context.Background()
	if err := lb.EnsureLoadBalancerDeleted(ctx, clusterName, svc); err != nil {
		t.Fatalf("EnsureLoadBalancerDeleted: %v", err)
	}
	if _, exists, err := lb.GetLoadBalancer(ctx, clusterName, svc); err != nil || exists {
		t.Errorf("GetLoadBalancer after EnsureLoadBalancerDeleted = %v, %v", exists, err)
	}
	if diff := before.diff(c.snapshot(t, top)); diff != "" {
		t.Errorf("after EnsureLoadBalancerDeleted CloudStack differs from before EnsureLoadBalancer:\n%s", diff)
	}
	c.expectNoErrors(t)
}

func ingressIP(t *testing.T, st *corev1.LoadBalancerStatus) string {
	t.Helper()
	if st == nil || len(st.Ingress) != 1 || st.Ingress[0].IP == "" {
		t.Fatalf("EnsureLoadBalancer's status = %+v, want one ingress address", st)
	}
	return st.Ingress[0].IP
}

// sameRules fails unless the rules after a step are the rules before it,
// changed in place.
func sameRules(t *testing.T, step string, before, after map[string]string) {
	t.Helper()
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("after %s the rules are %v, not the same rules %v changed in place", step, after, before)
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
