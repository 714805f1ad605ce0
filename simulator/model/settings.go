package model

import (
	"strconv"
)

// Global settings (the configuration table) the simulator models. Each
// follows its ConfigKey or Config enum entry: name, category, component,
// default, description, type and whether it is dynamic.
const (
	SettingInternalSites    = "secstorage.allowed.internal.sites"
	SettingUploadInterval   = "upload.monitoring.interval"
	SettingUploadTimeout    = "upload.operation.timeout"
	SettingUserDataMaxLen   = "vm.userdata.max.length"
	SettingExpungeDelay     = "expunge.delay"
	SettingExpungeInterval  = "expunge.interval"
	SettingVMStatsInterval  = "vm.stats.interval"
	SettingAPILimitEnabled  = "api.throttling.enabled"
	SettingAPILimitInterval = "api.throttling.interval"
	SettingAPILimitMax      = "api.throttling.max"
	SettingAPILimitCache    = "api.throttling.cachesize"
	SettingExposeVersion    = "expose.cloudstack.version.api.list.capabilities"
	UserDataMaxLengthLimit  = 1048576 // ConfigurationManagerImpl.validateConfigurationValue's cap
	ConfigTypeInteger       = "Integer"
	ConfigTypeBoolean       = "Boolean"
	configTypeString        = "String"
	configCategoryAdvanced  = "Advanced"
	ConfigCategoryForbidden = "Hidden" // searchForConfigurations never lists these
)

// SettingDef is one global setting as ConfigKey declares it.
type SettingDef struct {
	Name, Category, Component, Description, Kind string
	DefaultValue                                 *string // nil: CloudStack's default is null
	Dynamic                                      bool
	// Since is the release line that declared the setting ("" for all the
	// simulator serves): an older release has no such configuration row.
	Since string
}

// Ptr returns a pointer to a copy of s, for settings whose default may be null.
func Ptr(s string) *string { return &s }

