# The one way the shell scripts (hack/demo.sh, the e2e harness in hack/e2e/)
# start, await and stop the CloudStack simulator and their other daemons.
# Source it; it sets no shell options of the caller's.

# daemon_start LOG CMD...: run CMD (a binary and its flags, behind any
# wrapper such as setsid or ip netns exec) in the background with stdin
# closed and its output in LOG; its pid in DAEMON_PID.
daemon_start() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 </dev/null &
  DAEMON_PID=$!
}

# simulator_endpoint LOG PID SECONDS: print the API URL the simulator
# announces in LOG ("… listening on http://ADDR/client/api") once it accepts
# connections; fail, with its last log lines, if PID exits first or SECONDS
# pass.
simulator_endpoint() {
  local log=$1 pid=$2 secs=$3 line
  local deadline=$((SECONDS + secs))
  while :; do
    line=$(grep -o -m 1 'listening on http://[^ ]*/client/api' "$log" 2>/dev/null || true)
    if [ -n "$line" ]; then
      echo "${line#listening on }"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the simulator exited before it listened; the end of $log:" >&2
      tail -n 20 "$log" >&2
      return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "the simulator did not say it was listening within $secs s (see $log)" >&2
      return 1
    fi
    sleep 0.1
  done
}

# daemon_stop PID [SECONDS]: SIGTERM, as monit and an operator stop a daemon
# (the simulator then saves its state and removes its image directories);
# SIGKILL if it still runs after SECONDS (default 5). Succeeds when PID is
# not running.
daemon_stop() {
  local pid=$1 tenths=$((${2:-5} * 10))
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq "$tenths"); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}
