package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash: source <(folio completion bash)   (or save it in /etc/bash_completion.d/folio)\n" +
			"zsh:  source <(folio completion zsh)    (or save it as _folio in a directory of $fpath)\n" +
			"fish: folio completion fish > ~/.config/fish/completions/folio.fish",
		Action: cmdCompletion,
	})
}

// The bash and zsh scripts ask folio itself for the words that may come
// next (urfave/cli's --generate-bash-completion), so they follow the verbs
// and flags of the installed binary.
const bashCompletion = `# bash completion for folio: source <(folio completion bash)
_folio_complete() {
  local cur words
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  if [[ "$cur" == -* ]]; then
    words=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    words=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${words}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -F _folio_complete folio
`

const zshCompletion = `#compdef folio
# zsh completion for folio: source <(folio completion zsh)
_folio() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _folio folio
`

func cmdCompletion(c *cli.Context) error {
	a, err := args(c, 1)
	if err != nil {
		return err
	}
	w := c.App.Writer
	switch a[0] {
	case "bash":
		_, err = fmt.Fprint(w, bashCompletion)
	case "zsh":
		_, err = fmt.Fprint(w, zshCompletion)
	case "fish":
		var script string
		if script, err = c.App.ToFishCompletion(); err == nil {
			_, err = fmt.Fprint(w, script)
		}
	default:
		return usagef("folio completion %q: the shells are bash, zsh and fish", a[0])
	}
	return err
}
