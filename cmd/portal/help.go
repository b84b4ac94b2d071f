package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"portal/cmd/portal/config"
)

// sharedSettingsLine is what a command's help says of the settings every
// command takes (config.Load adds some 60 of them to each flag set), in
// place of listing them: listed, they hid the command's own few flags.
const sharedSettingsLine = "Shared settings (database, secrets, payments, mail, ...) are flags or PORTAL_* variables of every command: `portal serve -h` lists them, docs/CONFIGURATION.md explains them."

// flagSetMade, when set (by the help test), is told of every flag set a
// command makes, so that the test knows each command's own flags without
// a second list of them.
var flagSetMade func(*flag.FlagSet)

// newFlagSet is the flag set of the command name ("payments capture"):
// errors are returned, not exits, and its help (-h, --help, or a flag it
// does not know) is the command's usage and own flags first.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("portal "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		c, _ := lookupCommand(strings.Fields(name)[0])
		printCommandHelp(fs.Output(), c, fs.Name(), fs)
	}
	if flagSetMade != nil {
		flagSetMade(fs)
	}
	return fs
}

// printCommandHelp writes the help of c as called by fullName ("portal
// payments capture"): its usage, the lines of that sub-command when the
// usage has them; then its flags of fs (nil: none parsed yet), one a
// line; then, unless it is serve or config, one line on the shared
// settings instead of them.
func printCommandHelp(w io.Writer, c command, fullName string, fs *flag.FlagSet) {
	fmt.Fprintln(w, usageOf(c, fullName))
	if fs != nil && c.allSettings {
		fmt.Fprintf(w, "\nflags of %s (each also read from the PORTAL_* variable it names):\n", fullName)
		fs.PrintDefaults()
		return
	}
	if fs != nil {
		var own []*flag.Flag
		fs.VisitAll(func(f *flag.Flag) {
			if !config.IsSetting(f.Name) {
				own = append(own, f)
			}
		})
		if len(own) > 0 {
			fmt.Fprintf(w, "flags of %s:\n", fullName)
			printFlags(w, own)
		}
	}
	if !c.noSettings {
		fmt.Fprintln(w, sharedSettingsLine)
	}
}

// usageOf is the usage of c for fullName: the lines of c's usage that
// name fullName, each with the more indented lines that continue it, or
// the whole usage when none does (the command itself, or a usage that
// does not name its sub-commands one a line).
func usageOf(c command, fullName string) string {
	var kept []string
	keeping, indent := false, 0
	for _, line := range strings.Split(strings.TrimRight(c.usage, "\n"), "\n") {
		text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "usage:"))
		lineIndent := len(line) - len(strings.TrimLeft(line, " "))
		if strings.HasPrefix(text, "portal ") {
			keeping, indent = text == fullName || strings.HasPrefix(text, fullName+" "), lineIndent
			if keeping {
				kept = append(kept, "  "+text)
			}
			continue
		}
		if keeping && lineIndent > indent {
			kept = append(kept, "  "+strings.Repeat(" ", lineIndent-indent)+strings.TrimSpace(line))
			continue
		}
		keeping = false
	}
	if fullName == "portal "+c.name || len(kept) == 0 {
		u := strings.TrimRight(c.usage, "\n")
		if u == "" {
			u = "usage: " + fullName + " [flags]"
		}
		return u
	}
	if portalLines := slices.IndexFunc(kept[1:], func(l string) bool { return strings.HasPrefix(l, "  portal ") }); portalLines < 0 {
		return "usage: " + strings.TrimSpace(kept[0]) + joinLines(kept[1:]) // one sub-command line: on the usage line
	}
	return "usage:" + joinLines(kept)
}

// joinLines is lines, each after a newline.
func joinLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("\n" + l)
	}
	return b.String()
}

// printFlags writes flags one a line (the flag package's own listing takes
// two a flag): name and kind of value, what it is for, its default.
func printFlags(w io.Writer, flags []*flag.Flag) {
	names := make([]string, len(flags))
	width := 0
	for i, f := range flags {
		kind, _ := flag.UnquoteUsage(f)
		names[i] = "-" + f.Name
		if kind != "" {
			names[i] += " " + kind
		}
		width = max(width, len(names[i]))
	}
	for i, f := range flags {
		_, text := flag.UnquoteUsage(f)
		if d := f.DefValue; d != "" && d != "0" && d != "false" {
			text += " (default " + d + ")"
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, names[i], text)
	}
}

// helpAsked reports whether args ask for help (-h, -help, --help) before
// a "--" that would end the flags.
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}
