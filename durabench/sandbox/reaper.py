"""The reaper: a shell script that kills every process an attempt left in its sandbox.

A step that ended (or was given up on) can leave processes behind: forks, daemons, a fork
bomb. Before the sandbox is reused for the next step or handed back, the reaper clears
them from inside, with nothing but the shell and ``/proc``, as root; the caller stops the
sandbox from outside when it gives up.
"""

from __future__ import annotations

__all__ = ["REAP_SCRIPT"]

REAP_SCRIPT = r"""
me=$$; keep=; anc=" "; a=$$
while [ "$a" -gt 1 ]; do
  read -r st < /proc/$a/stat 2>/dev/null || break
  st=${st##*) }; set -- $st; a=$2; anc="$anc$a "
done
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  if [ "$p" -gt 1 ] && { [ -z "$keep" ] || [ "$p" -lt "$keep" ]; }; then keep=$p; fi
done
read -r up _ < /proc/uptime; until=$((${up%.*} + 10)); round=0
while :; do
  round=$((round + 1)); left=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case $p in 1|$keep|$me) continue ;; esac
    case $anc in *" $p "*) continue ;; esac
    kill -STOP "$p" 2>/dev/null
    kill -KILL "$p" 2>/dev/null
    for t in "$d"/task/*/stat; do
      read -r stat < "$t" 2>/dev/null || continue
      rest=${stat##*) }
      case ${rest%% *} in Z|X) ;; *) left=1 ;; esac
    done
  done
  [ $left -eq 0 ] && exit 0
  read -r up _ < /proc/uptime
  [ $round -ge 20 ] && [ "${up%.*}" -ge "$until" ] && break
done
echo "processes survived $round rounds of SIGKILL over 10 s" >&2
exit 1
"""
"""Kill every process in the sandbox but its init, its keeper (the lowest pid after init:
started first), this shell and the shells it runs under (a remote backend's toolbox daemon
and its wrapper; an agent cannot be this shell's parent), until none of their threads is
left, forks included (stopped first, then killed), a process whose main thread exited while
others run included. Forks nothing itself. Run as root. A process tree loses a generation a
round at least, but a killed process takes its time to go (a busy machine, many threads):
the reaper goes on for 10 s (and 20 rounds), reading the clock from ``/proc/uptime`` with no
fork. One still there then refills what is killed (a fork bomb): the reaper gives up, and
the caller stops the sandbox from outside."""
