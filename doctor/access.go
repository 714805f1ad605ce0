package doctor

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
)

// checkAccess makes the first call (listApis, which every role may make)
// and reads from its outcome whether the endpoint answered over trusted
// TLS and whether the keys were accepted.
func (r *run) checkAccess() {
	apis, err := r.cloud.APIs()
	if !r.endpointAnswered(err) {
		r.fail(CheckKeys, "not checked: CloudStack did not answer", "fix the endpoint check first")
		return
	}
	if cloudstack.IsThrottled(err) {
		// The throttle counts before the signature is checked
		// (ApiServer.verifyRequest), and listApis counts once per command
		// the role allows: one cheap call tells whether the keys hold.
		r.apisErr = err
		_, err = r.cloud.Zones()
	}
	var refused *cloudstack.CredentialsRefusedError
	switch {
	case errors.As(err, &refused):
		r.fail(CheckKeys, "CloudStack refused the keys (401)", "check cloudstack.api_key and "+
			"cloudstack.secret_access_key against the user's keys (Accounts → the account → Users → "+
			"Keys), that the user and its account are enabled, and that this machine's clock is right")
	case cloudstack.IsThrottled(err):
		r.fail(CheckKeys, err.Error(), "") // markThrottled gives the fix
	case err != nil: // CloudStack checked the keys, then refused or failed the command
		r.apisErr = err
		r.pass(CheckKeys, "accepted")
	case r.apisErr != nil:
		r.pass(CheckKeys, "accepted")
	default:
		r.apis = apis
		r.pass(CheckKeys, fmt.Sprintf("accepted: the account's role may call %d commands", len(apis)))
	}
}

// endpointAnswered records the endpoint check from the first call's error
// and says whether CloudStack answered at all.
func (r *run) endpointAnswered(err error) bool {
	endpoint := r.cfg.CloudStack.Endpoint
	var tlsErr *cloudstack.TLSError
	var plain *cloudstack.PlainHTTPError
	var unreachable *cloudstack.UnreachableError
	var refused *cloudstack.CredentialsRefusedError
	var api *cloudstack.APIError
	switch {
	case errors.As(err, &tlsErr):
		r.fail(CheckEndpoint, "TLS untrusted: "+tlsErr.Err.Error(), "put the PEM of the CA that signed "+
			hostOf(endpoint)+"'s certificate in cloudstack.ca_cert (or fix the endpoint's host name to "+
			"one the certificate names)")
	case errors.As(err, &plain):
		r.fail(CheckEndpoint, plain.Error(), "make cloudstack.endpoint https://")
	case errors.As(err, &unreachable):
		r.fail(CheckEndpoint, "no answer: "+unreachable.Err.Error(), "check cloudstack.endpoint (the "+
			"management server's URL ending in /client/api), that this machine reaches it, and "+
			"cloudstack.http_proxy or HTTPS_PROXY/NO_PROXY")
	case err != nil && !errors.As(err, &refused) && !errors.As(err, &api) && !cloudstack.IsThrottled(err):
		r.fail(CheckEndpoint, "answered, but not as CloudStack's API: "+err.Error(), "make cloudstack.endpoint the "+
			"management server's API URL, ending in /client/api")
	default:
		result := "answered"
		if u, perr := url.Parse(endpoint); perr == nil && u.Scheme == "https" {
			result += "; TLS verified"
			if r.cfg.CloudStack.SkipVerifySSL {
				result = "answered; TLS NOT verified (cloudstack.skip_verify_ssl)"
			}
		}
		r.pass(CheckEndpoint, result)
		return true
	}
	return false
}

func hostOf(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return u.Host
	}
	return "the endpoint"
}

// checkCommands compares the commands the CPI sends with those the
// account's role may call.
func (r *run) checkCommands() {
	if cloudstack.IsThrottled(r.apisErr) {
		r.unchecked(CheckCommands, r.apisErr.Error(), "listApis counts once per command the role allows against "+
			"api.throttling.max, so while the throttle is on a role allowing more commands than that can never list "+
			"them: compare the role's rules (Roles → the role → Rules) with the commands the CPI sends (docs), or "+
			"run doctor with a root admin's keys, which the throttle exempts")
		return
	}
	if r.apisErr != nil {
		r.fail(CheckCommands, "could not list the role's commands: "+r.apisErr.Error(), "allow listApis in the "+
			"account's role, so that what the role allows can be checked")
		return
	}
	var missing []string
	for _, c := range cloudstack.Commands {
		if !r.apis[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		r.pass(CheckCommands, fmt.Sprintf("the role may call all %d commands the CPI sends", len(cloudstack.Commands))+
			r.optionalMissing())
		return
	}
	sort.Strings(missing)
	r.fail(CheckCommands, fmt.Sprintf("the role may not call %d of the CPI's commands: %s", len(missing),
		strings.Join(missing, ", ")), "allow them in the account's role (Roles → the role → Rules), or use "+
		"the keys of an account whose role allows them")
}

// optionalMissing names the optional commands the role lacks: the check
// still passes, since the CPI does without them.
func (r *run) optionalMissing() string {
	var lacking []string
	for _, c := range cloudstack.OptionalCommands {
		if !r.apis[c] {
			lacking = append(lacking, "not "+c+" "+optionalWithout[c])
		}
	}
	if len(lacking) == 0 {
		return ""
	}
	return "; " + strings.Join(lacking, "; ")
}

// optionalWithout says what the CPI does without each optional command.
var optionalWithout = map[string]string{
	"changeOfferingForVolume": "(CloudStack before 4.17, or a role without it): update_disk of a disk's offering " +
		"answers NotSupported and the director copies the disk",
	"getUser": "(only root admins may call it): the host's API rate bucket takes the account as one CloudStack's " +
		"API throttle counts, as it is",
}

// checkExpunge says whether delete_vm can expunge: the role must list
// expungeVirtualMachine and CloudStack must let the caller expunge.
func (r *run) checkExpunge() {
	if !*r.cfg.CloudStack.ExpungeVM {
		r.pass(CheckExpunge, "cloudstack.expunge_vm is false: delete_vm destroys VMs and CloudStack "+
			"expunges them after expunge.delay")
		return
	}
	may, err := r.cloud.MayExpunge()
	switch {
	case err != nil:
		r.fail(CheckExpunge, "listCapabilities failed: "+err.Error(), "give the account a role that may call listCapabilities")
	case r.apisErr == nil && !r.apis[cloudstack.CommandExpunge]:
		r.fail(CheckExpunge, "the role may not call "+cloudstack.CommandExpunge+": delete_vm leaves VMs "+
			"Destroyed, holding their IPs and names until expunge.delay", expungeFix)
	case !may:
		r.fail(CheckExpunge, "CloudStack lets only admins expunge (listCapabilities "+
			"allowuserexpungerecovervm is false): delete_vm leaves VMs Destroyed, holding their IPs and "+
			"names until expunge.delay", expungeFix)
	default:
		r.pass(CheckExpunge, "the account may expunge VMs")
	}
}

const expungeFix = "set the setting allow.user.expunge.recover.vm to true (globally or for the account), or use a Domain Admin " +
	"account's keys; or set cloudstack.expunge_vm to false and shorten expunge.delay, as a recreated VM " +
	"cannot take the static IP of a Destroyed one"
