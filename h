hvrun: /work/main/build/guest/futex_waitv: no such file
