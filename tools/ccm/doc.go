// Package ccm holds the tests that run the CloudStack Kubernetes provider
// (github.com/apache/cloudstack-kubernetes-provider, the cloud controller
// manager) against the simulator: the provider's own acceptance tests, run
// with go test from the module cache, and the load-balancer lifecycle they
// leave out, driven through the provider's exported cloudprovider.LoadBalancer
// on the topology its development guide builds. It is a module of its own
// because the provider brings Kubernetes modules that must never move the
// versions the CPI, bosh-cli or bosh-agent build with. Only tests live here.
package ccm
