package contract

// Exported for the tests of package contract_test.
var (
	RestatesStatusName = restatesStatusName
	VersionBump        = versionBump
)
