package simulator

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Global settings (the configuration table) the simulator models. Each
// follows its ConfigKey or Config enum entry: name, category, component,
// default, description, type and whether it is dynamic.
const (
	settingInternalSites    = "secstorage.allowed.internal.sites"
	settingUploadInterval   = "upload.monitoring.interval"
	settingUploadTimeout    = "upload.operation.timeout"
	settingUserDataMaxLen   = "vm.userdata.max.length"
	settingExpungeDelay     = "expunge.delay"
	settingExpungeInterval  = "expunge.interval"
	userDataMaxLengthLimit  = 1048576 // ConfigurationManagerImpl.validateConfigurationValue's cap
	configTypeInteger       = "Integer"
	configTypeString        = "String"
	configCategoryAdvanced  = "Advanced"
	configCategoryForbidden = "Hidden" // searchForConfigurations never lists these
)

type settingDef struct {
	name, category, component, description, kind string
	defaultValue                                 *string // nil: CloudStack's default is null
	dynamic                                      bool
}

func ptr(s string) *string { return &s }

// settingDefs, sorted by name as searchForConfigurations orders them.
var settingDefs = []settingDef{
	// Config.ExpungeDelay
	{name: settingExpungeDelay, category: configCategoryAdvanced, component: "UserVmManager", kind: configTypeInteger,
		defaultValue: ptr("86400"), description: "Determines how long (in seconds) to wait before actually expunging " +
			"destroyed vm. The default value = the default value of expunge.interval"},
	// Config.ExpungeInterval
	{name: settingExpungeInterval, category: configCategoryAdvanced, component: "UserVmManager", kind: configTypeInteger,
		defaultValue: ptr("86400"), description: "The interval (in seconds) to wait before running the expunge thread."},
	// Config.SecStorageAllowedInternalDownloadSites
	{name: settingInternalSites, category: configCategoryAdvanced, component: "ManagementServer", kind: configTypeString,
		description: "Comma separated list of cidrs internal to the datacenter that can host template download " +
			"servers, please note 0.0.0.0 is not a valid site"},
	// ImageStoreUploadMonitorImpl.UploadMonitoringInterval
	{name: settingUploadInterval, category: configCategoryAdvanced, component: "ImageStoreUploadMonitor",
		kind: configTypeInteger, defaultValue: ptr("60"), dynamic: true,
		description: "Interval (in seconds) to check the status of volumes that are uploaded using HTTP POST request"},
	// ImageStoreUploadMonitorImpl.UploadOperationTimeout
	{name: settingUploadTimeout, category: configCategoryAdvanced, component: "ImageStoreUploadMonitor",
		kind: configTypeInteger, defaultValue: ptr("60"), dynamic: true,
		description: "Time (in minutes) to wait before abandoning volume upload using HTTP POST request"},
	// UserDataManager.VM_USERDATA_MAX_LENGTH
	{name: settingUserDataMaxLen, category: configCategoryAdvanced, component: "UserDataManager",
		kind: configTypeInteger, defaultValue: ptr("32768"), dynamic: true,
		description: "Max length of vm userdata after base64 encoding. Default is 32768 and maximum is 1048576"},
}

func settingDefByName(name string) *settingDef {
	for i := range settingDefs {
		if settingDefs[i].name == name {
			return &settingDefs[i]
		}
	}
	return nil
}

// settingValue is a setting's value in the configuration table; nil is SQL
// NULL. The state keeps the values an operator set; the rest are defaults.
func (st *state) settingValue(name string) *string {
	if v, ok := st.Settings[name]; ok {
		return v
	}
	if d := settingDefByName(name); d != nil {
		return d.defaultValue
	}
	return nil
}

// setting is the current value of a modelled global setting, "" for null.
// Code that follows CloudStack reads settings through it (or settingInt),
// minding when CloudStack itself reads them: some only at start-up.
func (st *state) setting(name string) string {
	if v := st.settingValue(name); v != nil {
		return *v
	}
	return ""
}

// settingInt is an Integer setting's value, or its default when the stored
// text does not parse (ConfigKey.value falls back the same way).
func (st *state) settingInt(name string) int {
	if n, err := strconv.Atoi(st.setting(name)); err == nil {
		return n
	}
	if d := settingDefByName(name); d != nil && d.defaultValue != nil {
		n, _ := strconv.Atoi(*d.defaultValue)
		return n
	}
	return 0
}

// presetDurationSetting stores a duration given on the command line as the
// whole units the setting counts in (rounded up, so that 100ms shows as 1).
func (st *state) presetDurationSetting(name string, d, unit time.Duration) {
	if d <= 0 {
		return
	}
	if st.Settings == nil {
		st.Settings = map[string]*string{}
	}
	st.Settings[name] = ptr(strconv.Itoa(int(math.Ceil(float64(d) / float64(unit)))))
}

func init() {
	register(
		command{name: "listConfigurations", sync: listConfigurations},
		command{name: "updateConfiguration", sync: updateConfiguration},
	)
}

