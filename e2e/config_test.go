//go:build e2e

// Package e2e is the end-to-end suite: the real bosh CLI's create-env, its
// updates and delete-env drive the CPI release against a CloudStack (the
// simulated environment of hack/e2e, or a real one), and every step is
// checked through the CloudStack API and, where the agents run beside the
// suite, through the real bosh-agent's own state.
//
// It is configured from the environment only (make test-e2e sets every
// variable from hack/e2e/_out/). A missing variable fails the suite with a
// message naming it.
package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// config is the suite's environment.
type config struct {
	APIURL, APIKey, SecretKey string
	Zone, Network             string
	ComputeOffering           string // create-env's VM size
	ComputeOfferingUpdate     string // the update's
	DiskOffering              string
	DiskSize, DiskSizeUpdate  int    // MiB
	KeyPair                   string // the key pair the zone has for VMs (cloudstack_default_key_name)
	Stemcell                  string
	StaticIP                  string
	Bosh                      string // the bosh CLI
	// Lifecycle is the environment of TestLifecycle (hack/e2e's
	// manifest.yml with manifests/cpi.yml), BoshDeployment that of
	// TestCreateEnvBoshDeployment (bosh-deployment's bosh.yml and
	// cloudstack/cpi.yml). Both put their one VM on StaticIP.
	Lifecycle, BoshDeployment env
	// VPC is the VPC phase's environment (manifest.yml on the tier
	// 50-vpc.sh made), also on StaticIP; VPCID and VPCTierID name the VPC
	// and its tier (set by make test-e2e-vpc only).
	VPC              env
	VPCID, VPCTierID string
	// AgentDir holds each VM's agent base directory (<AgentDir>/<vm cid>)
	// when the agents run beside the suite, as in hack/e2e; empty against a
	// real CloudStack, where the agent's state is read through its mbus only.
	AgentDir string
	// DevicePaths is tools/devicepaths (bosh-agent's own device path
	// resolver), with which the KVM phase follows the agent's disk hint
	// in a /dev laid out from the simulator's view of the guest; empty
	// against a real CloudStack.
	DevicePaths string
	// CloudStackVersion is the release line the simulator was started as
	// (E2E_CLOUDSTACK_VERSION, set by make test-e2e*), which the suite
	// checks listCapabilities names; empty against a real CloudStack.
	CloudStackVersion string
}

// env is one create-env environment of the harness.
type env struct {
	CreateEnv string // the script running `bosh create-env|delete-env`
	BoshState string // bosh's deployment state file
	Creds     string // bosh's vars store
	// ProjectID is the CloudStack project the environment's CPI works in
	// (cloudstack.project), whose resources the suite lists; "" for none.
	ProjectID string
}

// loadConfig reads the environment, failing when any required variable
// is unset.
func loadConfig(t *testing.T) config {
	t.Helper()
	var missing []string
	get := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	}
	c := config{
		APIURL: get("CS_API_URL"), APIKey: get("CS_API_KEY"), SecretKey: get("CS_SECRET_KEY"),
		Zone: get("CS_ZONE"), Network: get("CS_NETWORK"),
		ComputeOffering: get("CS_COMPUTE_OFFERING"), ComputeOfferingUpdate: get("CS_COMPUTE_OFFERING_UPDATE"),
		DiskOffering: get("CS_DISK_OFFERING"), KeyPair: get("CS_KEY_PAIR"),
		Stemcell: get("E2E_STEMCELL"), StaticIP: get("E2E_STATIC_IP"),
		Lifecycle: env{CreateEnv: get("E2E_CREATE_ENV"), BoshState: get("E2E_BOSH_STATE"), Creds: get("E2E_CREDS")},
		BoshDeployment: env{CreateEnv: get("E2E_BOSH_DEPLOYMENT_CREATE_ENV"),
			BoshState: get("E2E_BOSH_DEPLOYMENT_STATE"), Creds: get("E2E_BOSH_DEPLOYMENT_CREDS")},
		VPC: env{CreateEnv: os.Getenv("E2E_VPC_CREATE_ENV"), BoshState: os.Getenv("E2E_VPC_STATE"),
			Creds: os.Getenv("E2E_VPC_CREDS"), ProjectID: os.Getenv("E2E_VPC_PROJECT_ID")},
		VPCID: os.Getenv("E2E_VPC_ID"), VPCTierID: os.Getenv("E2E_VPC_TIER_ID"),
		Bosh: get("E2E_BOSH"), AgentDir: os.Getenv("E2E_AGENT_DIR"), DevicePaths: os.Getenv("E2E_DEVICEPATHS"),
		CloudStackVersion: os.Getenv("E2E_CLOUDSTACK_VERSION"),
		DiskSize:          mib(os.Getenv("E2E_DISK_SIZE"), 1024), DiskSizeUpdate: mib(os.Getenv("E2E_DISK_SIZE_UPDATE"), 2048),
	}
	if len(missing) > 0 {
		// Built with -tags e2e only: whoever runs it means to, so what is
		// missing is an error, never a skip.
		t.Fatal("the e2e suite needs " + strings.Join(missing, ", ") + " (make test-e2e sets them from hack/e2e/_out/)")
	}
	return c
}

func mib(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	return def
}
