package template

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// maxUploadSizeGB is max.template.iso.size's default.
const maxUploadSizeGB = 50

// JodaTime is Joda's DateTime.toString() in UTC, the "expires" format.
const JodaTime = "2006-01-02T15:04:05.000Z07:00"

// uploadMetadata is what the metadata blob carries to the upload receiver,
// like CloudStack's TemplateOrVolumePostUploadCommand (which CloudStack also
// encrypts; here it is only encoded). Clients treat it as opaque.
type uploadMetadata struct {
	EntityUUID    string `json:"entityUUID"`
	EntityID      int64  `json:"entityId"`
	Name          string `json:"name"`
	ImageFormat   string `json:"imageFormat"`
	ZoneUUID      string `json:"zoneUUID"`
	Type          string `json:"type"`
	MaxUploadSize string `json:"maxUploadSize"` // GB
}

// uploadCommands are the commands of upload_params.go (registerCommands).
func uploadCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "getUploadParamsForTemplate", Sync: getUploadParamsForTemplate,
			ResponseName: "postuploadtemplateresponse"},
		{Name: "getUploadParamsForIso", Sync: getUploadParamsForIso, ResponseName: "postuploadisoresponse"},
	}
}

// getUploadParamsForTemplate registers a template whose bytes the client
// POSTs itself, and answers where and how to POST them.
func getUploadParamsForTemplate(c *kernel.Call) (any, error) {
	p := c.Params
	zoneParam := p.Get("zoneid")
	if zoneParam == "-1" {
		return nil, kernel.ServerParamError("Invalid zoneid")
	}
	hvParam := p.Get("hypervisor")
	deployAsIs := strings.EqualFold(hvParam, "VMware") && p.Bool("deployasis", false)
	switch {
	case !deployAsIs && p.Get("ostypeid") == "":
		return nil, kernel.ServerParamError("Missing parameter ostypeid")
	case deployAsIs && p.Get("ostypeid") != "":
		return nil, kernel.ServerParamError("Invalid parameter ostypeid, not applicable for" +
			"VMware when deploy-as-is is set to true")
	}
	hv := model.HypervisorType(hvParam)
	if hv == "" {
		return nil, invalidHypervisor("None") // CloudStack prints the parsed type
	}
	format, err := imageFormat(p.Get("format"))
	if err != nil {
		return nil, err
	}
	z := zoneByParam(c.State, zoneParam)
	if z == nil {
		return nil, kernel.ServerParamError("Please specify a valid zone.")
	}
	if err := checkZoneHypervisor(c.State, z, hv); err != nil {
		return nil, err
	}
	t, err := newTemplate(c, format, hv, deployAsIs)
	if err != nil {
		return nil, err
	}
	return postUploadParams(c, t, z, format), nil
}

// postUploadParams stores a template (or ISO) to be POSTed, NotUploaded with
// its zone ref from the start (HypervisorTemplateAdapter.
// createTemplateForPostUpload → persistTemplate(profile, NotUploaded)), and
// answers where and how to POST it (TemplateManagerImpl.
// registerPostUploadInternal, GetUploadParamsResponse).
func postUploadParams(c *kernel.Call, t *model.Template, z *model.Zone, format string) map[string]any {
	t.State, t.PostUpload = tsNotUploaded, true
	t.Copies = []*model.TemplateCopy{{ZoneID: z.ID, DownloadState: model.DlNotUploaded, Created: t.Created}}
	c.State.Templates = append(c.State.Templates, t)
	c.Changed()

	// CloudStack answers https://<SSVM public IP or its dashed name under the
	// SSL domain>/upload/<uuid> (use.https.to.upload defaults to true) and
	// signs that URL; the simulator receives uploads itself, over plain HTTP,
	// on the address the API request came in on, and signs the https URL the
	// SSVM's handler checks (see admitUpload).
	postURL := "http://" + c.Host + "/upload/" + t.ID
	// TemplateManagerImpl.registerPostUploadInternal: the parameters expire
	// after upload.operation.timeout minutes, read now (the setting is dynamic).
	expires := c.Engine.Now().Add(time.Duration(c.State.SettingInt(model.SettingUploadTimeout)) * time.Minute).Format(JodaTime)
	// The payload's type is tmpl.getType(), TEMPLATE for ISOs too.
	meta, _ := json.Marshal(uploadMetadata{EntityUUID: t.ID, EntityID: t.InternalID, Name: t.Name,
		ImageFormat: format, ZoneUUID: z.ID, Type: "TEMPLATE", MaxUploadSize: model.Itoa(maxUploadSizeGB)})
	metadata := base64.StdEncoding.EncodeToString(meta)
	return map[string]any{"getuploadparams": map[string]any{"id": t.ID, "postURL": postURL,
		"metadata": metadata, "expires": expires,
		"signature": UploadSignature(c.State, metadata+signedUploadURL(c.Host, t.ID)+expires)}}
}

// signedUploadURL is the URL an upload's signature covers:
// HttpUploadServerHandler checks it as "https://" + the x-forwarded-host
// header (the SSVM's web server proxies to the handler) + "/upload/" + uuid.
func signedUploadURL(host, id string) string { return "https://" + host + "/upload/" + id }

// UploadSignature is EncryptionUtil.generateSignature: Base64 HMAC-SHA1 with
// the key the management server shares with the SSVMs.
func UploadSignature(st *model.State, data string) string {
	mac := hmac.New(sha1.New, []byte(st.UploadKey))
	mac.Write([]byte(data))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
