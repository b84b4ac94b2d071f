package config

// IsSetting reports whether flagName is the flag of one of the shared
// settings, which every command takes (Load adds them to its flag set),
// rather than a command's own flag: a command's help names its own flags
// and leaves the shared ones to `portal serve -h`.
func IsSetting(flagName string) bool {
	var c Config
	for _, s := range c.settings() {
		if s.flag == flagName {
			return true
		}
	}
	return false
}
