# bash completion for hvrun -*- shell-script -*-
#
# The commands, options and fixed option values come from the hvrun being
# completed (`hvrun help --complete [COMMAND]`, rendered from cli/usage.c,
# the tables --help and the man pages print), read once per shell; the
# recording ids from the recordings directory (hvrun-record(1)); after
# `--` the program is completed as a command, then its own arguments.
# Works with bash-completion's helpers where they are loaded, without them
# too (source this file from ~/.bashrc).

# Lines of `hvrun help --complete $1`, cached per command in this shell.
_hvrun_lines()
{
    local key=_hvrun_complete_${1:-top}
    if [[ -z ${!key+set} ]]; then
        printf -v "$key" '%s' "$(command hvrun help --complete $1 2>/dev/null)"
    fi
    printf '%s\n' "${!key}"
}

# The option names of command $1 (analyze and record take run's too).
_hvrun_options()
{
    _hvrun_lines "$1" | cut -f1 | tr ' ' '\n'
    case $1 in
    analyze | record) _hvrun_lines run | cut -f1 | tr ' ' '\n' ;;
    esac
}

# "KIND<TAB>VALUES" of option $2 of command $1, or nothing.
_hvrun_option_arg()
{
    local line names
    while IFS= read -r line; do
        names=" ${line%%$'\t'*} "
        if [[ $names == *" $2 "* ]]; then
            line=${line#*$'\t'}
            printf '%s\n' "${line%$'\t'*}"
            return
        fi
    done < <(_hvrun_lines "$1"
             case $1 in analyze | record) _hvrun_lines run ;; esac)
}

# The ids of the recordings in $XDG_DATA_HOME/hvrun/recordings (else
# ~/.local/share/hvrun/recordings), as hvrun record list names them.
_hvrun_recordings()
{
    local dir f
    if [[ ${XDG_DATA_HOME-} == /* ]]; then
        dir=$XDG_DATA_HOME/hvrun/recordings
    else
        dir=$HOME/.local/share/hvrun/recordings
    fi
    for f in "$dir"/*.hvrec; do
        [[ -e $f ]] || continue
        f=${f##*/}
        printf '%s\n' "${f%.hvrec}"
    done
}

_hvrun_files()
{
    if declare -F _filedir >/dev/null; then
        _filedir "$@"
    else
        local IFS=$'\n'
        COMPREPLY=($(compgen ${1:+-d} -f -- "$cur"))
    fi
}

_hvrun()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cword=$COMP_CWORD i cmd= cmd_at=0 sub=
    local -a words=("${COMP_WORDS[@]}")
    COMPREPLY=()

    for ((i = 1; i < cword; i++)); do
        if [[ -z $cmd ]]; then
            [[ ${words[i]} == -* ]] || { cmd=${words[i]}; cmd_at=$i; }
        elif [[ ${words[i]} == -- ]]; then
            # The program and its arguments: completed as a command line.
            if declare -F _command_offset >/dev/null; then
                _command_offset $((i + 1))
            elif ((cword == i + 1)); then
                COMPREPLY=($(compgen -c -- "$cur"))
            else
                _hvrun_files
            fi
            return
        fi
    done

    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "$(_hvrun_lines | cut -f1) --help -h --version" -- "$cur"))
        return
    fi
    ((cmd_at + 1 < cword)) && sub=${words[cmd_at + 1]}

    # An option's argument: --opt VALUE (bash splits --opt=VALUE at '=').
    local opt=$prev
    [[ $cur == = ]] && cur=
    if [[ $cur == --*=* ]]; then
        opt=${cur%%=*}
        cur=${cur#*=}
    elif [[ $prev == = && $cword -ge 2 ]]; then
        opt=${words[cword - 2]}
    fi
    if [[ $opt == -* ]]; then
        local arg kind values
        arg=$(_hvrun_option_arg "$cmd" "$opt")
        kind=${arg%%$'\t'*}
        values=${arg#*$'\t'}
        case $kind in
        choice) COMPREPLY=($(compgen -W "$values" -- "$cur")); return ;;
        file) _hvrun_files; return ;;
        dir) _hvrun_files -d; return ;;
        command) COMPREPLY=($(compgen -c -- "$cur")); return ;;
        word) return ;;
        esac
    fi

    case $cmd in
    record)
        if [[ $sub == rm && $cword -eq $((cmd_at + 2)) ]]; then
            COMPREPLY=($(compgen -W "$(_hvrun_recordings)" -- "$cur"))
            return
        fi
        [[ $sub == list || $sub == clean || $sub == rm ]] && return
        if ((cword == cmd_at + 1)) && [[ $cur != -* ]]; then
            COMPREPLY=($(compgen -W "list rm clean --" -- "$cur"))
            return
        fi
        ;;
    replay)
        if [[ $cur != -* ]]; then
            COMPREPLY=($(compgen -W "$(_hvrun_recordings)" -- "$cur"))
            local -a ids=("${COMPREPLY[@]}")
            _hvrun_files
            COMPREPLY=("${ids[@]}" "${COMPREPLY[@]}")
            return
        fi
        ;;
    detlog)
        [[ $cur != -* ]] && { _hvrun_files; return; }
        ;;
    help)
        COMPREPLY=($(compgen -W "--man --complete $(_hvrun_lines | cut -f1)" -- "$cur"))
        return
        ;;
    esac
    case $cmd in
    run | analyze | record)
        COMPREPLY=($(compgen -W "$(_hvrun_options "$cmd") --" -- "$cur")) ;;
    *)
        COMPREPLY=($(compgen -W "$(_hvrun_options "$cmd")" -- "$cur")) ;;
    esac
} &&
    complete -F _hvrun hvrun

# ex: filetype=sh