// SettingDefs are the settings the simulator knows, sorted by name as searchForConfigurations orders them.
var SettingDefs = []SettingDef{
	// Config.ApiLimitCacheSize, ApiLimitEnabled, ApiLimitInterval, ApiLimitMax
	// (server/src/main/java/com/cloud/configuration/Config.java): read once,
	// by ApiRateLimitServiceImpl.configure, so not dynamic.
	{Name: SettingAPILimitCache, Category: configCategoryAdvanced, Component: "ManagementServer", Kind: ConfigTypeInteger,
		DefaultValue: Ptr("50000"), Description: "Account based API count cache size"},
	{Name: SettingAPILimitEnabled, Category: configCategoryAdvanced, Component: "ManagementServer", Kind: ConfigTypeBoolean,
		DefaultValue: Ptr("false"), Description: "Enable/disable Api rate limit"},
	{Name: SettingAPILimitInterval, Category: configCategoryAdvanced, Component: "ManagementServer", Kind: ConfigTypeInteger,
		DefaultValue: Ptr("1"), Description: "Time interval (in seconds) to reset API count"},
	{Name: SettingAPILimitMax, Category: configCategoryAdvanced, Component: "ManagementServer", Kind: ConfigTypeInteger,
		DefaultValue: Ptr("25"), Description: "Max allowed number of APIs within fixed interval"},
	// ManagementServerImpl.exposeCloudStackVersionInApiListCapabilities:
	// added in 4.21 (apache/cloudstack#10575; 4.20.1 still shows the version
	// everywhere, apache/cloudstack#11423).
	{Name: SettingExposeVersion, Category: configCategoryAdvanced, Component: "ManagementServer", Kind: ConfigTypeBoolean,
		DefaultValue: Ptr("true"), Dynamic: true, Since: "4.21",
		Description: "Indicates whether ACS version should show in the listCapabilities API."},
	// Config.ExpungeDelay
	{Name: SettingExpungeDelay, Category: configCategoryAdvanced, Component: "UserVmManager", Kind: ConfigTypeInteger,
		DefaultValue: Ptr("86400"), Description: "Determines how long (in seconds) to wait before actually expunging " +
			"destroyed vm. The default value = the default value of expunge.interval"},
	// Config.ExpungeInterval
	{Name: SettingExpungeInterval, Category: configCategoryAdvanced, Component: "UserVmManager", Kind: ConfigTypeInteger,
		DefaultValue: Ptr("86400"), Description: "The interval (in seconds) to wait before running the expunge thread."},
	// Config.SecStorageAllowedInternalDownloadSites
	{Name: SettingInternalSites, Category: configCategoryAdvanced, Component: "ManagementServer", Kind: configTypeString,
		Description: "Comma separated list of cidrs internal to the datacenter that can host template download " +
			"servers, please note 0.0.0.0 is not a valid site"},
	// ImageStoreUploadMonitorImpl.UploadMonitoringInterval
	{Name: SettingUploadInterval, Category: configCategoryAdvanced, Component: "ImageStoreUploadMonitor",
		Kind: ConfigTypeInteger, DefaultValue: Ptr("60"), Dynamic: true,
		Description: "Interval (in seconds) to check the status of volumes that are uploaded using HTTP POST request"},
	// ImageStoreUploadMonitorImpl.UploadOperationTimeout
	{Name: SettingUploadTimeout, Category: configCategoryAdvanced, Component: "ImageStoreUploadMonitor",
		Kind: ConfigTypeInteger, DefaultValue: Ptr("60"), Dynamic: true,
		Description: "Time (in minutes) to wait before abandoning volume upload using HTTP POST request"},
	// Config.VmStatsInterval: read once, by StatsCollector.init, so not dynamic.
	{Name: SettingVMStatsInterval, Category: configCategoryAdvanced, Component: "ManagementServer", Kind: ConfigTypeInteger,
		DefaultValue: Ptr("60000"), Description: "The interval (in milliseconds) when vm stats are retrieved from agents."},
	// UserDataManager.VM_USERDATA_MAX_LENGTH
	{Name: SettingUserDataMaxLen, Category: configCategoryAdvanced, Component: "UserDataManager",
		Kind: ConfigTypeInteger, DefaultValue: Ptr("32768"), Dynamic: true,
		Description: "Max length of vm userdata after base64 encoding. Default is 32768 and maximum is 1048576"},
}

// SettingDefByName finds a setting the simulator knows; nil when none.
func SettingDefByName(name string) *SettingDef {
	for i := range SettingDefs {
		if SettingDefs[i].Name == name {
			return &SettingDefs[i]
		}
	}
	return nil
}

// SettingValue is a setting's value in the configuration table; nil is SQL
// NULL. The state keeps the values an operator set; the rest are defaults.
func (st *State) SettingValue(name string) *string {
	if v, ok := st.Settings[name]; ok {
		return v
	}
	if d := SettingDefByName(name); d != nil {
		return d.DefaultValue
	}
	return nil
}

// Setting is the current value of a modelled global setting, "" for null.
// Code that follows CloudStack reads settings through it (or settingInt),
// minding when CloudStack itself reads them: some only at start-up.
func (st *State) Setting(name string) string {
	if v := st.SettingValue(name); v != nil {
		return *v
	}
	return ""
}

// SettingInt is an Integer setting's value, or its default when the stored
// text does not parse (ConfigKey.value falls back the same way).
func (st *State) SettingInt(name string) int {
	if n, err := strconv.Atoi(st.Setting(name)); err == nil {
		return n
	}
	if d := SettingDefByName(name); d != nil && d.DefaultValue != nil {
		n, _ := strconv.Atoi(*d.DefaultValue)
		return n
	}
	return 0
}

// Limits deployVirtualMachine enforces, at CloudStack's defaults.
const (
	UserDataMaxPOST      = 1048576 // UserDataManagerImpl's MAX_HTTP_POST_LENGTH
	CustomDiskMinSizeGB  = 1       // custom.diskoffering.size.min
	CustomDiskMaxSizeGB  = 1024    // custom.diskoffering.size.max
	VMPasswordLength     = 6       // vm.password.length
	InstanceNameSuffix   = "VM"    // instance.name
	CustomParameterLimit = 2147483647
)
