package vm

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// deployBoot is deployVirtualMachine's boottype and bootmode as 4.22's
// BaseDeployVMCmd takes them: getBootType reads boottype as BIOS or UEFI
// (trimmed, upper-cased; anything else is refused), getBootMode bootmode
// as LEGACY or SECURE, and refuses UEFI without a bootmode; getDetails
// records the pair as the VM detail <TYPE>=<MODE> (UEFI=LEGACY), which
// the VM's view reads back (UserVmJoinDaoImpl.newUserVmResponse).
// Departure: BIOS without a bootmode, where getDetails calls toString on
// getBootMode's null, is taken as no boot type.
func deployBoot(p kernel.Params, name string, details map[string]string) (map[string]string, error) {
	typ := strings.ToUpper(strings.TrimSpace(p.Get("boottype")))
	mode := strings.ToUpper(strings.TrimSpace(p.Get("bootmode")))
	if typ != "" && typ != "BIOS" && typ != "UEFI" {
		return nil, kernel.ParamError("Invalid bootType %sSpecified for vm %s Valid values are: [BIOS, UEFI]", p.Get("boottype"), name)
	}
	if mode != "" && mode != "LEGACY" && mode != "SECURE" {
		return nil, kernel.ParamError("Invalid bootmode: %s specified for VM: %s. Valid values are: [LEGACY, SECURE]", p.Get("bootmode"), name)
	}
	if typ == "UEFI" && mode == "" {
		return nil, kernel.ParamError("bootmode must be specified for the VM with boot type: UEFI. Valid values are: [LEGACY, SECURE]")
	}
	if typ == "" || mode == "" {
		return details, nil
	}
	if details == nil {
		details = map[string]string{}
	}
	details[typ] = mode
	return details, nil
}
