# An interactive bash with job control on script's pty: it takes the
# terminal (TIOCSCTTY, tcsetpgrp for each job), runs a background job and
# a stopped-and-continued one. The job's pid is masked.
printf '%s\n' 'echo hi' 'sleep 0.1 & wait' 'sh -c "kill -STOP \$\$; echo cont" & sleep 0.1; fg' \
    '(exit 3); echo $?' 'exit' |
    script -qc 'bash --norc --noprofile -i' /dev/null |
    sed -e 's/\[1\] [0-9]*/[1] PID/' -e 's/\r//g'
