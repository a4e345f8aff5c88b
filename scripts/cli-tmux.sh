#!/usr/bin/env bash
# Tests `saga` as a person uses it, in a real terminal: tmux runs `saga call` against the
# deploy, weather, migrate and meeting examples, the answers are typed with send-keys, and
# the screen is read with capture-pane. Also: --answers without a terminal, --stdio, an
# error line for a server that is down, `saga inspect` on a real token, a task followed
# with --task (answered by hand, and cancelled with Ctrl-C), a re-asked --answers entry
# stopped with the server's reason, and a form's fields asked in their declared order.
#
#   bash scripts/cli-tmux.sh          # needs tmux (apt-get install tmux)
#
# Prints `N passed, N failed` and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v tmux >/dev/null 2>&1; then
  echo "cli-tmux: tmux is not installed (apt-get install tmux)" >&2
  exit 2
fi

echo "== building saga and the examples"
cargo build --quiet -p saga-cli || exit 2
cargo build --quiet -p saga-workspace --example deploy --example weather --example migrate --example meeting --example research || exit 2
SAGA="$PWD/target/debug/saga"
EXAMPLES="$PWD/target/debug/examples"

WORK="$(mktemp -d)"
SOCKET="saga-cli-test-$$"
PIDS=()
cleanup() {
  tmux -L "$SOCKET" kill-server >/dev/null 2>&1 || true
  for pid in "${PIDS[@]}"; do kill "$pid" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
# The examples keep tasks in a SQLite file: this run's own, not one a previous run left.
export SAGA_TASKS="sqlite:$WORK/tasks.db"

PASSED=0
FAILED=0
pass() { echo "ok   $1"; PASSED=$((PASSED + 1)); }
fail() {
  echo "FAIL $1"
  if [ -n "${2:-}" ]; then sed 's/^/     | /' "$2"; fi
  FAILED=$((FAILED + 1))
}

# Fixed keys, so that the inspect step below is deterministic: a token names its key by
# a 4-bit tag, and a random wrong key would share it one time in sixteen. KEY's tag is 2,
# OTHER_KEY's is 5.
KEY="$(printf '11%.0s' $(seq 32))"
OTHER_KEY="$(printf '33%.0s' $(seq 32))"

# start_server NAME: starts an example on a free port; sets URL.
start_server() {
  local log="$WORK/$1.log"
  SAGA_KEYS="$KEY" "$EXAMPLES/$1" --http 127.0.0.1:0 >"$log" 2>&1 &
  PIDS+=($!)
  URL=""
  for _ in $(seq 1 100); do
    URL="$(sed -n 's/^listening on \(http:.*\)$/\1/p' "$log" | head -n1)"
    [ -n "$URL" ] && return 0
    sleep 0.1
  done
  echo "cli-tmux: $1 did not start" >&2
  cat "$log" >&2
  exit 2
}

# In tmux: run CMD in a new session (a 120x50 terminal) of its own; the sessions of
# earlier scenarios stay until the end, so the tmux server never exits in between.
RUN=0
tmux_start() {
  RUN=$((RUN + 1))
  SESSION="cli$RUN"
  tmux -L "$SOCKET" new-session -d -s "$SESSION" -x 120 -y 50 \
    "$1; echo \"EXIT=\$?\"; sleep 600"
}
screen() { tmux -L "$SOCKET" capture-pane -p -t "$SESSION" -S -200; }
# wait_for TEXT [SECONDS]: until TEXT is on screen.
wait_for() {
  local deadline=$((SECONDS + ${2:-20}))
  while [ $SECONDS -lt $deadline ]; do
    screen | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  return 1
}
type_line() {
  tmux -L "$SOCKET" send-keys -t "$SESSION" -l -- "$1"
  tmux -L "$SOCKET" send-keys -t "$SESSION" Enter
}
key() { tmux -L "$SOCKET" send-keys -t "$SESSION" "$1"; }

# step NAME: each wait either passes or ends the scenario with the screen shown.
scenario_failed() {
  screen >"$WORK/screen.txt"
  fail "$1 (waiting for: $2)" "$WORK/screen.txt"
}

start_server deploy
DEPLOY_URL="$URL"
start_server weather
WEATHER_URL="$URL"
start_server migrate
MIGRATE_URL="$URL"
start_server meeting
MEETING_URL="$URL"
start_server research
RESEARCH_URL="$URL"

# 1. deploy: a form, then a sampling request, typed by hand.
name="tmux: deploy, form and sampling typed by hand"
tmux_start "$SAGA call $DEPLOY_URL complex_tool initial_arg=x"
if ! wait_for "Answer this form?"; then scenario_failed "$name" "Answer this form?"
else
  key Enter
  if ! wait_for "target:"; then scenario_failed "$name" "target:"
  else
    type_line "production"
    if ! wait_for "Answer as the model:"; then scenario_failed "$name" "Answer as the model:"
    else
      type_line "Yes, all systems are green."
      if wait_for "EXIT=0" && screen | grep -qF "Deployment to production initiated successfully based on confirmation."; then
        pass "$name"
        screen | sed '/^$/d' >"$WORK/deploy-screen.txt"
      else scenario_failed "$name" "the final result and EXIT=0"; fi
    fi
  fi
fi

# 1b. The same by hand over --stdio, where the model says no.
name="tmux: --stdio, the model says no"
tmux_start "SAGA_KEYS=$KEY $SAGA call --stdio '$EXAMPLES/deploy --stdio' complex_tool initial_arg=x"
if ! wait_for "Answer this form?"; then scenario_failed "$name" "Answer this form?"
else
  key Enter
  if ! wait_for "target:"; then scenario_failed "$name" "target:"
  else
    type_line "eu-west"
    if ! wait_for "Answer as the model:"; then scenario_failed "$name" "Answer as the model:"
    else
      type_line "No, it is Friday."
      if wait_for "EXIT=0" && screen | grep -qF "Is deploying to 'eu-west' safe right now?" &&
        screen | grep -qF "Deployment postponed."; then
        pass "$name"
      else scenario_failed "$name" "Deployment postponed. and EXIT=0"; fi
    fi
  fi
fi

# 1c. research: a sample that offers tools; the person answers as the model, first with a
#     call of one of the tools (chosen, its input typed as JSON), then with text.
name="tmux: research, a tool use then text typed as the model"
tmux_start "$SAGA call $RESEARCH_URL research 'question=What is MRTR?'"
if ! wait_for "tool search: Search the project's notes"; then scenario_failed "$name" "the tools shown"
elif ! wait_for "call ask_user"; then scenario_failed "$name" "the choice of a tool"
else
  key Down
  key Enter
  if ! wait_for "Input of search (a JSON object):"; then scenario_failed "$name" "Input of search"
  else
    tmux -L "$SOCKET" send-keys -t "$SESSION" BSpace BSpace
    type_line '{"query": "mrtr"}'
    if ! wait_for "[result of "; then scenario_failed "$name" "the tool's result in the next sample"
    elif ! wait_for "answer with text"; then scenario_failed "$name" "the second turn"
    else
      key Enter
      if ! wait_for "Answer as the model:"; then scenario_failed "$name" "the text prompt"
      else
        type_line "MRTR is the stateless era."
        if wait_for "EXIT=0" && screen | grep -qF "MRTR is the stateless era." &&
          screen | grep -qF "requestState"; then
          pass "$name"
        else scenario_failed "$name" "the model's text as the result and EXIT=0"; fi
      fi
    fi
  fi
fi

# 1d. research from an answers file: a tool call as the guide writes it, then text.
name="--answers: research, a tool call then text, from a file"
cat >"$WORK/research-answers.json" <<'JSON'
{"sample-1": {"tool_use": {"name": "search", "input": {"query": "mrtr"}}}, "sample-2": "MRTR is stateless."}
JSON
if "$SAGA" call --answers "$WORK/research-answers.json" "$RESEARCH_URL" research 'question=What is MRTR?' \
  >"$WORK/research-out.txt" 2>&1 && grep -qF "MRTR is stateless." "$WORK/research-out.txt" &&
  grep -qF "[calls search" "$WORK/research-out.txt"; then
  pass "$name"
else fail "$name" "$WORK/research-out.txt"; fi

# 2. weather: one round with two requests (a sampling request and a form).
name="tmux: weather, two requests in one round"
tmux_start "$SAGA call $WEATHER_URL get_weather location=Paris"
if ! wait_for "input_required: 2 request(s)"; then scenario_failed "$name" "2 requests"
elif ! wait_for "Answer as the model:"; then scenario_failed "$name" "Answer as the model:"
else
  type_line "Paris."
  if ! wait_for "Answer this form?"; then scenario_failed "$name" "Answer this form?"
  else
    key Enter
    if ! wait_for "name:"; then scenario_failed "$name" "name:"
    else
      type_line "octocat"
      if wait_for "EXIT=0" && screen | grep -qF "Current weather in Paris:" &&
        screen | grep -qF "result after 2 round(s)"; then
        pass "$name"
      else scenario_failed "$name" "the weather, after 2 rounds"; fi
    fi
  fi
fi

# 3. decline is one key: n at "Answer this form?".
name="tmux: n declines the form"
tmux_start "$SAGA call $DEPLOY_URL complex_tool initial_arg=x"
if ! wait_for "Answer this form?"; then scenario_failed "$name" "Answer this form?"
else
  key n
  key Enter
  if wait_for "EXIT=1" && screen | grep -qF "isError: true" && screen | grep -qiF "declined"; then
    pass "$name"
  else scenario_failed "$name" "an isError result saying declined, EXIT=1"; fi
fi

# 4. cancel is one key: Esc in a field.
name="tmux: Esc cancels the form"
tmux_start "$SAGA call $DEPLOY_URL complex_tool initial_arg=x"
if ! wait_for "Answer this form?"; then scenario_failed "$name" "Answer this form?"
else
  key Enter
  if ! wait_for "target:"; then scenario_failed "$name" "target:"
  else
    key Escape
    if wait_for "EXIT=1" && screen | grep -qF "(cancelled)" && screen | grep -qiF "cancel"; then
      pass "$name"
    else scenario_failed "$name" "(cancelled), an isError result, EXIT=1"; fi
  fi
fi

# 5. --answers: no terminal, no prompts.
name="--answers FILE, no terminal"
cat >"$WORK/answers.json" <<'EOF'
{"elicit-1": {"action": "accept", "content": {"target": "staging"}},
 "sample-2": "Yes, go ahead."}
EOF
if "$SAGA" call --answers "$WORK/answers.json" "$DEPLOY_URL" complex_tool initial_arg=x \
  </dev/null >"$WORK/out.txt" 2>&1 &&
  grep -qF "Deployment to staging initiated successfully based on confirmation." "$WORK/out.txt"; then
  pass "$name"
else fail "$name" "$WORK/out.txt"; fi

# 6. --stdio with --answers.
name="--stdio with --answers"
if SAGA_KEYS="$KEY" "$SAGA" call --answers "$WORK/answers.json" --stdio "$EXAMPLES/deploy --stdio" \
  complex_tool initial_arg=x </dev/null >"$WORK/out.txt" 2>&1 &&
  grep -qF "Deployment to staging initiated successfully" "$WORK/out.txt"; then
  pass "$name"
else fail "$name" "$WORK/out.txt"; fi

# 6b. A 2025-11-25 session (--session): the server sends its requests during the call.
name="--session (2025-11-25) with --answers"
cat >"$WORK/session.json" <<'EOF2'
{"elicitation-1": {"target": "qa"}, "sampling-2": "Yes."}
EOF2
if "$SAGA" call --session --answers "$WORK/session.json" "$DEPLOY_URL" complex_tool initial_arg=x \
  </dev/null >"$WORK/out.txt" 2>&1 &&
  grep -qF "Deployment to qa initiated successfully" "$WORK/out.txt" &&
  grep -qF "result after 1 round(s)" "$WORK/out.txt"; then
  pass "$name"
else fail "$name" "$WORK/out.txt"; fi

# 7. A server that is down: one line on stderr, exit 2, no panic.
name="server down: one error line, exit 2"
"$SAGA" call --answers "$WORK/answers.json" http://127.0.0.1:1/mcp complex_tool initial_arg=x \
  >"$WORK/out.txt" 2>"$WORK/err.txt"
status=$?
if [ $status -eq 2 ] && [ "$(wc -l <"$WORK/err.txt")" -eq 1 ] &&
  grep -q "^saga: error: cannot connect to http://127.0.0.1:1/mcp: Connection refused" "$WORK/err.txt" &&
  ! grep -qi "panick" "$WORK/err.txt"; then
  pass "$name"
else
  echo "exit $status" >>"$WORK/err.txt"
  fail "$name" "$WORK/err.txt"
fi

# 8. A -32602 (a required argument missing): one line, exit 2.
name="invalid arguments: the server's -32602 on one line"
"$SAGA" call --answers "$WORK/answers.json" "$DEPLOY_URL" complex_tool >"$WORK/out.txt" 2>"$WORK/err.txt"
status=$?
if [ $status -eq 2 ] && [ "$(wc -l <"$WORK/err.txt")" -eq 1 ] && grep -qF -- "-32602" "$WORK/err.txt"; then
  pass "$name"
else
  echo "exit $status" >>"$WORK/err.txt"
  fail "$name" "$WORK/err.txt"
fi

# 8b. A capability the client does not declare: the server's -32021 on one line.
name="missing capability: the server's -32021 on one line"
"$SAGA" call --without sampling --answers "$WORK/answers.json" "$DEPLOY_URL" complex_tool initial_arg=x \
  >"$WORK/out.txt" 2>"$WORK/err.txt"
status=$?
if [ $status -eq 2 ] && [ "$(wc -l <"$WORK/err.txt")" -eq 1 ] && grep -qF -- "-32021" "$WORK/err.txt" &&
  grep -qF "sampling" "$WORK/err.txt"; then
  pass "$name"
else
  echo "exit $status" >>"$WORK/err.txt"
  fail "$name" "$WORK/err.txt"
fi

# 9. saga inspect on a real token from a round, with and without the right key, naming its
#    tool, version and suspension point from the example's layout file, and what it
#    saves as the code names it (no name the macro keeps for itself).
name="saga inspect: a real token's header and point"
cat >"$WORK/partial.json" <<'EOF'
{"elicit-1": {"target": "production"}}
EOF
"$SAGA" call --show-state --answers "$WORK/partial.json" "$DEPLOY_URL" complex_tool initial_arg=x \
  >"$WORK/out.txt" 2>&1
token="$(sed -n 's/^← requestState \(.*\)$/\1/p' "$WORK/out.txt" | tail -n1)"
if [ -n "$token" ] &&
  SAGA_KEYS="$KEY" "$SAGA" inspect --layout examples/layouts/deploy.layout "$token" >"$WORK/inspect.txt" 2>&1 &&
  grep -q "^version      0x50" "$WORK/inspect.txt" &&
  grep -q "^point        [0-9a-f]\{16\}: tool complex_tool, version 0, point AfterSampleVerdict" "$WORK/inspect.txt" &&
  grep -q '^             saves        { target: "Target" { target: str } }$' "$WORK/inspect.txt" &&
  grep -q "header 33, ciphertext [0-9]*, tag 16" "$WORK/inspect.txt" &&
  grep -q "is in SAGA_KEYS" "$WORK/inspect.txt" &&
  SAGA_KEYS="$OTHER_KEY" "$SAGA" inspect "$token" |
  grep -q "does not open"; then
  pass "$name"
else
  cat "$WORK/out.txt" >>"$WORK/inspect.txt" 2>/dev/null
  fail "$name" "$WORK/inspect.txt"
fi

# 10. The example's --inspect decodes the same token's state with the call's arguments
#     (the suspension's variant and its saved locals, with the tool's own types),
#     and refuses it with other arguments (the token is bound to them).
name="deploy --inspect TOKEN --arguments JSON"
if [ -n "$token" ] &&
  SAGA_KEYS="$KEY" "$EXAMPLES/deploy" --inspect "$token" --arguments '{"initial_arg":"x"}' \
    >"$WORK/state.txt" 2>&1 &&
  grep -qF '"tool": "complex_tool"' "$WORK/state.txt" &&
  grep -qF '"key": "sample-2"' "$WORK/state.txt" &&
  grep -qF "Is deploying to 'production' safe right now?" "$WORK/state.txt" &&
  grep -qF '"restated": true' "$WORK/state.txt" &&
  tr -d ' \n' <"$WORK/state.txt" | grep -qF '"state":{"AfterSampleVerdict":{"target":{"target":"production"}}}' &&
  ! SAGA_KEYS="$KEY" "$EXAMPLES/deploy" --inspect "$token" --arguments '{"initial_arg":"y"}' \
    >/dev/null 2>&1; then
  pass "$name"
else fail "$name" "$WORK/state.txt"; fi

# 11. --task: approve_migration becomes a task, asks its approval (input_required) after
#     its first checkpoint, and is answered by typing; tasks/update, then the result.
name="tmux: --task, a task's form typed by hand"
tmux_start "$SAGA call --task $MIGRATE_URL approve_migration tables=3"
if ! wait_for " created: working (polling tasks/get every 500 ms)"; then scenario_failed "$name" "the task created"
elif ! wait_for ": input_required"; then scenario_failed "$name" "input_required"
else
  # A yes-or-no form (one required bool) is asked as its one question.
  if ! wait_for "approve:"; then scenario_failed "$name" "approve:"
  elif screen | grep -qF "Answer this form?"; then scenario_failed "$name" "approve: alone, no \"Answer this form?\""
  else
    type_line "y"
    if wait_for "EXIT=0" && screen | grep -qF "Migrate 3 tables?" &&
      screen | grep -q "^→ tasks/update [0-9a-f]\{32\} elicit-1" &&
      screen | grep -q "^← task [0-9a-f]\{32\}: completed" &&
      screen | grep -qF "── result of task " && screen | grep -qx "3 tables approved"; then
      pass "$name"
      screen | sed '/^$/d' >"$WORK/task-screen.txt"
    else scenario_failed "$name" "tasks/update, completed, the result and EXIT=0"; fi
  fi
fi

# 11b. Ctrl-C while a long task works: tasks/cancel, exit 130.
name="tmux: --task, Ctrl-C cancels the task"
tmux_start "$SAGA call --task $MIGRATE_URL migrate tables=600 millis_per_table=100"
if ! wait_for " created: working"; then scenario_failed "$name" "the task created"
else
  sleep 0.5
  tmux -L "$SOCKET" send-keys -t "$SESSION" C-c
  if wait_for "EXIT=130" && screen | grep -q "saga: interrupted: task [0-9a-f]\{32\} cancelled (tasks/cancel sent)$" &&
    ! screen | grep -qF "migrated 600 tables"; then
    pass "$name"
  else scenario_failed "$name" "cancelled (tasks/cancel sent), EXIT=130"; fi
fi

# 11c. A task's progress (cx.progress) is its status message: shown as the task works.
name="tmux: --task, a task's progress shown as it works"
tmux_start "$SAGA call --task $MIGRATE_URL migrate tables=3 millis_per_table=700"
if ! wait_for " created: working"; then scenario_failed "$name" "the task created"
elif wait_for "working — 1/3 table 0" && wait_for "working — 2/3 table 1" &&
  wait_for "EXIT=0" && screen | grep -q "^← task [0-9a-f]\{32\}: completed" &&
  screen | grep -qx "migrated 3 tables: \[0, 1, 2\]"; then
  pass "$name"
else scenario_failed "$name" "working — 1/3 table 0, working — 2/3 table 1, completed, EXIT=0"; fi

# 12. --answers with an answer outside its form (a duration above 240): the server asks
#     again with the reason, and saga stops at once, showing it, instead of answering the
#     same thing a thousand times.
name="tmux: --answers re-asked, stopped with the server's reason"
cat >"$WORK/meeting.json" <<'EOF3'
{"meeting": {"title": "Planning", "duration": 300, "room": "Aurora"}, "confirm": true}
EOF3
tmux_start "$SAGA call --answers $WORK/meeting.json $MEETING_URL book_meeting organiser=Ada"
if wait_for "EXIT=2" && screen | grep -qF "[meeting] asked again: the server did not accept the answer from the answers file" &&
  screen | grep -qF "Your last answer was not accepted: \`duration\` is above the maximum 240." &&
  screen | grep -qF 'saga: error: the server asked "meeting" again' &&
  [ "$(screen | grep -c '^── round ')" -eq 2 ]; then
  pass "$name"
else scenario_failed "$name" "the reason, two rounds, EXIT=2"; fi

# 13. The form's fields are asked in the order the tool declares them (title, duration,
#     room, notes), not sorted; an answer above the maximum is refused on the spot.
name="tmux: a form's fields in declared order"
tmux_start "$SAGA call $MEETING_URL book_meeting organiser=Ada"
if ! wait_for "Answer this form?"; then scenario_failed "$name" "Answer this form?"
else
  key Enter
  if ! wait_for "? title:"; then scenario_failed "$name" "title: first"
  elif screen | grep -qE "duration:|room:|notes:"; then scenario_failed "$name" "title: alone, before the others"
  else
    type_line "Planning"
    if ! wait_for "? duration:"; then scenario_failed "$name" "duration: second"
    else
      type_line "300"
      if ! wait_for "at most 240"; then scenario_failed "$name" "300 refused: at most 240"
      else
        key BSpace; key BSpace; key BSpace
        type_line "45"
        if ! wait_for "? room:"; then scenario_failed "$name" "room: third"
        else
          key Enter
          if ! wait_for "? notes:"; then scenario_failed "$name" "notes: fourth"
          else
            key Enter
            if ! wait_for "Book Planning (45 min) in Aurora for Ada?"; then scenario_failed "$name" "the confirmation"
            else
              # A one-field yes-or-no form is asked once: its value, no "Answer this form?".
              if ! wait_for "value:"; then scenario_failed "$name" "value:"
              elif [ "$(screen | grep -c 'Answer this form?')" != 1 ]; then scenario_failed "$name" "no second \"Answer this form?\" for the yes-or-no confirmation"
              else
                type_line "y"
                order="$(screen | grep -nE '^> (title|duration|room|notes):' | cut -d: -f2- | sed 's/^> \([a-z]*\):.*/\1/' | tr '\n' ' ')"
                if wait_for "EXIT=0" && screen | grep -qx "Booked Planning (45 min) in Aurora for Ada." &&
                  [ "$order" = "title duration room notes " ]; then
                  pass "$name"
                else scenario_failed "$name" "fields in the order title duration room notes (got: $order), the booking, EXIT=0"; fi
              fi
            fi
          fi
        fi
      fi
    fi
  fi
fi

# 14. saga graph: the deploy saga's diagram (Mermaid) from the example itself
#     (`cargo run -p saga-workspace --example deploy -- --graph`), and the same text from the running
#     server's tools/list _meta.
name="tmux: saga graph --example deploy -p saga-workspace complex_tool"
tmux_start "$SAGA graph --example deploy -p saga-workspace complex_tool"
if wait_for "EXIT=0" 120 && screen | grep -qx "stateDiagram-v2" &&
  screen | grep -qF '    AfterElicitTarget : "Please provide the deployment target:"' &&
  screen | grep -qF '    AfterSampleVerdict --> Return1 : if !verdict.text().starts_with("Yes")' &&
  screen | grep -qx "    Failed --> \[\*\]" &&
  [ "$("$SAGA" graph "$DEPLOY_URL" complex_tool)" = "$("$SAGA" graph --example deploy -p saga-workspace complex_tool)" ]; then
  pass "$name"
else scenario_failed "$name" "the diagram's states and edges, EXIT=0, the same over HTTP"; fi

# 15. saga graph --out FILE writes the same text to FILE; --svg FILE is refused (exit 2)
#     with the two commands that draw it, the first of which is tried as written.
name="saga graph --out FILE; --svg FILE refused with a command that works"
rm -f "$WORK/deploy.mmd" "$WORK/deploy.svg"
svg_err=$("$SAGA" graph --svg "$WORK/deploy.svg" "$DEPLOY_URL" complex_tool 2>&1 >/dev/null); svg_status=$?
advised=$(printf '%s\n' "$svg_err" | grep -o '`saga graph --out [^`]*`' | tr -d '`' | head -1)
if [ "$svg_status" -eq 2 ] && [ ! -e "$WORK/deploy.svg" ] && [ -n "$advised" ] &&
  printf '%s\n' "$svg_err" | grep -qF "npx @mermaid-js/mermaid-cli -i $WORK/deploy.mmd -o $WORK/deploy.svg" &&
  "$SAGA" ${advised#saga } 2>/dev/null &&
  [ "$(cat "$WORK/deploy.mmd")" = "$("$SAGA" graph "$DEPLOY_URL" complex_tool)" ]; then
  pass "$name"
else scenario_failed "$name" "exit 2 and no file for --svg, its advised --out writes the diagram: $svg_err"; fi

if [ -f "$WORK/deploy-screen.txt" ]; then
  echo "== the screen of the deploy run"
  cat "$WORK/deploy-screen.txt"
fi
if [ -f "$WORK/task-screen.txt" ]; then
  echo "== the screen of the --task run"
  cat "$WORK/task-screen.txt"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