// scopeParams are the scope parameters of listConfigurations and
// updateConfiguration, in the order getParamCount reads them.
var scopeParams = []string{"zoneid", "clusterid", "accountid", "domainid", "storageid", "imagestoreuuid"}

// configScope is the one scope parameter given, "" for the global scope.
func (c *Call) configScope() (string, *APIError) {
	var given []string
	for _, p := range scopeParams {
		if c.Params.Get(p) != "" {
			given = append(given, p)
		}
	}
	if len(given) > 1 {
		return "", paramError("cannot handle multiple IDs, provide only one ID corresponding to the scope")
	}
	if len(given) == 1 {
		return given[0], nil
	}
	return "", nil
}

// listConfigurations is ListCfgsByCmd and ManagementServerImpl.searchForConfigurations:
// name and keyword are LIKE %...% matches (keyword over name, component,
// description, category and value), category is exact, Hidden settings are
// never listed, and a scope parameter lists the settings of that scope -
// none of the modelled ones, which are all Global.
func listConfigurations(c *Call) (any, error) {
	p := c.Params
	if p.Get("subgroup") != "" && p.Get("group") == "" {
		return nil, paramError("Configuration group name must be specified with the subgroup name")
	}
	scope, err := c.configScope()
	if err != nil {
		return nil, err
	}
	var rows []*settingDef
	for i := range settingDefs {
		d := &settingDefs[i]
		if scope == "" && d.category != configCategoryForbidden && optEq(p.Get("category"), d.category) {
			rows = append(rows, d)
		}
	}
	l := lister[*settingDef]{key: "configuration", id: func(d *settingDef) string { return d.name },
		name: func(d *settingDef) string { return d.name }, nameLike: true, view: c.configView,
		keyword: func(d *settingDef) []string {
			return []string{d.name, "DEFAULT", d.component, d.description, d.category, c.st.setting(d.name)}
		}}
	return l.run(c, rows)
}

// configView is ApiResponseHelper.createConfigurationResponse for a global
// setting (ListCfgsByCmd.setScope leaves scope out at global scope).
func (c *Call) configView(d *settingDef) map[string]any {
	v := map[string]any{"category": d.category, "name": d.name, "description": d.description,
		"isdynamic": d.dynamic, "component": d.component, "type": configValueType(d.kind)}
	if val := c.st.settingValue(d.name); val != nil {
		v["value"] = *val
	}
	if d.defaultValue != nil {
		v["defaultvalue"] = *d.defaultValue
	}
	return v
}

// configValueType is ConfigurationManagerImpl.parseConfigurationTypeIntoString
// (Configuration.ValueType) for the modelled types.
func configValueType(kind string) string {
	if kind == configTypeInteger {
		return "Number"
	}
	return "String"
}

// updateConfiguration is ConfigurationManagerImpl.updateConfiguration for
// the global scope: an unknown name and a value that does not validate are
// refused (431); no value answers the setting unchanged; a blank value or
// "null" stores null. The change takes effect when the code that uses the
// setting reads it, which for some settings is only at start-up.
func updateConfiguration(c *Call) (any, error) {
	name := c.Params.Get("name")
	d := settingDefByName(name)
	if d == nil {
		return nil, paramError("Config parameter with name %s doesn't exist", name)
	}
	if !c.Params.Has("value") {
		return map[string]any{"configuration": c.configView(d)}, nil
	}
	scope, err := c.configScope()
	if err != nil {
		return nil, err
	}
	if scope != "" {
		return nil, paramError("Invalid scope id provided for the parameter %s", name)
	}
	value := ptr(strings.TrimSpace(c.Params.Get("value")))
	if *value == "" || *value == "null" {
		value = nil
	}
	if msg := validateConfigurationValue(d, value); msg != "" {
		return nil, paramError("%s", msg)
	}
	if c.st.Settings == nil {
		c.st.Settings = map[string]*string{}
	}
	c.st.Settings[name] = value
	c.changed()
	return map[string]any{"configuration": c.configView(d)}, nil
}

// positiveIntSettings are the modelled names in ConfigurationManagerImpl's
// configValuesForValidation.
var positiveIntSettings = []string{settingUserDataMaxLen}

// validateConfigurationValue is ConfigurationManagerImpl.validateConfigurationValue
// for the modelled settings; "" means valid.
func validateConfigurationValue(d *settingDef, value *string) string {
	if d.kind != configTypeInteger {
		return ""
	}
	text := "null"
	if value != nil {
		text = *value
	}
	n, err := strconv.Atoi(text)
	if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return fmt.Sprintf("There was error in trying to parse value: %s. Please enter a valid integer value for parameter %s",
			text, d.name)
	}
	if slices.Contains(positiveIntSettings, d.name) {
		if n <= 0 {
			return "Please enter a positive value for the configuration parameter:" + d.name
		}
		if d.name == settingUserDataMaxLen && n > userDataMaxLengthLimit {
			return fmt.Sprintf("Please enter a value less than %d for the configuration parameter:%s", userDataMaxLengthLimit, d.name)
		}
	}
	return ""
}
