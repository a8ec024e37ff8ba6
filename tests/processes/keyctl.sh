# tests/processes/keyctl.sh - keyutils' keyctl on the run's keyrings: a new
# session (joined by the shell through KEYCTL_SESSION_TO_PARENT), user,
# logon and keyring keys, piped payloads, links, search, request, timeout,
# revoke, clear, a `keyctl session` child. Serials are masked (Linux's are
# random) and listings sorted (Linux orders a keyring by a hash of the key
# type's kernel address). Run natively and under hvrun (run.sh).
mask() { sed -E 's/(^|[ :]) *[0-9]{5,}/\1N/g'; }
keyctl new_session >/dev/null
k=$(keyctl add user k v @s)
keyctl print "$k"
keyctl rdescribe "$k"
keyctl add logon svc:x secret @s >/dev/null
r=$(keyctl newring ring1 @s)
echo piped | keyctl padd user k2 @s >/dev/null
keyctl link "$k" "$r"
keyctl show @s | mask | sort
keyctl search @s user k2 >/dev/null && echo found
keyctl request user k >/dev/null && echo requested
keyctl request user nope
echo "request: $?"
keyctl pipe "$(keyctl search @s user k2)"
keyctl print "$(keyctl search @s logon svc:x)"
echo "print logon: $?"
keyctl timeout "$k" 100
keyctl rdescribe "$k"
keyctl revoke "$k"
keyctl print "$k"
echo "print revoked: $?"
keyctl list @s | mask | sort
keyctl clear "$r"
keyctl list "$r"
keyctl rdescribe @u
keyctl rdescribe @us
keyctl session - keyctl show @s 2>&1 | mask
keyctl session named sh -c 'keyctl rdescribe @s; keyctl add user in-named x @s >/dev/null; keyctl list @s' 2>&1 | mask
keyctl unlink "$r" @s
keyctl list @s | mask | sort
grep -c . /proc/keys >/dev/null && echo proc-keys-readable
