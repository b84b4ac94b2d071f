package config

// Variable is one setting's environment variable, as an operator writes it
// in a unit file, a container's environment or a manifest.
type Variable struct {
	// Name is the variable, such as PORTAL_ADDR.
	Name string
	// Secret says the setting is masked when printed and may also be read
	// from the file named by Name+"_FILE" (a mounted secret).
	Secret bool
}

// Variables lists every setting's variable, in the order `portal config`
// prints them: what docs/CONFIGURATION.md documents and what the examples
// in deploy/ may set (tests hold both to it).
func Variables() []Variable {
	var c Config
	settings := c.settings()
	out := make([]Variable, len(settings))
	for i, s := range settings {
		out[i] = Variable{Name: s.env, Secret: s.secret}
	}
	return out
}
