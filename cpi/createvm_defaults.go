package cpi

// cpi.json's defaults for what a VM type leaves out, applied once, as
// soon as create_vm has read it: the plan and the deployment take each
// value as it stands in vmWant.

import (
	"encoding/json"
	"fmt"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/vmtype"
)

// vmWant is create_vm's input as read: the VM type (cpu, ram and cpu_speed
// as written, which the choice of a customized offering reads), the
// network plan, and each name with its default applied.
type vmWant struct {
	agentID  string
	env      apiv1.VMEnv
	props    vmtype.Props
	networks networkPlan
	netRefs  []string      // the CloudStack network of each NIC, by name
	template string        // the stemcell's template: an id, or an earlier CPI's name
	drive    settingsDrive // where the stemcell's agent reads its settings
	zone     string
	// computeOffering is the offering named, or, without cpu and ram,
	// cloudstack.default_compute_offering ("" refuses).
	computeOffering string
	cpuSpeed        int // sent when the offering leaves the speed open
	// ephemeral says an ephemeral disk is wanted; ephemeralOffering is its
	// offering, named or the default ("" takes the customized one).
	ephemeral         bool
	ephemeralOffering string
	keyPair           string
	affinity          affinityWant
}

// affinityWant is the affinity group the VM joins: none when name is "".
type affinityWant struct{ name, kind string }

// maxAffinityGroupName is the longest name createAffinityGroup takes.
const maxAffinityGroupName = 63

// withDefaults is what the VM type asks for with cpi.json's defaults in
// what it leaves out. A compute offering beside cpu and ram takes no
// default: without one, the plan picks a customized offering.
func withDefaults(r callDeps, props vmtype.Props, env apiv1.VMEnv) vmWant {
	cs := r.cfg.CloudStack
	w := vmWant{env: env, props: props, zone: props.Zone, computeOffering: props.ComputeOffering,
		cpuSpeed: props.CPUSpeed, keyPair: props.KeyPair, ephemeralOffering: props.EphemeralDiskOffering,
		ephemeral: props.EphemeralDiskSize != 0 || props.EphemeralDiskOffering != "",
		affinity:  affinityWant{name: props.AffinityGroup, kind: props.AffinityGroupType}}
	if w.zone == "" {
		w.zone = cs.DefaultZone
	}
	if w.cpuSpeed == 0 {
		w.cpuSpeed = cs.DefaultCPUSpeed
	}
	if w.keyPair == "" {
		w.keyPair = cs.DefaultKeyPair
	}
	if w.ephemeralOffering == "" {
		w.ephemeralOffering = cs.DefaultEphemeralDiskOffering
	}
	if w.affinity.kind == "" {
		w.affinity.kind = cs.AffinityGroupType
	}
	// auto_anti_affinity: one group per director and instance group.
	if group := instanceGroup(env); w.affinity.name == "" && cs.AutoAntiAffinity && group != "" {
		w.affinity.name = fmt.Sprintf("%s-%s", r.ctx.DirectorUUID, group)
	}
	if w.computeOffering == "" && !props.Custom() {
		w.computeOffering = cs.DefaultComputeOffering
	}
	w.affinity.name = truncate(w.affinity.name, maxAffinityGroupName)
	return w
}

func instanceGroup(env apiv1.VMEnv) string {
	var e struct {
		Bosh struct {
			Group string `json:"group"`
		} `json:"bosh"`
	}
	if raw, err := env.MarshalJSON(); err == nil {
		_ = json.Unmarshal(raw, &e)
	}
	return e.Bosh.Group
}
