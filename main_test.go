package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
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

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cpi.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const goodConfig = `{"cloudstack":{"endpoint":"http://127.0.0.1:9/client/api","api_key":"k",
  "secret_access_key":"s","default_zone":"z","max_retries":0}}`

func call(t *testing.T, args []string, stdin string) (response, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	run(args, strings.NewReader(stdin), &out, &errOut)
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
	resp, _ := call(t, []string{"-configPath", writeConfig(t, goodConfig)},
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
	good := writeConfig(t, goodConfig)
	cases := map[string]struct {
		args             []string
		stdin, typ, want string
	}{
		"empty stdin":       {[]string{"-configPath", good}, "", "CpiError", "valid JSON"},
		"not json":          {[]string{"-configPath", good}, "hello", "CpiError", "valid JSON"},
		"wrong shape":       {[]string{"-configPath", good}, `["info"]`, "CpiError", "valid JSON"},
		"no method":         {[]string{"-configPath", good}, `{"arguments":[]}`, "CpiError", "'method'"},
		"no arguments":      {[]string{"-configPath", good}, `{"method":"info"}`, "CpiError", "'arguments'"},
		"unknown method":    {[]string{"-configPath", good}, `{"method":"fly","arguments":[]}`, "NotImplemented", "fly"},
		"api version 3":     {[]string{"-configPath", good}, `{"method":"info","arguments":[],"api_version":3}`, "NotImplemented", "max supported is '2'"},
		"too few arguments": {[]string{"-configPath", good}, `{"method":"has_vm","arguments":[]}`, "CloudError", "arguments"},
		"wrong type":        {[]string{"-configPath", good}, `{"method":"has_vm","arguments":[42]}`, "CloudError", "arguments[0] (vm_cid): expected a string, got a number"},
		"no config flag":    {nil, `{"method":"info","arguments":[]}`, "CpiError", "-configPath"},
		"missing config": {[]string{"-configPath", filepath.Join(t.TempDir(), "nope.json")},
			`{"method":"info","arguments":[]}`, "CpiError", "nope.json"},
		"unknown key": {[]string{"-configPath", writeConfig(t, strings.Replace(goodConfig, `"api_key"`, `"apikey":"x","api_key"`, 1))},
			`{"method":"info","arguments":[]}`, "CpiError", "unknown key cloudstack.apikey (did you mean cloudstack.api_key?)"},
		"bad endpoint": {[]string{"-configPath", writeConfig(t, strings.Replace(goodConfig, "http://127.0.0.1:9", "127.0.0.1:9", 1))},
			`{"method":"info","arguments":[]}`, "CpiError", "cloudstack.endpoint"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			resp, _ := call(t, c.args, c.stdin)
			if resp.Error == nil || resp.Error.Type != "Bosh::Clouds::"+c.typ || !strings.Contains(resp.Error.Message, c.want) {
				t.Fatalf("got %+v, want %s containing %q", resp.Error, c.typ, c.want)
			}
		})
	}
}

func TestUnreadableConfig(t *testing.T) {
	if os.Geteuid() == 0 {
		// root reads any file: a directory stands in for an unreadable one.
		resp, _ := call(t, []string{"-configPath", t.TempDir()}, `{"method":"info","arguments":[]}`)
		if resp.Error == nil || !strings.Contains(resp.Error.Message, "reading CPI config") {
			t.Fatalf("got %+v", resp.Error)
		}
		return
	}
	path := writeConfig(t, goodConfig)
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	resp, _ := call(t, []string{"-configPath", path}, `{"method":"info","arguments":[]}`)
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
	_, logs := call(t, []string{"-configPath", writeConfig(t, goodConfig)},
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
	_, logs := call(t, []string{"-configPath", writeConfig(t, goodConfig)},
		`{"method":"has_vm","arguments":["s3cr3t-password-in-args"],"context":{"request_id":"cpi-1"}}`)
	if strings.Contains(logs, "s3cr3t-password-in-args") {
		t.Fatalf("arguments leaked into logs:\n%s", logs)
	}
}

func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"-version"}, strings.NewReader(""), &out, &bytes.Buffer{}); code != 0 || strings.TrimSpace(out.String()) != version {
		t.Fatalf("code %d out %q", code, out.String())
	}
}

func TestServeRefusesABadCommandLine(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"serve"}, strings.NewReader(""), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "usage") {
		t.Fatalf("serve without -configPath: %d %q", code, errOut.String())
	}
	if code := run([]string{"serve", "-configPath", writeConfig(t, `{}`)}, strings.NewReader(""), &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "nothing to serve") {
		t.Fatalf("serve with nothing to serve: %d %q", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Fatalf("serve wrote to stdout: %q", out.String())
	}
}

