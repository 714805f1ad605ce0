package infrastructure

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// PresetSetting stores a value given on the command line, as the
// configuration row an operator would set; nil keeps the stored one.
func PresetSetting(st *model.State, name string, value *string) {
	if value == nil {
		return
	}
	if st.Settings == nil {
		st.Settings = map[string]*string{}
	}
	st.Settings[name] = value
}

// PresetDurationSetting stores a duration given on the command line as the
// whole units the setting counts in (rounded up, so that 100ms shows as 1).
func PresetDurationSetting(st *model.State, name string, d, unit time.Duration) {
	if d <= 0 {
		return
	}
	if st.Settings == nil {
		st.Settings = map[string]*string{}
	}
	st.Settings[name] = model.Ptr(strconv.Itoa(int(math.Ceil(float64(d) / float64(unit)))))
}

// configurationCommands are the commands of configurations.go (registerCommands).
func configurationCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listConfigurations", Sync: listConfigurations},
		{Name: "updateConfiguration", Sync: updateConfiguration},
	}
}

// scopeParams are the scope parameters of listConfigurations and
// updateConfiguration, in the order getParamCount reads them.
var scopeParams = []string{"zoneid", "clusterid", "accountid", "domainid", "storageid", "imagestoreuuid"}

// configScope is the one scope parameter given, "" for the global scope.
func configScope(c *kernel.Call) (string, *kernel.APIError) {
	var given []string
	for _, p := range scopeParams {
		if c.Params.Get(p) != "" {
			given = append(given, p)
		}
	}
	if len(given) > 1 {
		return "", kernel.ParamError("cannot handle multiple IDs, provide only one ID corresponding to the scope")
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
func listConfigurations(c *kernel.Call) (any, error) {
	p := c.Params
	if p.Get("subgroup") != "" && p.Get("group") == "" {
		return nil, kernel.ParamError("Configuration group name must be specified with the subgroup name")
	}
	scope, err := configScope(c)
	if err != nil {
		return nil, err
	}
	var rows []*model.SettingDef
	for i := range model.SettingDefs {
		d := &model.SettingDefs[i]
		if scope == "" && d.Category != model.ConfigCategoryForbidden && kernel.OptEq(p.Get("category"), d.Category) &&
			settingIn(c, d) {
			rows = append(rows, d)
		}
	}
	l := kernel.Lister[*model.SettingDef]{Key: "configuration", ID: func(d *model.SettingDef) string { return d.Name },
		Name: func(d *model.SettingDef) string { return d.Name }, NameLike: true, View: views.ConfigView,
		Keyword: func(d *model.SettingDef) []string {
			return []string{d.Name, "DEFAULT", d.Component, d.Description, d.Category, c.State.Setting(d.Name)}
		}}
	return l.Run(c, rows)
}

// updateConfiguration is ConfigurationManagerImpl.updateConfiguration for
// the global scope: an unknown name and a value that does not validate are
// refused (431); no value answers the setting unchanged; a blank value or
// "null" stores null. The change takes effect when the code that uses the
// setting reads it, which for some settings is only at start-up.
func updateConfiguration(c *kernel.Call) (any, error) {
	name := c.Params.Get("name")
	d := model.SettingDefByName(name)
	if !settingIn(c, d) {
		return nil, kernel.ParamError("Config parameter with name %s doesn't exist", name)
	}
	if !c.Params.Has("value") {
		return map[string]any{"configuration": views.ConfigView(c, d)}, nil
	}
	scope, err := configScope(c)
	if err != nil {
		return nil, err
	}
	if scope != "" {
		return nil, kernel.ParamError("Invalid scope id provided for the parameter %s", name)
	}
	value := model.Ptr(strings.TrimSpace(c.Params.Get("value")))
	if *value == "" || *value == "null" {
		value = nil
	}
	if msg := validateConfigurationValue(d, value); msg != "" {
		return nil, kernel.ParamError("%s", msg)
	}
	if c.State.Settings == nil {
		c.State.Settings = map[string]*string{}
	}
	c.State.Settings[name] = value
	c.Changed()
	return map[string]any{"configuration": views.ConfigView(c, d)}, nil
}

// settingIn says the release served declares the setting: an older one
// has no configuration row for a setting a later release added.
func settingIn(c *kernel.Call, d *model.SettingDef) bool {
	return d != nil && c.Engine.Schema.Version.AtLeast(d.Since)
}

// positiveIntSettings are the modelled names in ConfigurationManagerImpl's
// configValuesForValidation.
var positiveIntSettings = []string{model.SettingUserDataMaxLen}

// validateConfigurationValue is ConfigurationManagerImpl.validateConfigurationValue
// for the modelled settings; "" means valid.
func validateConfigurationValue(d *model.SettingDef, value *string) string {
	if d.Kind == model.ConfigTypeBoolean {
		// A Boolean takes only these exact words, and never null.
		if value == nil || *value != "true" && *value != "false" {
			return "Please enter either 'true' or 'false'."
		}
		return ""
	}
	if d.Kind != model.ConfigTypeInteger {
		return ""
	}
	text := "null"
	if value != nil {
		text = *value
	}
	n, err := strconv.Atoi(text)
	if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return fmt.Sprintf("There was error in trying to parse value: %s. Please enter a valid integer value for parameter %s",
			text, d.Name)
	}
	if slices.Contains(positiveIntSettings, d.Name) {
		if n <= 0 {
			return "Please enter a positive value for the configuration parameter:" + d.Name
		}
		if d.Name == model.SettingUserDataMaxLen && n > model.UserDataMaxLengthLimit {
			return fmt.Sprintf("Please enter a value less than %d for the configuration parameter:%s", model.UserDataMaxLengthLimit, d.Name)
		}
	}
	return ""
}
