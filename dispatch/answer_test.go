package dispatch

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testconfig"
)

type response struct {
	Result any `json:"result"`
	Error  *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Retry   bool   `json:"ok_to_retry"`
	} `json:"error"`
	Log *string `json:"log"`
}

func call(t *testing.T, where Files, stdin string) (response, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	Answer(where, strings.NewReader(stdin), &out, &errOut)
	var resp response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("stdout is not a JSON response: %q (%v)", out.String(), err)
	}
	if resp.Log == nil {
		t.Fatalf("response has no log string: %s", out.String())
	}
	return resp, errOut.String()
}

func TestInfo(t *testing.T) {
	resp, _ := call(t, Files{ConfigPath: testconfig.Write(t, testconfig.Good)},
		`{"method":"info","arguments":[],"context":{"director_uuid":"d"}}`)
	if resp.Error != nil {
		t.Fatal(resp.Error.Message)
	}
	got, _ := json.Marshal(resp.Result)
	if string(got) != `{"api_version":2,"stemcell_formats":["cloudstack-vhdx","openstack-qcow2","openstack-raw","vsphere-ova","vsphere-ovf"]}` {
		t.Fatalf("info = %s", got)
	}
}

func TestBadInputAnswersJSONErrors(t *testing.T) {
	good := testconfig.Write(t, testconfig.Good)
	cases := map[string]struct {
		where            Files
		stdin, typ, want string
	}{
		"empty stdin":       {Files{ConfigPath: good}, "", "CpiError", "valid JSON"},
		"not json":          {Files{ConfigPath: good}, "hello", "CpiError", "valid JSON"},
		"wrong shape":       {Files{ConfigPath: good}, `["info"]`, "CpiError", "valid JSON"},
		"no method":         {Files{ConfigPath: good}, `{"arguments":[]}`, "CpiError", "'method'"},
		"no arguments":      {Files{ConfigPath: good}, `{"method":"info"}`, "CpiError", "'arguments'"},
		"unknown method":    {Files{ConfigPath: good}, `{"method":"fly","arguments":[]}`, "NotImplemented", "fly"},
		"api version 3":     {Files{ConfigPath: good}, `{"method":"info","arguments":[],"api_version":3}`, "NotImplemented", "max supported is '2'"},
		"too few arguments": {Files{ConfigPath: good}, `{"method":"has_vm","arguments":[]}`, "CloudError", "arguments"},
		"wrong type":        {Files{ConfigPath: good}, `{"method":"has_vm","arguments":[42]}`, "CloudError", "arguments[0] (vm_cid): expected a string, got a number"},
		"no config flag":    {Files{}, `{"method":"info","arguments":[]}`, "CpiError", "-configPath"},
		"missing config": {Files{ConfigPath: filepath.Join(t.TempDir(), "nope.json")},
			`{"method":"info","arguments":[]}`, "CpiError", "nope.json"},
		"unknown key": {Files{ConfigPath: testconfig.Write(t, strings.Replace(testconfig.Good, `"api_key"`, `"apikey":"x","api_key"`, 1))},
			`{"method":"info","arguments":[]}`, "CpiError", "unknown key cloudstack.apikey (did you mean cloudstack.api_key?)"},
		"bad endpoint": {Files{ConfigPath: testconfig.Write(t, strings.Replace(testconfig.Good, "http://127.0.0.1:9", "127.0.0.1:9", 1))},
			`{"method":"info","arguments":[]}`, "CpiError", "cloudstack.endpoint"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			resp, _ := call(t, c.where, c.stdin)
			if resp.Error == nil || resp.Error.Type != "Bosh::Clouds::"+c.typ || !strings.Contains(resp.Error.Message, c.want) {
				t.Fatalf("got %+v, want %s containing %q", resp.Error, c.typ, c.want)
			}
		})
	}
}

func TestUnreadableConfig(t *testing.T) {
	if os.Geteuid() == 0 {
		// root reads any file: a directory stands in for an unreadable one.
		resp, _ := call(t, Files{ConfigPath: t.TempDir()}, `{"method":"info","arguments":[]}`)
		if resp.Error == nil || !strings.Contains(resp.Error.Message, "reading CPI config") {
			t.Fatalf("got %+v", resp.Error)
		}
		return
	}
	path := testconfig.Write(t, testconfig.Good)
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	resp, _ := call(t, Files{ConfigPath: path}, `{"method":"info","arguments":[]}`)
	if resp.Error == nil || !strings.Contains(resp.Error.Message, "reading CPI config") {
		t.Fatalf("got %+v", resp.Error)
	}
}

func TestPanicBecomesCpiError(t *testing.T) {
	var out, logs bytes.Buffer
	code := guard(&out, newLogger(&logs, "cpi-7"), func() int { panic("boom") })
	var resp response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil || resp.Error == nil ||
		resp.Error.Type != "Bosh::Clouds::CpiError" || !strings.Contains(resp.Error.Message, "boom") || code == 0 {
		t.Fatalf("stdout %q code %d", out.String(), code)
	}
	if strings.Contains(out.String(), "goroutine") {
		t.Fatal("a stack trace reached stdout")
	}
}

func TestEveryLogLineCarriesTheRequestID(t *testing.T) {
	_, logs := call(t, Files{ConfigPath: testconfig.Write(t, testconfig.Good)},
		`{"method":"info","arguments":[],"context":{"director_uuid":"d","request_id":"cpi-424242"}}`)
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatal("no log lines")
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "[cpi-424242] ") {
			t.Errorf("line without request id: %q", l)
		}
	}
}

func TestRequestArgumentsNeverLogged(t *testing.T) {
	_, logs := call(t, Files{ConfigPath: testconfig.Write(t, testconfig.Good)},
		`{"method":"has_vm","arguments":["s3cr3t-password-in-args"],"context":{"request_id":"cpi-1"}}`)
	if strings.Contains(logs, "s3cr3t-password-in-args") {
		t.Fatalf("arguments leaked into logs:\n%s", logs)
	}
}

// TestErrorMessagesCapWhatTheyEcho: a huge CID, method name or config key
// comes back cut to a few KiB, saying how much was cut.
func TestErrorMessagesCapWhatTheyEcho(t *testing.T) {
	huge := strings.Repeat("é", 1<<19) // 1 MiB of two-byte characters
	good := testconfig.Write(t, testconfig.Good)
	cases := map[string]struct {
		where Files
		stdin string
	}{
		"method": {Files{ConfigPath: good}, `{"method":"` + huge + `","arguments":[]}`},
		"config key": {Files{ConfigPath: testconfig.Write(t, strings.Replace(testconfig.Good, `"api_key"`, `"`+huge+`":"x","api_key"`, 1))},
			`{"method":"info","arguments":[]}`},
		"resize_disk size": {Files{ConfigPath: good}, `{"method":"resize_disk","arguments":["` + huge + `",0]}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			resp, _ := call(t, c.where, c.stdin)
			if resp.Error == nil {
				t.Fatal("no error")
			}
			m := resp.Error.Message
			if len(m) > maxErrorMessage+64 || !strings.Contains(m, "bytes cut)") || !utf8.ValidString(m) {
				t.Fatalf("%d bytes of message, ending %q", len(m), m[max(0, len(m)-80):])
			}
		})
	}
}