// TestDoctorRefusesABadCommandLine: doctor needs a valid cpi.json and a
// readable cloud-config, and says so before it asks CloudStack anything.
func TestDoctorRefusesABadCommandLine(t *testing.T) {
	good := writeConfig(t, `{"cloudstack": {"endpoint": "http://127.0.0.1:1/client/api", "api_key": "k",
		"secret_access_key": "s", "default_zone": "z1"}}`)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"doctor"}, "usage"},
		{[]string{"doctor", "-configPath", good, "extra"}, "usage"},
		{[]string{"doctor", "-configPath", writeConfig(t, `{}`)}, "cloudstack.endpoint is required"},
		{[]string{"doctor", "-configPath", writeConfig(t, `{"cloudstack":{"max_retries":"2"}}`)},
			"cloudstack.max_retries: expected an integer, got a string"},
		{[]string{"doctor", "-configPath", good, "-cloud-config", filepath.Join(t.TempDir(), "none.yml")}, "cloud-config"},
		{[]string{"doctor", "-configPath", good, "-cloud-config", writeConfig(t, "networks: {")}, "cloud-config"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := run(c.args, strings.NewReader(""), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) ||
			out.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q", c.args, code, errOut.String(), out.String())
		}
	}
}

// TestDoctorOnAnUnreachableEndpoint: the endpoint check fails at once
// (doctor does not retry), naming what to check, and every other check
// says it was not run.
func TestDoctorOnAnUnreachableEndpoint(t *testing.T) {
	config := writeConfig(t, `{"cloudstack": {"endpoint": "http://127.0.0.1:1/client/api", "api_key": "k",
		"secret_access_key": "s", "default_zone": "z1"}}`)
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run([]string{"doctor", "-configPath", config, "-json"}, strings.NewReader(""), &out, &errOut)
	var rows []struct {
		Check, Result, Fix string
		OK                 bool
	}
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || code != 1 || len(rows) != 12 {
		t.Fatalf("exit %d, %d rows (%v):\n%s\n%s", code, len(rows), err, out.String(), errOut.String())
	}
	if rows[0].Check != "endpoint" || rows[0].OK || !strings.Contains(rows[0].Fix, "cloudstack.endpoint") {
		t.Fatalf("endpoint row %+v", rows[0])
	}
	for _, r := range rows[1:] {
		if r.OK || !strings.Contains(r.Result, "not checked") {
			t.Errorf("row %+v", r)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %s", took)
	}
}

// TestErrorMessagesCapWhatTheyEcho: a huge CID, method name or config key
// comes back cut to a few KiB, saying how much was cut.
func TestErrorMessagesCapWhatTheyEcho(t *testing.T) {
	huge := strings.Repeat("é", 1<<19) // 1 MiB of two-byte characters
	good := writeConfig(t, goodConfig)
	cases := map[string]struct {
		args  []string
		stdin string
	}{
		"method": {[]string{"-configPath", good}, `{"method":"` + huge + `","arguments":[]}`},
		"config key": {[]string{"-configPath", writeConfig(t, strings.Replace(goodConfig, `"api_key"`, `"`+huge+`":"x","api_key"`, 1))},
			`{"method":"info","arguments":[]}`},
		"resize_disk size": {[]string{"-configPath", good}, `{"method":"resize_disk","arguments":["` + huge + `",0]}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			resp, _ := call(t, c.args, c.stdin)
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

// TestStateDirFlagAndSetting: bin/cpi's -stateDir is the state directory
// unless cpi.json's cloudstack.state_dir names another.
func TestStateDirFlagAndSetting(t *testing.T) {
	info := `{"method":"info","arguments":[],"context":{"director_uuid":"d"}}`
	flagDir, setDir := filepath.Join(t.TempDir(), "flag"), filepath.Join(t.TempDir(), "set")
	call(t, []string{"-configPath", writeConfig(t, goodConfig), "-stateDir", flagDir}, info)
	if _, err := os.Stat(flagDir); err != nil {
		t.Errorf("-stateDir %s was not made: %v", flagDir, err)
	}
	flagDir2 := filepath.Join(t.TempDir(), "flag")
	withSetting := strings.Replace(goodConfig, `"max_retries":0`, `"max_retries":0,"state_dir":"`+setDir+`"`, 1)
	call(t, []string{"-configPath", writeConfig(t, withSetting), "-stateDir", flagDir2}, info)
	if _, err := os.Stat(setDir); err != nil {
		t.Errorf("cloudstack.state_dir %s was not made: %v", setDir, err)
	}
	if _, err := os.Stat(flagDir2); err == nil {
		t.Errorf("-stateDir was used although cloudstack.state_dir is set")
	}
}
