package storage

// Limits deployVirtualMachine enforces, at CloudStack's defaults.
const (
	UserDataMaxPOST      = 1048576 // UserDataManagerImpl's MAX_HTTP_POST_LENGTH
	CustomDiskMinSizeGB  = 1       // custom.diskoffering.size.min
	CustomDiskMaxSizeGB  = 1024    // custom.diskoffering.size.max
	VMPasswordLength     = 6       // vm.password.length
	InstanceNameSuffix   = "VM"    // instance.name
	CustomParameterLimit = 2147483647
)
