package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"portal/cmd/portal/config"
)

// TestCommandHelpNamesItsOwnFlagsFirst goes through the table of commands
// and each one's sub-commands: `portal COMMAND [SUB] --help` (and -h)
// succeeds without touching the database, and names every flag of the
// command's own within its first 25 lines; then it points to the shared
// settings in one line instead of listing them. serve's help lists them
// all. The flags are those the command's flag set has, so a new command
// or flag is held to this without being listed here.
func TestCommandHelpNamesItsOwnFlagsFirst(t *testing.T) {
	var made []*flag.FlagSet
	flagSetMade = func(fs *flag.FlagSet) { made = append(made, fs) }
	t.Cleanup(func() { flagSetMade = nil })
	dbFile := filepath.Join(t.TempDir(), "absent", "p.db")
	getenv := env("PORTAL_DATABASE_URL", "sqlite:"+dbFile)

	for _, c := range commands() {
		calls := [][]string{{c.name}}
		for _, sub := range c.subs {
			calls = append(calls, []string{c.name, sub})
		}
		for _, call := range calls {
			for _, help := range []string{"--help", "-h"} {
				args := append(append([]string{}, call...), help)
				made = nil
				var stdout, stderr bytes.Buffer
				if err := run(context.Background(), args, getenv, &stdout, &stderr); err != nil {
					t.Errorf("portal %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
					continue
				}
				out := stdout.String()
				lines := strings.Split(out, "\n")
				head := strings.Join(lines[:min(25, len(lines))], "\n")
				if !strings.HasPrefix(out, "usage:") {
					t.Errorf("portal %s does not start with its usage:\n%s", strings.Join(args, " "), out)
				}
				for _, fs := range made {
					fs.VisitAll(func(f *flag.Flag) {
						if config.IsSetting(f.Name) {
							if !c.allSettings && strings.Contains(out, "-"+f.Name+" ") {
								t.Errorf("portal %s lists the shared setting -%s", strings.Join(args, " "), f.Name)
							}
							return
						}
						if !strings.Contains(head, "-"+f.Name+" ") && !strings.Contains(head, "-"+f.Name+"\n") {
							t.Errorf("portal %s: its flag -%s is not within the first 25 lines:\n%s", strings.Join(args, " "), f.Name, head)
						}
					})
				}
				switch {
				case c.allSettings:
					if !strings.Contains(out, "-database-url string") || !strings.Contains(out, "PORTAL_SESSION_KEY") {
						t.Errorf("portal %s does not list the shared settings:\n%.400s", strings.Join(args, " "), out)
					}
				case !c.noSettings:
					if strings.Count(out, "portal serve -h") != 1 || !strings.Contains(out, "docs/CONFIGURATION.md") {
						t.Errorf("portal %s does not say where the shared settings are:\n%s", strings.Join(args, " "), out)
					}
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Dir(dbFile)); !os.IsNotExist(err) {
		t.Errorf("a command's help touched the database: %v", err)
	}
}

// The usage lists every command of the table, and an unknown flag shows
// the command's short help, not every setting.
func TestUsageListsEveryCommand(t *testing.T) {
	for _, c := range commands() {
		if !strings.Contains(usage(), "\n  "+c.name+" ") && !strings.Contains(usage(), "\n  "+c.name+"\n") {
			t.Errorf("the usage does not list %s", c.name)
		}
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"payments", "capture", "--nope"}, env(), &stdout, &stderr)
	if err == nil || !strings.Contains(stderr.String(), "-amount string") || strings.Contains(stderr.String(), "-database-url") {
		t.Fatalf("an unknown flag: %v\n%s", err, stderr.String())
	}
}
