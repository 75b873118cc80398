package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves flags that follow positional arguments in front of
// them, so that `folio doc save ID --from FILE` works: urfave/cli/v2 stops
// parsing flags at the first positional argument. Everything after "--"
// stays as it is.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	cmds := app.Commands
	flags := app.Flags
	// Global flags and the command path.
	for len(rest) > 0 {
		a := rest[0]
		if strings.HasPrefix(a, "-") {
			n := flagArity(flags, a)
			if n > len(rest) {
				n = len(rest)
			}
			out = append(out, rest[:n]...)
			rest = rest[n:]
			continue
		}
		cmd := findCommand(cmds, a)
		if cmd == nil {
			break
		}
		out = append(out, a)
		rest = rest[1:]
		cmds, flags = cmd.Subcommands, cmd.Flags
		if len(cmds) == 0 {
			break
		}
	}
	var global, fl, pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			a = joinedShort(flags, a)
			rest[i] = a
			// A global flag (--data, --server, …) given after the command
			// goes back in front of it, where urfave/cli looks for it.
			set := flags
			isGlobal := !hasFlag(flags, a) && hasFlag(app.Flags, a)
			if isGlobal {
				set = app.Flags
			}
			n := flagArity(set, a)
			end := i + n
			if end > len(rest) {
				end = len(rest)
			}
			if isGlobal {
				global = append(global, rest[i:end]...)
			} else {
				fl = append(fl, rest[i:end]...)
			}
			i = end - 1
			continue
		}
		pos = append(pos, a)
	}
	out = append(out[:1], append(global, out[1:]...)...)
	out = append(out, fl...)
	return append(out, pos...)
}

// joinedShort spells a one-letter flag with its value attached, as git
// and getopt take it (`-n1`, `-mfix`), as `-n=1`, the form package flag
// reads; anything else is returned as it is.
func joinedShort(flags []cli.Flag, a string) string {
	if len(a) < 3 || a[1] == '-' || strings.Contains(a, "=") || hasFlag(flags, a) {
		return a
	}
	short := a[1:2]
	for _, f := range flags {
		if _, ok := f.(*cli.BoolFlag); ok {
			continue
		}
		for _, n := range f.Names() {
			if n == short {
				return "-" + short + "=" + a[2:]
			}
		}
	}
	return a
}

// hasFlag reports whether flag a names one of flags.
func hasFlag(flags []cli.Flag, a string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// flagArity is how many arguments flag a takes up: 1 for booleans and the
// --name=value form, 2 for a flag that takes a value.
func flagArity(flags []cli.Flag, a string) int {
	if strings.Contains(a, "=") {
		return 1
	}
	name := strings.TrimLeft(a, "-")
	// A command's own flag first: `persona style ID --version N` is the
	// command's --version N, not the app's --version.
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				if _, ok := f.(*cli.BoolFlag); ok {
					return 1
				}
				return 2
			}
		}
	}
	return 1
}
