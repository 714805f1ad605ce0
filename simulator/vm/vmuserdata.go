package vm

import (
	"crypto/rand"
	"encoding/base64"
	"math/big"
	"net/url"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/network"
)

// ValidateUserData is UserDataManagerImpl.validateUserData for a POST
// request (the simulator applies the POST limit to GET requests too): the
// base64 text, at most vm.userdata.max.length characters (read at each call,
// as validateAndDecodeByHTTPMethod reads the dynamic setting), is stored
// re-encoded with padding.
func ValidateUserData(st *model.State, ud string) (string, error) {
	if ud == "" {
		return "", nil
	}
	if strings.Contains(ud, "%") {
		decoded, err := url.QueryUnescape(ud)
		if err != nil {
			return "", kernel.ParamError("Url decoding of userdata failed.")
		}
		ud = decoded
	}
	if !isBase64(ud) {
		return "", kernel.ParamError("User data is not base64 encoded")
	}
	if len(ud) >= model.UserDataMaxPOST {
		return "", kernel.ParamError("User data is too long for an http POST request")
	}
	if maxLen := st.SettingInt(model.SettingUserDataMaxLen); len(ud) > maxLen {
		return "", kernel.ParamError("User data has exceeded configurable max length : %d", maxLen)
	}
	decoded := decodeBase64Lenient(ud)
	if len(decoded) < 1 {
		return "", kernel.ParamError("User data is too short")
	}
	return base64.StdEncoding.EncodeToString(decoded), nil
}

// isBase64 is commons-codec's Base64.isBase64(String): only characters of
// the standard or URL-safe alphabet, padding and whitespace.
func isBase64(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9',
			r == '+', r == '/', r == '-', r == '_', r == '=', r == ' ', r == '\t', r == '\r', r == '\n':
		default:
			return false
		}
	}
	return true
}

// decodeBase64Lenient decodes like commons-codec: both alphabets, padding
// and whitespace ignored, a trailing partial quantum dropped.
func decodeBase64Lenient(s string) []byte {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '-':
			return '+'
		case '_':
			return '/'
		case '=', ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	if len(s)%4 == 1 {
		s = s[:len(s)-1]
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// randomPassword is a password for a password-enabled template.
func randomPassword(n int) string {
	const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, n)
	for i := range b {
		k, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}

// UserDataApplied is UserVmManagerImpl.updateUserDataInternal: the user
// data reaches the VM through at least one NIC whose network offering
// provides the UserData service (applyUserData); a VM without NICs gets
// none.
func UserDataApplied(st *model.State, vm *model.VirtualMachine) bool {
	for _, n := range vm.NICs {
		if net := st.Network(n.NetworkID); net != nil && network.Provides(st, net, "UserData") {
			return true
		}
	}
	return false
}

// checkUserDataService is getUncheckedUserVmResource's check of the default
// network: without the UserData service the VM could get neither user
// data, nor SSH keys, nor a password.
func checkUserDataService(c *kernel.Call, def *model.Network, userData string, keyPairs []string, passwordEnabled bool) error {
	if network.Provides(c.State, def, "UserData") {
		return nil
	}
	switch {
	case userData != "":
		return kernel.ParamError("Unable to deploy VM as UserData is provided while deploying the VM, but there is no support for UserData service in the default network %s/%s.", def.Name, def.ID)
	case len(keyPairs) > 0:
		return kernel.ParamError("Unable to deploy VM as SSH keypair is provided while deploying the VM, but there is no support for UserData service in the default network %s/%s", def.Name, def.ID)
	case passwordEnabled:
		t, _ := model.ByID(c.State.Templates, c.Params.Get("templateid"))
		return kernel.ParamError("Unable to deploy VM as template %d is password enabled, but there is no support for UserData service in the default network %s/%s", t.InternalID, def.Name, def.ID)
	}
	return nil
}

// userDataCommands are the commands of vmuserdata.go (registerCommands).
func userDataCommands() []kernel.Command {
	return []kernel.Command{{Name: "getVirtualMachineUserData", Sync: getVirtualMachineUserData}}
}

// getVirtualMachineUserData is GetVMUserDataCmd and
// UserVmManagerImpl.getVmUserData: the VM must not be expunged (UserVmDao.
// findById skips removed rows) and the caller must have access to it
// (checkAccess: its owner, or an admin above it; the simulator's caller is
// root admin). The answer is VMUserDataResponse, "virtualmachineuserdata",
// with the stored base64 user data, left out when the VM has none.
func getVirtualMachineUserData(c *kernel.Call) (any, error) {
	vm, err := liveVM(c, "virtualmachineid", "Unable to find virtual machine with id")
	if err != nil {
		return nil, err
	}
	v := map[string]any{"virtualmachineid": vm.ID}
	if vm.UserData != "" {
		v["userdata"] = vm.UserData
	}
	return map[string]any{"virtualmachineuserdata": v}, nil
}
