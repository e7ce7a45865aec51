# bash completion for fmuctl. Installed as
# share/bash-completion/completions/fmuctl.
#
# Data-driven: the subcommands are read from `fmuctl --help` (the lines
# under "commands:") and each subcommand's options from `fmuctl COMMAND
# --help` (every --option at the start of a line), once per shell, so
# that a new subcommand or option completes without editing this file.
# Arguments: session ids from `fmuctl list` where a command takes one,
# files (scenarios, FMUs, CSV, keys) elsewhere.

_fmuctl_commands()
{
        if [[ -z ${_fmuctl_cmds-} ]]; then
                _fmuctl_cmds=$("$1" --help 2>/dev/null |
                        sed -n '/^commands:/,/^$/{s/^  \([a-z][a-z-]*\) .*/\1/p}')
        fi
        printf '%s\n' "$_fmuctl_cmds"
}

_fmuctl_options()
{
        local var="_fmuctl_opts_${2//-/_}"

        if [[ -z ${!var-} ]]; then
                printf -v "$var" '%s' "$("$1" "$2" --help 2>/dev/null |
                        grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' |
                        sort -u | tr '\n' ' ')"
        fi
        printf '%s\n' "${!var}"
}

# Files: bash-completion's _filedir when it is loaded, else plain names.
_fmuctl_files()
{
        if declare -F _filedir >/dev/null; then
                _filedir "$@"
        else
                COMPREPLY=($(compgen -f -- "$cur"))
        fi
}

_fmuctl()
{
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        local cword=$COMP_CWORD prog=${COMP_WORDS[0]} cmd i
        local -a words=("${COMP_WORDS[@]}")

        for ((i = 1; i < cword; i++)); do
                case ${words[i]} in
                --endpoint | --server-key | --key) ((i++)) ;;
                -*) ;;
                *) cmd=${words[i]}; break ;;
                esac
        done

        case $prev in
        --endpoint) return ;;
        --server-key | --key | --input | --out | --scenario)
                _fmuctl_files
                return
                ;;
        esac

        if [[ -z ${cmd-} ]]; then
                if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W '--endpoint --server-key --key --json --help' -- "$cur"))
                else
                        COMPREPLY=($(compgen -W "$(_fmuctl_commands "$prog") help" -- "$cur"))
                fi
                return
        fi

        if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$(_fmuctl_options "$prog" "$cmd")" -- "$cur"))
                return
        fi
        case $cmd in
        help)
                COMPREPLY=($(compgen -W "$(_fmuctl_commands "$prog")" -- "$cur"))
                ;;
        run | load | inspect)
                _fmuctl_files '@(ssp|ssd|fmu|csv)'
                ;;
        keygen)
                _fmuctl_files
                ;;
        plot)
                if [[ $prev == -o || $prev == --output ]]; then
                        _fmuctl_files '@(png|svg)'
                else
                        _fmuctl_files '@(csv)'
                fi
                ;;
        status | start | pause | resume | stop | unload | warp | step | get | set | watch | snapshot | restore)
                COMPREPLY=($(compgen -W "$("$prog" list 2>/dev/null | awk 'NR > 1 {print $1}')" -- "$cur"))
                ;;
        esac
}
complete -F _fmuctl fmuctl
